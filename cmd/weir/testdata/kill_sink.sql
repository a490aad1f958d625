-- The query of kill_sink_test.go: SUM and COUNT per key over a bounded,
-- rate limited sequence into an exactly-once filesystem sink written as
-- Debezium JSON, with checkpoints every 100 ms and no restart strategy (the
-- test restarts the process itself). Its constants are those of
-- kill_sink_test.go (sinkRows, sinkKeys); the test edits the parallelism
-- line to resume at another parallelism. Every folder is relative to the
-- working folder of the run.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';

CREATE TABLE ev (
  id BIGINT
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '0',
  'fields.id.end' = '199999',
  'rows-per-second' = '60000'
);

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO sums SELECT id % 50000, SUM(id), COUNT(*) FROM ev GROUP BY id % 50000;
