-- A grouped aggregate over a CSV file, with WHERE, HAVING, CASE and string
-- functions. Run:  go run ./cmd/weir run examples/orders_by_customer.sql
-- The input file is bounded, so the job ends by itself once it has read it.

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

CREATE TABLE report (
  customer    STRING,
  orders      BIGINT,
  total       DOUBLE,
  biggest     DOUBLE,
  size_class  STRING
) WITH (
  'connector' = 'print',
  'print-identifier' = 'report',
  'sink.parallelism' = '1'
);

INSERT INTO report
SELECT UPPER(customer) AS customer,
       COUNT(*) AS orders,
       SUM(amount) AS total,
       MAX(amount) AS biggest,
       CASE WHEN SUM(amount) >= 50 THEN 'large' ELSE 'small' END AS size_class
FROM orders
WHERE amount > 5
GROUP BY UPPER(customer)
HAVING COUNT(*) >= 1;
