-- The query of TestWindowJoinRandomKills (kill_join_test.go): a window
-- join of two sequences in 100 ms tumbling windows on id % 5000 (so id
-- meets only id), summed per key into the exactly-once filesystem sink.
-- The constants are kill_interval.sql's; the test copies it as
-- kill_sink.sql (the job's name) and edits the parallelism line.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';

CREATE TABLE ev (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '0.05' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '19999', 'rows-per-second' = '2000');
CREATE TABLE ev2 (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '0.05' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '19999', 'rows-per-second' = '2000');

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO sums
SELECT a.id % 5000, SUM(a.id), COUNT(*)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '0.1' SECOND)) AS a
JOIN TABLE(TUMBLE(TABLE ev2, DESCRIPTOR(ts), INTERVAL '0.1' SECOND)) AS b
  ON a.id % 5000 = b.id % 5000 AND a.window_start = b.window_start AND a.window_end = b.window_end
GROUP BY a.id % 5000;
