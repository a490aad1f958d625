-- An interval join: each order matched with its payments made within
-- 10 minutes after it. Run:
--   go run ./cmd/weir run examples/join_interval.sql
--
-- The time bound between the two rowtimes (p.ts BETWEEN o.ts AND o.ts +
-- INTERVAL '10' MINUTE) makes it an interval join (EXPLAIN shows
-- IntervalJoin with its windowBounds): each side keeps its rows by time,
-- only as long as a row of the other side can still match them, and an
-- event-time timer drops them once the watermark passes. So the state
-- stays bounded without a TTL, and the output is insert-only: the LEFT
-- JOIN emits an order without a payment, NULL-padded, once its 10 minutes
-- are over (here at the end of the input, whose +inf watermark closes
-- every interval). A row that comes behind the watermark is late: it is
-- dropped and counted ("dropped" in the job's summary).
--
-- The output keeps the time attributes of both inputs (DESCRIBE a view of
-- the join to see them).

SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE orders (
  id  BIGINT,
  -- order n at n * 3 minutes past midnight, 2026-01-01 UTC
  ts AS TO_TIMESTAMP_LTZ(1767225600000 + id * 180000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20'
);

CREATE TABLE payments (
  order_id  BIGINT,
  -- every third order is paid 4 minutes after it, every fifth 15 minutes
  -- after it (too late to match), the rest not at all
  ts AS TO_TIMESTAMP_LTZ(1767225600000 + order_id * 180000 + CASE WHEN order_id % 5 = 0 THEN 900000 ELSE 240000 END, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'datagen',
  'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '20'
);

CREATE TEMPORARY VIEW paid AS
SELECT o.id, o.ts AS ordered, p.ts AS paid
FROM orders o LEFT JOIN payments p
  ON o.id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '10' MINUTE
WHERE o.id % 3 = 0 OR o.id % 5 = 0;

DESCRIBE paid;

CREATE TABLE out (id BIGINT, ordered TIMESTAMP_LTZ(3), paid TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');

EXPLAIN INSERT INTO out SELECT * FROM paid;
INSERT INTO out SELECT * FROM paid;
