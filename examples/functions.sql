-- The functions a query can call, then every aggregate at work.
-- Run:  go run ./cmd/weir run examples/functions.sql
-- (or `go run ./cmd/weir -f examples/functions.sql` for SHOW FUNCTIONS as a table)
-- SHOW FUNCTIONS lists each function, aggregate or scalar, and an
-- aggregate's call forms. The input is bounded, so the job ends by itself.

SHOW FUNCTIONS;

SET 'parallelism.default' = '2';

CREATE TABLE nums (n BIGINT) WITH (
  'connector' = 'datagen',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '10'
);

CREATE TABLE stats (
  parity STRING, c BIGINT, distinct_mod3 BIGINT, s BIGINT, a BIGINT, lo BIGINT, hi BIGINT
) WITH ('connector' = 'print');

-- Odd: 1 3 5 7 9 (count 5, sum 25, avg 5, three values mod 3).
-- Even: 2 4 6 8 10 (count 5, sum 30, avg 6).
INSERT INTO stats
SELECT CASE WHEN n % 2 = 0 THEN 'even' ELSE 'odd' END,
       COUNT(*), COUNT(DISTINCT n % 3), SUM(n), AVG(n), MIN(n), MAX(n)
FROM nums
GROUP BY CASE WHEN n % 2 = 0 THEN 'even' ELSE 'odd' END;

-- The statistical, ordered and boolean aggregates, and FILTER.
-- Odd: 1 3 5 7 9 (population variance 8, sample variance 10).
-- Even: 2 4 6 8 10 (the same spreads); LISTAGG joins in arrival order,
-- which at parallelism 2 need not be the order of n.
CREATE TABLE more_stats (
  parity STRING, var_pop DOUBLE, var_samp DOUBLE, stddev_pop DOUBLE,
  firsts BIGINT, lasts BIGINT, listed STRING, all_small BOOLEAN, some_big BOOLEAN,
  big_count BIGINT
) WITH ('connector' = 'print');

INSERT INTO more_stats
SELECT CASE WHEN n % 2 = 0 THEN 'even' ELSE 'odd' END,
       VAR_POP(CAST(n AS DOUBLE)), VAR_SAMP(CAST(n AS DOUBLE)), STDDEV_POP(CAST(n AS DOUBLE)),
       FIRST_VALUE(n), LAST_VALUE(n), LISTAGG(CAST(n AS STRING), ' '),
       BOOL_AND(n < 10), BOOL_OR(n > 8),
       COUNT(*) FILTER (WHERE n > 5)
FROM nums
GROUP BY CASE WHEN n % 2 = 0 THEN 'even' ELSE 'odd' END;
