-- GROUPING SETS, ROLLUP and CUBE: subtotals per customer and category,
-- per customer, and a grand total in one query, with GROUPING() telling a
-- subtotal's NULL apart from a NULL key; then the same over 1-hour TUMBLE
-- windows, and the rows of a window TVF without aggregation.
-- Run:  go run ./cmd/weir run examples/grouping_sets.sql
-- The input file is bounded, so the job ends by itself once it has read it.

SET 'parallelism.default' = '2';

CREATE TABLE orders (
  order_id  BIGINT,
  customer  STRING,
  category  STRING,
  amount    DOUBLE,
  ts        TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/orders.csv',
  'format' = 'csv'
);

CREATE TABLE subtotals (
  customer  STRING,
  category  STRING,
  level     STRING,
  orders    BIGINT,
  total     DOUBLE
) WITH ('connector' = 'print', 'print-identifier' = 'rollup', 'sink.parallelism' = '1');

CREATE TABLE hourly (
  window_start  TIMESTAMP(3),
  category      STRING,
  is_total      BIGINT,
  orders        BIGINT
) WITH ('connector' = 'print', 'print-identifier' = 'hourly', 'sink.parallelism' = '1');

CREATE TABLE windowed_rows (
  order_id      BIGINT,
  window_start  TIMESTAMP(3),
  window_end    TIMESTAMP(3)
) WITH ('connector' = 'print', 'print-identifier' = 'rows', 'sink.parallelism' = '1');

-- ROLLUP (customer, category) = GROUPING SETS ((customer, category),
-- (customer), ()). The result updates as rows arrive (a GROUP BY).
INSERT INTO subtotals
SELECT customer, category,
       CASE GROUPING_ID(customer, category) WHEN 0 THEN 'detail' WHEN 1 THEN 'customer' ELSE 'all' END,
       COUNT(*), SUM(amount)
FROM orders
GROUP BY ROLLUP (customer, category);

-- Per hour: orders per category and the hour's total, each printed once
-- when the watermark passes the hour.
INSERT INTO hourly
SELECT window_start, category, GROUPING(category), COUNT(*)
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' HOUR))
GROUP BY window_start, window_end, GROUPING SETS ((category), ());

-- A window TVF's rows as they are: each order with its 30-minute HOP
-- windows (one row per window).
INSERT INTO windowed_rows
SELECT order_id, window_start, window_end
FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '15' MINUTE, INTERVAL '30' MINUTE));

-- A composite column: ROLLUP ((customer, category)) keeps or leaves out
-- the pair as one, so there are the per-pair counts and the grand total
-- (no per-customer subtotal). GROUP_ID() numbers repeats of a grouping
-- set (here none: 0).
CREATE TABLE pairs (customer STRING, category STRING, dup BIGINT, orders BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'pairs', 'sink.parallelism' = '1');
INSERT INTO pairs
SELECT customer, category, GROUP_ID(), COUNT(*) FROM orders GROUP BY ROLLUP ((customer, category));
