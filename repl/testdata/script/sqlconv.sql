-- VALUES, SELECT without FROM, WITH, INTERSECT/EXCEPT, ORDER BY, LIMIT,
-- CREATE TABLE LIKE, ALTER TABLE, SHOW VIEWS, statement sets.
SET 'parallelism.default' = '1';
VALUES (1, 'a'), (2, 'b');
SELECT 1 + 1 AS two, UPPER('x') AS x;
WITH nums AS (SELECT * FROM (VALUES (3), (1), (2), (3)) AS t(n))
SELECT n FROM nums ORDER BY n DESC LIMIT 2;
SELECT n FROM (VALUES (1), (2), (3)) AS l(n) INTERSECT SELECT m FROM (VALUES (2), (3), (4)) AS r(m);
SELECT n FROM (VALUES (1), (2), (3)) AS l(n) EXCEPT SELECT m FROM (VALUES (2), (3), (4)) AS r(m);
CREATE TABLE base (id BIGINT, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE copy WITH ('number-of-rows' = '3') LIKE base (EXCLUDING WATERMARKS);
SHOW CREATE TABLE copy;
DESCRIBE base;
ALTER TABLE copy SET ('number-of-rows' = '4');
SELECT COUNT(*) AS c FROM copy;
CREATE VIEW ids AS SELECT id FROM base;
SHOW VIEWS;
SHOW CREATE VIEW ids;
CREATE TABLE out (n INT, s STRING) WITH ('connector' = 'print');
BEGIN STATEMENT SET;
INSERT INTO out VALUES (7, 'seven'), (8, 'eight');
END;
