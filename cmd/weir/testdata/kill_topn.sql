-- The query of kill_topn_test.go: the top 3 rows per key (ROW_NUMBER,
-- rank in the output) over a bounded, rate limited sequence into an
-- exactly-once filesystem sink written as Debezium JSON, with checkpoints
-- every 100 ms and no restart strategy (the test restarts the process).
-- v = id * 7919 % 10007 is distinct for ids below 10007, so the answer
-- has no ties. Constants: topnRows and topnKeys of kill_topn_test.go.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'restart-strategy.type' = 'none';

CREATE TABLE ev (
  id BIGINT
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '0',
  'fields.id.end' = '9999',
  'rows-per-second' = '3000'
);

CREATE TABLE top3 (k BIGINT, v BIGINT, rn BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO top3
SELECT k, v, rn FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn
  FROM (SELECT id % 100 AS k, id * 7919 % 10007 AS v FROM ev))
WHERE rn <= 3;
