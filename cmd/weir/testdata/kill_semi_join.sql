-- The query of TestSemiJoinRandomKills (kill_join_test.go): a semi join
-- (IN) of two sequences, summed per key into the exactly-once filesystem
-- sink. The constants are kill_interval.sql's; the test copies it as
-- kill_sink.sql (the job's name) and edits the parallelism line.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';

CREATE TABLE ev (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '19999', 'rows-per-second' = '2000');
CREATE TABLE ev2 (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '19999', 'rows-per-second' = '2000');

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO sums
SELECT id % 5000, SUM(id), COUNT(*)
FROM ev
WHERE id IN (SELECT id FROM ev2)
GROUP BY id % 5000;
