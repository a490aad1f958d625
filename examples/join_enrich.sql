-- Enrichment joins: orders joined with a customer table on the customer's
-- name, the classic "dimension" join. Run:
--   go run ./cmd/weir run examples/join_enrich.sql
--
-- The customers table has a PRIMARY KEY that is the join key, so the join
-- keeps one customer row per key (EXPLAIN shows
-- rightInputSpec=[JoinKeyContainsUniqueKey]); the orders side keeps its
-- rows with counts (NoUniqueKey). Both sides are kept while both inputs
-- run; once one input ends (a bounded table such as this customers file),
-- the join drops the other side's rows and keeps none after, so an
-- unbounded stream enriched by a bounded table keeps only the table.
-- Between two unbounded streams bound them with
-- SET 'table.exec.state.ttl' = '1 h'.
--
-- The LEFT JOIN keeps orders of unknown customers, NULL-padded. The
-- padded row is emitted at once and retracted (-D) if the customer
-- arrives later, so the print sink shows the changelog.

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

CREATE TABLE enriched (
  order_id  BIGINT,
  customer  STRING,
  tier      STRING,
  city      STRING,
  amount    DOUBLE
) WITH ('connector' = 'print');

CREATE TABLE spend_by_tier (
  tier   STRING,
  total  DOUBLE
) WITH ('connector' = 'print');

EXPLAIN INSERT INTO enriched
SELECT o.order_id, o.customer, c.tier, c.city, o.amount
FROM orders AS o LEFT JOIN customers AS c ON o.customer = c.name;

INSERT INTO enriched
SELECT o.order_id, o.customer, c.tier, c.city, o.amount
FROM orders AS o LEFT JOIN customers AS c ON o.customer = c.name;

-- The comma form with the equality in WHERE, and an aggregate over the join.
INSERT INTO spend_by_tier
SELECT c.tier, SUM(o.amount)
FROM orders o, customers c
WHERE o.customer = c.name AND o.amount > 10
GROUP BY c.tier;
