-- The query of kill_test.go: SUM and COUNT per key over a bounded, rate
-- limited sequence, with checkpoints every 100 ms and no restart strategy
-- (the test restarts the process itself). Its constants are those of
-- kill_test.go (killRows, killKeys); the checkpoint folder is relative to
-- the working folder of the run.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'none';

CREATE TABLE ev (
  id BIGINT
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '0',
  'fields.id.end' = '299999',
  'rows-per-second' = '90000'
);

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'print');

INSERT INTO sums SELECT id % 100000, SUM(id), COUNT(*) FROM ev GROUP BY id % 100000;
