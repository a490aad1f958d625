SHOW TABLES;
CREATE TABLE t (
  n BIGINT,
  m BIGINT,,
) WITH ('connector' = 'datagen');
