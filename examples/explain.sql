-- Show how a query is planned: logical plan, physical plan with changelog
-- modes, and the job graph (chained operators, parallelism, exchanges).
-- Run:  go run ./cmd/weir explain examples/explain.sql
-- (or `weir run` it: EXPLAIN statements print their plan and run nothing).

SET 'parallelism.default' = '4';

CREATE TABLE events (
  k   INT,
  v   BIGINT
) WITH ('connector' = 'datagen', 'number-of-rows' = '1000');

CREATE TABLE out_table (k INT, total BIGINT, n BIGINT) WITH ('connector' = 'blackhole');

EXPLAIN
INSERT INTO out_table
SELECT k, SUM(v), COUNT(*) FROM events WHERE v > 0 GROUP BY k;
