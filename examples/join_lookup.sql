-- A lookup join (a processing-time temporal join): each order enriched
-- with its customer's tier and city from a CSV file, as Nexmark q13 joins
-- bids with a side input. Run:
--   go run ./cmd/weir run examples/join_lookup.sql
--
-- FOR SYSTEM_TIME AS OF o.proc_time, a PROCTIME() column, makes it a
-- lookup join (EXPLAIN shows LookupJoin): each subtask loads the whole
-- customers file into memory, keyed by the join key, and joins every order
-- on arrival with the rows there are then. Nothing of the table is kept
-- in checkpoints (it is loaded again after a restore); the file is read
-- again every 'lookup.full-cache.periodic-reload.interval' (or
-- 'lookup.join.cache.ttl', default 1 h), so edits to it show in later
-- rows. The LEFT JOIN keeps the orders of dave and erin, who are not in
-- the file, NULL-padded. The output is insert-only.

SET 'parallelism.default' = '2';

CREATE TABLE orders (
  order_id   BIGINT,
  customer   STRING,
  category   STRING,
  amount     DOUBLE,
  ts         TIMESTAMP(3),
  proc_time  AS PROCTIME()
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/orders.csv',
  'format' = 'csv'
);

CREATE TABLE customers (
  name  STRING,
  tier  STRING,
  city  STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/customers.csv',
  'format' = 'csv',
  'lookup.cache' = 'FULL',
  'lookup.full-cache.periodic-reload.interval' = '10 min'
);

CREATE TABLE enriched (
  order_id  BIGINT,
  customer  STRING,
  amount    DOUBLE,
  tier      STRING,
  city      STRING
) WITH ('connector' = 'print');

EXPLAIN INSERT INTO enriched
SELECT o.order_id, o.customer, o.amount, c.tier, c.city
FROM orders AS o
LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c
ON o.customer = c.name;

INSERT INTO enriched
SELECT o.order_id, o.customer, o.amount, c.tier, c.city
FROM orders AS o
LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c
ON o.customer = c.name;
