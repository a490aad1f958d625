-- A live TUMBLE count: clicks per user in 5-second event-time windows,
-- each window's row printed once, when the watermark passes its end.
-- Run:  go run ./cmd/weir run examples/window_tumble.sql   (Ctrl-C stops it)
-- or in the shell (go run ./cmd/weir): paste the SET and CREATE TABLE
-- statements, then the SELECT as a live query (its table grows by one row
-- per user every 5 seconds).

SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE clicks (
  n    BIGINT,
  usr  BIGINT,
  -- Event time: click n happens n * 50 ms after 2026-01-01 00:00 UTC.
  ts   AS TO_TIMESTAMP_LTZ(1767225600000 + n * 50, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '20',
  'fields.n.kind' = 'sequence',
  'fields.n.start' = '0',
  'fields.n.end' = '1000000',
  'fields.usr.min' = '1',
  'fields.usr.max' = '3'
);

CREATE TABLE per_window (usr BIGINT, window_start TIMESTAMP_LTZ(3), window_end TIMESTAMP_LTZ(3), clicks BIGINT)
WITH ('connector' = 'print');

-- EXPLAIN shows the window, its time attribute, the watermark and the
-- emit strategy.
EXPLAIN INSERT INTO per_window
SELECT usr, window_start, window_end, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY usr, window_start, window_end;

INSERT INTO per_window
SELECT usr, window_start, window_end, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY usr, window_start, window_end;
