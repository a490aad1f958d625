-- Reads the topic 'orders' (see produce.sql), keeps a total per customer
-- and writes it exactly-once to the upsert-kafka topic 'totals'. It reads
-- what is in the topic now and ends ('scan.bounded.mode'); drop that
-- option to keep it running, then kill it at any moment and continue with
--   go run ./cmd/weir run --restore latest examples/kafka/pipeline.sql
-- Running it again from the beginning is refused: 'totals' already holds
-- its committed output (--allow-duplicate-output writes it all again). The
-- offsets of each checkpoint are committed to the group 'weir-example' for
-- monitoring.
SET 'execution.checkpointing.interval' = '1 s';
SET 'parallelism.default' = '2';

CREATE TABLE orders (customer INT, amount INT) WITH (
  'connector' = 'kafka', 'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'weir-example',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json');

CREATE TABLE totals (customer INT, orders BIGINT, total INT, PRIMARY KEY (customer) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'totals',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'weir-example-totals');

INSERT INTO totals SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer;
