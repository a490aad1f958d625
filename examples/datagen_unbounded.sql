-- An unbounded stream of random events, counted per key, forever.
-- Run:  go run ./cmd/weir run examples/datagen_unbounded.sql
-- and stop it with Ctrl-C (it stops cleanly and reports what it read).

SET 'parallelism.default' = '2';

CREATE TABLE clicks (
  user_id INT,
  url     STRING,
  latency DOUBLE
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '5',
  'fields.user_id.min' = '1',
  'fields.user_id.max' = '3',
  'fields.url.length' = '8',
  'fields.latency.min' = '0',
  'fields.latency.max' = '100'
);

CREATE TABLE per_user (
  user_id  INT,
  clicks   BIGINT,
  avg_latency DOUBLE
) WITH ('connector' = 'print', 'sink.parallelism' = '1');

INSERT INTO per_user
SELECT user_id, COUNT(*), AVG(latency)
FROM clicks
GROUP BY user_id;
