-- The query of TestFinishedBranchKills (kill_finished_test.go): facts, a
-- rate-limited sequence that runs for about three seconds, joined with the
-- per-key MAX of dim, a sequence that ends within the first tenth of a
-- second. dim's GROUP BY is a vertex of its own that finishes when dim
-- ends, long before the job does; checkpoints must go on after it. Each
-- output row is one fact: k = s = its id, c = the MAX of its key (id %
-- 1000) over dim. The test copies it as kill_sink.sql (the job's name) and
-- edits the parallelism line to restore at another parallelism.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '1000';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';

CREATE TABLE facts (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '59999', 'rows-per-second' = '20000');
CREATE TABLE dim (n BIGINT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '0', 'fields.n.end' = '4999', 'rows-per-second' = '100000');

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO sums
SELECT f.id AS k, f.id AS s, d.m AS c
FROM facts AS f
JOIN (SELECT n % 1000 AS k, MAX(n) AS m FROM dim GROUP BY n % 1000) AS d
ON f.id % 1000 = d.k;
