-- Every kind of statement the shell runs, without a terminal.
SET 'parallelism.default' = '1';
SET 'sql-client.execution.result-mode' = 'table';

CREATE TABLE clicks (
  id    BIGINT,
  page  STRING,
  ms    INT
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '12',
  'fields.page.length' = '1',
  'fields.ms.min' = '1',
  'fields.ms.max' = '500'
);

CREATE TEMPORARY VIEW buckets AS
  SELECT id % 4 AS bucket, COUNT(*) AS n, SUM(id) AS total
  FROM clicks
  GROUP BY id % 4;

CREATE TABLE sink (bucket BIGINT, n BIGINT) WITH ('connector' = 'blackhole');

SHOW TABLES;
DESCRIBE clicks;
SHOW CREATE TABLE sink;

SELECT * FROM buckets;
SELECT id, id * 10 AS tens FROM clicks WHERE id > 9;
SELECT id FROM clicks WHERE id > 100;
SELECT bucket, n FROM buckets WHERE n > 100;

SELECT 'a;b' AS s, id FROM clicks WHERE id = 1; SELECT id FROM clicks WHERE id = 2;

INSERT INTO sink SELECT bucket, n FROM buckets;

RESET 'sql-client.execution.result-mode';
DROP TABLE sink;
SHOW TABLES;
