CREATE TABLE t (n BIGINT) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '3'
);
SELECT n,
       nn
FROM t;
SHOW TABLES;
