-- Window joins: two window TVFs joined on their windows. Run:
--   go run ./cmd/weir run examples/join_window.sql
--
-- Orders and page visits are cut into 15-minute tumbling windows; a window
-- join pairs the rows of one customer in the same window (ON the customer
-- AND L.window_start = R.window_start AND L.window_end = R.window_end).
-- Each window's rows are kept until the watermark passes the window's end,
-- then joined, emitted once (insert-only, so a CSV sink could take them)
-- and dropped: no TTL needed. A row that arrives after its window was
-- emitted is late: dropped and counted. The visits file is slightly out
-- of order (09:08:30 after 09:11), within the watermark's 5 minutes.
--
-- The LEFT JOIN keeps the orders with no visit in their window, NULL-padded;
-- the NOT EXISTS (an anti window join) lists only those.

SET 'parallelism.default' = '2';

CREATE TABLE orders (
  order_id  BIGINT,
  customer  STRING,
  category  STRING,
  amount    DOUBLE,
  ts        TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/orders.csv',
  'format' = 'csv'
);

CREATE TABLE visits (
  customer  STRING,
  page      STRING,
  ts        TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/visits.csv',
  'format' = 'csv'
);

CREATE TABLE visited_orders (
  order_id BIGINT, customer STRING, page STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3)
) WITH ('connector' = 'print');

CREATE TABLE unvisited_orders (
  order_id BIGINT, customer STRING, window_start TIMESTAMP(3)
) WITH ('connector' = 'print');

EXPLAIN INSERT INTO visited_orders
SELECT o.order_id, o.customer, v.page, o.window_start, o.window_end
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '15' MINUTE)) o
LEFT JOIN TABLE(TUMBLE(TABLE visits, DESCRIPTOR(ts), INTERVAL '15' MINUTE)) v
  ON o.customer = v.customer AND o.window_start = v.window_start AND o.window_end = v.window_end;

INSERT INTO visited_orders
SELECT o.order_id, o.customer, v.page, o.window_start, o.window_end
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '15' MINUTE)) o
LEFT JOIN TABLE(TUMBLE(TABLE visits, DESCRIPTOR(ts), INTERVAL '15' MINUTE)) v
  ON o.customer = v.customer AND o.window_start = v.window_start AND o.window_end = v.window_end;

INSERT INTO unvisited_orders
SELECT order_id, customer, window_start
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '15' MINUTE)) o
WHERE NOT EXISTS (
  SELECT 1 FROM TABLE(TUMBLE(TABLE visits, DESCRIPTOR(ts), INTERVAL '15' MINUTE)) v
  WHERE v.customer = o.customer AND v.window_start = o.window_start AND v.window_end = o.window_end);
