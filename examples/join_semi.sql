-- Semi and anti joins: IN, EXISTS, NOT IN and NOT EXISTS subqueries in
-- WHERE. Run:
--   go run ./cmd/weir run examples/join_semi.sql
--
-- Each subquery condition becomes a join that emits left rows only: a semi
-- join (IN, EXISTS) the rows that have a match, an anti join (NOT IN,
-- NOT EXISTS) those that have none. The correlated EXISTS below is keyed
-- by its equality c.name = o.customer (EXPLAIN shows keys=[customer =
-- name]). An anti join is updating even over insert-only inputs: an order
-- of a customer not read yet goes out at once and is retracted (-D) when
-- the customer arrives, so the print sink shows the changelog.

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

CREATE TABLE customers (
  name  STRING,
  tier  STRING,
  city  STRING,
  PRIMARY KEY (name) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/customers.csv',
  'format' = 'csv'
);

CREATE TABLE known_orders (order_id BIGINT, customer STRING, amount DOUBLE) WITH ('connector' = 'print');
CREATE TABLE unknown_orders (order_id BIGINT, customer STRING) WITH ('connector' = 'print');
CREATE TABLE big_spenders (name STRING, tier STRING) WITH ('connector' = 'print');

EXPLAIN INSERT INTO unknown_orders
SELECT order_id, customer FROM orders o
WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.name = o.customer);

-- Orders of known customers (a semi join).
INSERT INTO known_orders
SELECT order_id, customer, amount FROM orders
WHERE customer IN (SELECT name FROM customers);

-- Orders of unknown customers (a correlated anti join).
INSERT INTO unknown_orders
SELECT order_id, customer FROM orders o
WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.name = o.customer);

-- Customers who spent more than 50 in all: a semi join against a grouped
-- aggregate, whose rows update as the orders come in.
INSERT INTO big_spenders
SELECT name, tier FROM customers
WHERE name IN (SELECT customer FROM orders GROUP BY customer HAVING SUM(amount) > 50);
