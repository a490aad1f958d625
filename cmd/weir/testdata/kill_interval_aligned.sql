-- The query of TestAlignedIntervalJoinRandomKills (kill_join_test.go):
-- kill_interval.sql with its two sources at different rates (8,000 and
-- 2,000 rows a second) in one watermark alignment group (max drift 500 ms),
-- so that the faster one pauses: an interval join of two sequences on
-- id % 5000 within a 0 ms bound (so id meets only id), summed per key into
-- the exactly-once filesystem sink.
-- 20,000 rows a side over 5,000 keys (intervalRows, intervalKeys). The test copies
-- it as kill_sink.sql (the job's name) and edits the parallelism line.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';

CREATE TABLE ev (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '19999', 'rows-per-second' = '8000',
  'scan.watermark.alignment.group' = 'ev', 'scan.watermark.alignment.max-drift' = '500 ms');
CREATE TABLE ev2 (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '19999', 'rows-per-second' = '2000',
  'scan.watermark.alignment.group' = 'ev', 'scan.watermark.alignment.max-drift' = '500 ms');

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO sums
SELECT a.id % 5000, SUM(a.id), COUNT(*)
FROM ev AS a JOIN ev2 AS b
  ON a.id % 5000 = b.id % 5000 AND b.ts BETWEEN a.ts AND a.ts
GROUP BY a.id % 5000;
