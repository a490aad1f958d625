-- State TTL on a grouped aggregate: a group not written for
-- 'table.exec.state.ttl' expires, and its key's next row starts afresh
-- (+I with the count from 1 again), as in Flink.
-- Run:  go run ./cmd/weir run examples/state_ttl.sql   (about 8 seconds)
--
-- One row a second; key 'hot' comes every second, key 'cold' at rows 1
-- and 8 only. With a TTL of 3 s, 'hot' counts up to 6 (-U/+U pairs),
-- while 'cold' expires between its rows: it is inserted twice, each time
-- with count 1, and its first group is dropped without output. Remove the
-- SET of the TTL to see 'cold' reach 2.

SET 'parallelism.default' = '1';
SET 'table.exec.state.ttl' = '3 s';

CREATE TABLE ticks (n BIGINT) WITH (
  'connector' = 'datagen', 'rows-per-second' = '1',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '8');

CREATE TABLE counts (k STRING, c BIGINT) WITH ('connector' = 'print');

INSERT INTO counts
SELECT k, COUNT(*) FROM (
  SELECT CASE WHEN n = 1 OR n = 8 THEN 'cold' ELSE 'hot' END AS k FROM ticks
) GROUP BY k;
