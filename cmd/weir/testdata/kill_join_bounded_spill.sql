-- The query of TestJoinBoundedSpillRandomKills (kill_join_test.go):
-- kill_join_bounded.sql with a state budget of 64 KiB, so that the join's
-- sides spill before dim ends (the aggregate's rows of keys not in memory
-- kept blind, as deltas) and dim's end deletes what the store holds of
-- them.
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.savepoints.dir' = 'savepoints';
SET 'restart-strategy.type' = 'none';
SET 'state.cache.size' = '64kb';

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
