-- The worked example of DESIGN.md: two sources S1 and S2 each emit 1, 2, 3, ...
-- and a continuous query sums them by parity on two parallel subtasks.
-- Run:  go run ./cmd/weir run examples/parity_sum.sql
-- The output is the changelog of the result: +I for a new parity, then
-- -U (old sum) / +U (new sum) pairs as the sums grow. The last +U of each
-- parity is the final answer: odd 50 (2 x (1+3+5+7+9)), even 60 (2 x (2+4+6+8+10)).

SET 'parallelism.default' = '2';

CREATE TABLE s1 (
  n BIGINT
) WITH (
  'connector' = 'datagen',
  'fields.n.kind' = 'sequence',
  'fields.n.start' = '1',
  'fields.n.end' = '10',
  'rows-per-second' = '20'
);

CREATE TABLE s2 (
  n BIGINT
) WITH (
  'connector' = 'datagen',
  'fields.n.kind' = 'sequence',
  'fields.n.start' = '1',
  'fields.n.end' = '10',
  'rows-per-second' = '20'
);

CREATE TABLE sums (
  parity BIGINT,
  total  BIGINT
) WITH (
  'connector' = 'print',
  'sink.parallelism' = '1'
);

INSERT INTO sums
SELECT n % 2 AS parity, SUM(n) AS total
FROM (
  SELECT n FROM s1
  UNION ALL
  SELECT n FROM s2
)
GROUP BY n % 2;
