-- Writes 100,000 orders as JSON into the topic 'orders' of a local broker,
-- each record stamped with its event time (the metadata column ts: order n
-- at 2026-01-01 00:00:00 UTC + n * 10 ms, so 1,000 s of orders).
-- Terminal 1:  go run ./cmd/weir kafka serve
-- Terminal 2:  go run ./cmd/weir run examples/kafka/produce.sql
--              go run ./cmd/weir run examples/kafka/pipeline.sql
--              go run ./cmd/weir run examples/kafka/totals.sql
--              go run ./cmd/weir run examples/kafka/windows.sql
-- One writer into partition 0 ('fixed'), so that the timestamps ascend:
-- a source subtask counts a partition in its watermark from the
-- partition's first record on, so a topic whose partitions all hold old
-- records would make the rows of the partitions read later late for
-- windows.sql.
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
  'sink.partitioner' = 'fixed',
  'format' = 'json');

INSERT INTO orders SELECT customer, amount, TO_TIMESTAMP_LTZ(1767225600000 + n * 10, 3) FROM gen;
