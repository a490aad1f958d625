-- Prints the changelog of the upsert-kafka topic 'totals' (see
-- pipeline.sql) as a read-committed consumer sees it; Ctrl-C stops it.
CREATE TABLE totals (customer INT, orders BIGINT, total INT, PRIMARY KEY (customer) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'totals',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json', 'value.format' = 'json');

CREATE TABLE out (customer INT, orders BIGINT, total INT) WITH ('connector' = 'print');

INSERT INTO out SELECT * FROM totals;
