-- The query of kill_window_test.go: COUNT, SUM and MIN per key in 100 ms
-- TUMBLE windows over a bounded, rate limited sequence stamped id/10 ms,
-- into an exactly-once filesystem sink (CSV), with checkpoints every
-- 100 ms and no restart strategy (the test restarts the process itself).
-- The test edits the parallelism line to resume at another parallelism.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'none';
SET 'pipeline.auto-watermark-interval' = '20 ms';

CREATE TABLE ev (
  id BIGINT,
  k AS id % 97,
  ts AS TO_TIMESTAMP_LTZ(id / 10, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '0',
  'fields.id.end' = '119999',
  'rows-per-second' = '40000'
);

CREATE TABLE wins (k BIGINT, c BIGINT, s BIGINT, mn BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'csv'
);

INSERT INTO wins SELECT k, COUNT(*), SUM(id), MIN(id)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '0.1' SECOND))
GROUP BY k, window_start, window_end;
