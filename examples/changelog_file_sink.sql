-- An aggregate over an aggregate, written as a changelog file.
-- How many customers spent how many orders: the inner query counts orders per
-- customer (an updating result), the outer query counts customers per order
-- count, consuming the inner query's retractions (-U/+U) correctly.
-- Run:  go run ./cmd/weir run examples/changelog_file_sink.sql
-- Then: cat /tmp/weir-example-histogram/part-*
-- Each line is Debezium JSON: {"before":…,"after":…,"op":"c"|"u"|"d"}.
-- Running it again is refused while the folder holds this run's output (it
-- would write every change a second time): rm -r /tmp/weir-example-histogram
-- first, or add --allow-duplicate-output to append a second copy.

SET 'parallelism.default' = '2';

CREATE TABLE orders (
  order_id  BIGINT,
  customer  STRING,
  category  STRING,
  amount    DOUBLE,
  ts        TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/orders.csv',
  'format' = 'csv'
);

CREATE TABLE histogram (
  orders_per_customer BIGINT,
  customers           BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/weir-example-histogram',
  'format' = 'debezium-json'
);

INSERT INTO histogram
SELECT n, COUNT(*)
FROM (SELECT customer, COUNT(*) AS n FROM orders GROUP BY customer)
GROUP BY n;
