-- The query of TestJoinSpillRandomKills (kill_join_test.go): kill_join.sql
-- with a state budget of 64 KiB, so that the join's sides spill and the
-- rows of keys not in memory are kept blind (deltas merged at reads).
--
-- The query of TestJoinRandomKills (kill_join_test.go): the per-key SUM of
-- one sequence joined with the per-key COUNT of another, both updating,
-- into the exactly-once filesystem sink. Its result equals kill_sink.sql's
-- (the same constants), so the test reuses that test's answer and checks.
-- The test copies it as kill_sink.sql (the job's name) and edits the
-- parallelism line to restore at another parallelism.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';
SET 'state.cache.size' = '64kb';

CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '199999', 'rows-per-second' = '60000');
CREATE TABLE ev2 (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '199999', 'rows-per-second' = '60000');

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO sums
SELECT a.k, a.s, b.c
FROM (SELECT id % 50000 AS k, SUM(id) AS s FROM ev GROUP BY id % 50000) AS a
JOIN (SELECT id % 50000 AS k, COUNT(*) AS c FROM ev2 GROUP BY id % 50000) AS b
ON a.k = b.k;
