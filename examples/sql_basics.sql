-- SQL conveniences, all in one job: VALUES, SELECT without FROM, WITH,
-- INTERSECT and EXCEPT (also ALL), ORDER BY … LIMIT, OFFSET … FETCH, ORDER BY a rowtime,
-- CREATE TABLE … LIKE, ALTER TABLE … SET, a statement set, and the rows of a
-- processing-time window TVF.
--
--   go run ./cmd/weir run examples/sql_basics.sql
--
-- The queries also run on their own in the shell (go run ./cmd/weir), e.g.
--   SELECT 1 + 1 AS two;
--   SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(id, name);
--   SELECT * FROM nums LIMIT 5;            -- returns after 5 rows
-- and BEGIN STATEMENT SET; INSERT …; INSERT …; END; submits INSERTs as one job.
SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';

-- A bounded sequence; ALTER TABLE changes its options afterwards.
CREATE TABLE nums (n BIGINT, v AS n * 7 % 10) WITH (
  'connector' = 'datagen', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '100');
ALTER TABLE nums SET ('fields.n.end' = '20');

-- Event time from the sequence: one row a second.
CREATE TABLE ticks (n BIGINT, ts AS TO_TIMESTAMP_LTZ(n * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (
  'connector' = 'datagen', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '5');

-- Sinks: one declared in full, the others LIKE it with another prefix
-- (LIKE keeps the columns and, by default, overwrites the options given).
CREATE TABLE values_out (id INT, name STRING) WITH ('connector' = 'print', 'print-identifier' = 'values');
CREATE TABLE intersect_out WITH ('print-identifier' = 'intersect') LIKE values_out;
CREATE TABLE except_out WITH ('print-identifier' = 'except') LIKE values_out;
CREATE TABLE intersect_all_out WITH ('print-identifier' = 'intersect_all') LIKE values_out;
CREATE TABLE top3_out (n BIGINT, v BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'top3');
CREATE TABLE next3_out WITH ('print-identifier' = 'next3') LIKE top3_out;
CREATE TABLE sorted_out (n BIGINT, ts TIMESTAMP_LTZ(3)) WITH ('connector' = 'print', 'print-identifier' = 'sorted');

INSERT INTO values_out VALUES (1, 'one'), (2, 'two');
INSERT INTO values_out SELECT 3, UPPER('three');

-- WITH names the two inputs; INTERSECT and EXCEPT keep distinct rows.
INSERT INTO intersect_out
WITH l AS (SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (2, 'b'), (3, 'c')) AS t(id, name)),
     r AS (SELECT * FROM (VALUES (2, 'b'), (3, 'c'), (4, 'd')) AS t(id, name))
SELECT id, name FROM l INTERSECT SELECT id, name FROM r;

-- INTERSECT ALL keeps duplicates: (2, 'b') three times on the left and
-- twice on the right is in the result twice, (3, 'c') once.
INSERT INTO intersect_all_out
SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (2, 'b'), (2, 'b'), (3, 'c')) AS l(id, name)
INTERSECT ALL SELECT * FROM (VALUES (2, 'b'), (2, 'b'), (3, 'c'), (3, 'c')) AS r(id, name);

-- A statement set: its INSERTs run as one job (in a file they all do).
EXECUTE STATEMENT SET BEGIN
INSERT INTO except_out SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c')) AS l(id, name)
  EXCEPT SELECT * FROM (VALUES (2, 'b')) AS r(id, name);
-- The three largest v (bounded input: sorted, insert-only).
INSERT INTO top3_out SELECT n, v FROM nums ORDER BY v DESC, n LIMIT 3;
-- The next three: OFFSET skips the first rows, FETCH is LIMIT's standard form.
INSERT INTO next3_out SELECT n, v FROM nums ORDER BY v DESC, n OFFSET 3 ROWS FETCH NEXT 3 ROWS ONLY;
END;

-- Rows in event-time order, each emitted once the watermark passes it.
INSERT INTO sorted_out SELECT n, ts FROM ticks ORDER BY ts;

-- A processing-time window TVF's rows: each row with the 1-minute window
-- of the clock when it is read (window_start changes from run to run).
CREATE TABLE clock (n BIGINT, pt AS PROCTIME()) WITH (
  'connector' = 'datagen', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '3');
CREATE TABLE minutes_out (n BIGINT, window_start TIMESTAMP_LTZ(3)) WITH ('connector' = 'print', 'print-identifier' = 'minutes');
INSERT INTO minutes_out SELECT n, window_start FROM TABLE(TUMBLE(TABLE clock, DESCRIPTOR(pt), INTERVAL '1' MINUTE));
