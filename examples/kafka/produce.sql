-- Writes 100,000 orders as JSON into the topic 'orders' of a local broker,
-- each record stamped with its event time (the metadata column ts: order n
-- at 2026-01-01 00:00:00 UTC + n * 10 ms, so 1,000 s of orders).
-- Terminal 1:  go run ./cmd/weir kafka serve
-- Terminal 2:  go run ./cmd/weir run examples/kafka/produce.sql
--              go run ./cmd/weir run examples/kafka/pipeline.sql
--              go run ./cmd/weir run examples/kafka/totals.sql
--              go run ./cmd/weir run examples/kafka/windows.sql
-- Records without a key spread over the topic's partitions ('default'
-- partitioner: sticky batches), each partition's timestamps ascending;
-- windows.sql reads them back with no row late.
SET 'parallelism.default' = '1';

CREATE TABLE gen (n BIGINT, customer INT, amount INT) WITH (
  'connector' = 'datagen', 'rows-per-second' = '50000',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '99999',
  'fields.customer.min' = '1', 'fields.customer.max' = '5',
  'fields.amount.min' = '1', 'fields.amount.max' = '100');

CREATE TABLE orders (
  customer INT,
  amount INT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'  -- written as the record's timestamp
) WITH (
  'connector' = 'kafka', 'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json');

INSERT INTO orders SELECT customer, amount, TO_TIMESTAMP_LTZ(1767225600000 + n * 10, 3) FROM gen;
