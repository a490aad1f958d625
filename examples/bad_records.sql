-- Malformed input records: by default a bad record fails the job and names
-- the file, byte offset and line. With 'json.ignore-parse-errors' = 'true'
-- bad records are skipped and counted, and the count is reported at the end.
-- Run:  go run ./cmd/weir run examples/bad_records.sql
-- (remove the ignore option to see the error instead).

SET 'parallelism.default' = '1';

CREATE TABLE readings (
  sensor STRING,
  `value` DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/readings_bad.jsonl',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

CREATE TABLE totals (sensor STRING, total DOUBLE) WITH ('connector' = 'print');

INSERT INTO totals SELECT sensor, SUM(`value`) FROM readings GROUP BY sensor;
