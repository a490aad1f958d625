-- Writes 100,000 orders as JSON into the topic 'orders' of a local broker.
-- Terminal 1:  go run ./cmd/weir kafka serve
-- Terminal 2:  go run ./cmd/weir run examples/kafka/produce.sql
--              go run ./cmd/weir run examples/kafka/pipeline.sql
--              go run ./cmd/weir run examples/kafka/totals.sql
CREATE TABLE gen (customer INT, amount INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '100000', 'rows-per-second' = '50000',
  'fields.customer.min' = '1', 'fields.customer.max' = '5',
  'fields.amount.min' = '1', 'fields.amount.max' = '100');

CREATE TABLE orders (customer INT, amount INT) WITH (
  'connector' = 'kafka', 'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json');

INSERT INTO orders SELECT customer, amount FROM gen;
