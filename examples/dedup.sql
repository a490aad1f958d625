-- Deduplication: ROW_NUMBER() = 1 ordered by a time attribute.
-- Run:  go run ./cmd/weir run examples/dedup.sql
-- first_seen keeps the first reading of each sensor (ORDER BY pt ASC on
-- processing time): insert-only, one row per sensor, never updated.
-- last_seen keeps the latest reading (ORDER BY ts DESC on event time): a
-- +I for a sensor's first reading, then a -U/+U pair whenever a reading
-- with a later (or equal) event time arrives.
-- `weir explain examples/dedup.sql` shows Deduplicate(keep=[FirstRow] ...).

SET 'parallelism.default' = '2';

CREATE TABLE readings (
  n      BIGINT,
  sensor INT,
  temp   INT,
  ts     AS TO_TIMESTAMP_LTZ(1700000000000 + n * 1000, 3),
  pt     AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '12',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '12',
  'fields.sensor.min' = '1', 'fields.sensor.max' = '3',
  'fields.temp.min' = '10', 'fields.temp.max' = '30'
);

CREATE TABLE first_seen (sensor INT, n BIGINT, temp INT)
  WITH ('connector' = 'print', 'print-identifier' = 'first', 'sink.parallelism' = '1');
CREATE TABLE last_seen (sensor INT, n BIGINT, temp INT)
  WITH ('connector' = 'print', 'print-identifier' = 'last', 'sink.parallelism' = '1');

INSERT INTO first_seen
SELECT sensor, n, temp FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY sensor ORDER BY pt) AS rn FROM readings)
WHERE rn = 1;

INSERT INTO last_seen
SELECT sensor, n, temp FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY sensor ORDER BY ts DESC) AS rn FROM readings)
WHERE rn = 1;
