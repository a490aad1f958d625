-- A session in the shell, as a file: run it with
--   go run ./cmd/weir -f examples/shell_session.sql
-- or type the statements into `weir` one by one. Without a terminal the
-- results print in tableau mode: the final table of each bounded query.

-- One subtask, so that rows arrive (and print) in a stable order.
SET 'parallelism.default' = '1';

-- A bounded stream of 20 orders: ids 1..20, a customer 1..5, an amount.
CREATE TABLE orders (
  id       BIGINT,
  customer INT,
  amount   INT
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '20',
  'fields.customer.min' = '1',
  'fields.customer.max' = '5',
  'fields.amount.min' = '1',
  'fields.amount.max' = '100'
);

SHOW TABLES;
DESCRIBE orders;

-- A continuous aggregate: in the interactive shell its table updates in
-- place as orders arrive; here it prints once, when the input ends.
SELECT customer, COUNT(*) AS orders, SUM(amount) AS total
FROM orders
GROUP BY customer;

-- A view, and a query over it.
CREATE TEMPORARY VIEW big_orders AS
  SELECT id, customer, amount FROM orders WHERE amount >= 50;

SELECT customer, COUNT(*) AS big FROM big_orders GROUP BY customer HAVING COUNT(*) > 1;

-- An INSERT runs as a background job: the shell prints its id and goes on
-- (SHOW JOBS lists jobs, STOP JOB 'id' stops one). A script waits for its
-- jobs at the end.
CREATE TABLE big_spenders (customer INT, big BIGINT) WITH ('connector' = 'print');

INSERT INTO big_spenders
SELECT customer, COUNT(*) FROM big_orders GROUP BY customer;
