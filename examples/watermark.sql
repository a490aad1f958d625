-- Event time from a datagen sequence: a computed column, a watermark on it,
-- and CURRENT_WATERMARK on a live query.
-- Run:  go run ./cmd/weir run examples/watermark.sql   (Ctrl-C stops it)
-- or in the shell (go run ./cmd/weir): paste the SET and CREATE TABLE
-- statements, then run the SELECT in the last comment as a live query.

SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '200 ms';
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE events (
  n  BIGINT,
  -- Event time: row n happens n * 100 ms after 2026-01-01 00:00 UTC,
  -- except that every fourth row (n % 4 = 3) comes 1.5 s behind.
  ts AS TO_TIMESTAMP_LTZ(1767225600000 + n * 100 - n % 4 / 3 * 1500, 3),
  -- Processing time: when the source read the row.
  pt AS PROCTIME(),
  -- Rows may be up to 500 ms out of order: the watermark trails the
  -- largest event time by that much.
  WATERMARK FOR ts AS ts - INTERVAL '0.5' SECOND
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '10',
  'fields.n.kind' = 'sequence',
  'fields.n.start' = '1',
  'fields.n.end' = '100000'
);

-- ts is TIMESTAMP_LTZ(3) *ROWTIME*, pt TIMESTAMP_LTZ(3) *PROCTIME*.
DESCRIBE events;

CREATE TABLE progress (
  n    BIGINT,
  ts   TIMESTAMP_LTZ(3),
  wm   TIMESTAMP_LTZ(3),
  late BOOLEAN
) WITH ('connector' = 'print');

-- wm is NULL until the source's first watermark (200 ms in), then follows
-- the rows; late is TRUE for the rows behind it, here every fourth row
-- (WHERE ts > CURRENT_WATERMARK(ts) would drop them).
INSERT INTO progress
SELECT n, ts, CURRENT_WATERMARK(ts) AS wm, ts <= CURRENT_WATERMARK(ts) AS late
FROM events;

-- In the shell, as a live table:
--   SELECT n, DATE_FORMAT(ts, 'HH:mm:ss.SSS') AS event_time,
--          DATE_FORMAT(CURRENT_WATERMARK(ts), 'HH:mm:ss.SSS') AS watermark,
--          ts <= CURRENT_WATERMARK(ts) AS late
--   FROM events;
