-- Watermark alignment: two sources read at different speeds (in event
-- time) joined within 2 seconds. Run:
--   go run ./cmd/weir run examples/watermark_alignment.sql
--
-- 'fast' reads 2,000 rows a second, 'slow' 100, each row 1 s of event
-- time later than the one before. The join's watermark is the slower
-- source's, so without alignment the join would hold every row 'fast'
-- has read ahead of 'slow' (here all of them, at once) until 'slow'
-- catches up. With both tables in alignment group 'readings' and a max
-- drift of 5 s, 'fast' pauses whenever its watermark is more than 5 s
-- ahead of 'slow''s and goes on when 'slow' catches up: the join holds a
-- few seconds of rows, whatever the speeds. (Checkpoints and cancellation
-- go through a paused source.) The output is the same with or without.

SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE fast (
  id BIGINT,
  ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen', 'rows-per-second' = '2000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200',
  'scan.watermark.alignment.group' = 'readings',
  'scan.watermark.alignment.max-drift' = '5 s'
);

CREATE TABLE slow (
  id BIGINT,
  ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen', 'rows-per-second' = '100',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200',
  'scan.watermark.alignment.group' = 'readings',
  'scan.watermark.alignment.max-drift' = '5 s'
);

CREATE TABLE out (fast_id BIGINT, slow_id BIGINT, fast_ts TIMESTAMP_LTZ(3), slow_ts TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');

-- Every 20th fast row with the slow rows of its key (id % 10) in the 2
-- seconds before it: only the one of the same id.
INSERT INTO out
SELECT f.id, s.id, f.ts, s.ts
FROM fast f JOIN slow s
  ON f.id % 10 = s.id % 10 AND s.ts BETWEEN f.ts - INTERVAL '2' SECOND AND f.ts
WHERE f.id % 20 = 0;
