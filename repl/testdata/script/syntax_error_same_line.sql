CREATE TABLE t (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');

SHOW TABLES;  SELECT k k2 k3 FROM t;
