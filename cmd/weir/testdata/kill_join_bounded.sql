-- The query of TestJoinBoundedRandomKills (kill_join_test.go): the per-key
-- SUM of an updating aggregate joined with a bounded table, dim (a
-- sequence of 50,000 keys that ends after about half a second, while the
-- aggregate's input runs for over three): once dim has ended the join
-- drops the aggregate's rows and keeps none of them, so kills and restores
-- come before and after that end, and a restored dim ends again. Its
-- result equals kill_sink.sql's (the same constants; each key's count is
-- 4, sinkRows / sinkKeys), so the test reuses that test's answer and
-- checks. The test copies it as kill_sink.sql (the job's name) and edits
-- the parallelism line to restore at another parallelism.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';

CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '199999', 'rows-per-second' = '60000');
CREATE TABLE dim (k BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'datagen', 'fields.k.kind' = 'sequence',
  'fields.k.start' = '0', 'fields.k.end' = '49999', 'rows-per-second' = '100000');

CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'debezium-json'
);

INSERT INTO sums
SELECT a.k, a.s, d.c
FROM (SELECT id % 50000 AS k, SUM(id) AS s FROM ev GROUP BY id % 50000) AS a
JOIN (SELECT k, CAST(4 AS BIGINT) AS c FROM dim) AS d
ON a.k = d.k;
