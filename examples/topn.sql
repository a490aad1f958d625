-- Top-N: the 3 largest orders of each customer, kept up to date as
-- orders arrive (ROW_NUMBER in a subquery, filtered by rn <= 3).
-- Run:  go run ./cmd/weir run examples/topn.sql
-- The changelog shows each rank position change as a -U/+U pair.
-- `weir explain examples/topn.sql` shows the strategy: AppendFastStrategy
-- (the input is insert-only, so each customer keeps only its top 3 rows);
-- the second query ranks a GROUP BY result, whose rows update
-- (UpdateFastStrategy on the group key).

SET 'parallelism.default' = '2';

CREATE TABLE orders (
  id       BIGINT,
  customer INT,
  amount   INT
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '40',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '40',
  'fields.customer.min' = '1', 'fields.customer.max' = '3',
  'fields.amount.min' = '1', 'fields.amount.max' = '100'
);

CREATE TABLE top_orders (customer INT, rn BIGINT, id BIGINT, amount INT)
  WITH ('connector' = 'print', 'print-identifier' = 'top3', 'sink.parallelism' = '1');

CREATE TABLE top_customers (customer INT, total INT)
  WITH ('connector' = 'print', 'print-identifier' = 'best', 'sink.parallelism' = '1');

INSERT INTO top_orders
SELECT customer, rn, id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY customer ORDER BY amount DESC) AS rn
  FROM orders)
WHERE rn <= 3;

-- The best customer by total amount (a global Top-1 over an aggregate;
-- the rank column is not selected, so changes are -D/+I of whole rows).
INSERT INTO top_customers
SELECT customer, total FROM (
  SELECT customer, total, RANK() OVER (ORDER BY total DESC) AS r
  FROM (SELECT customer, SUM(amount) AS total FROM orders GROUP BY customer))
WHERE r = 1;
