-- OVER aggregates: a moving sum over each sensor's last 3 readings, and an
-- average over the last 10 seconds of event time, per reading.
-- Run:  go run ./cmd/weir run examples/over.sql
-- On event time each reading waits until the watermark passes its time
-- (here: 2 s behind the largest time read), then comes out with its
-- aggregates, in time order per sensor. A reading already behind the
-- watermark when it arrives is late: dropped, and counted on stderr.
-- `weir explain examples/over.sql` shows OverAggregate(partitionBy=[sensor],
-- orderBy=[ts ASC], window=[ROWS BETWEEN 2 PRECEDING AND CURRENT ROW], ...).

SET 'parallelism.default' = '2';

CREATE TABLE readings (
  n      BIGINT,
  sensor INT,
  temp   INT,
  ts     AS TO_TIMESTAMP_LTZ(1700000000000 + n * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '20',
  'fields.sensor.min' = '1', 'fields.sensor.max' = '2',
  'fields.temp.min' = '10', 'fields.temp.max' = '30'
);

CREATE TABLE last3 (sensor INT, n BIGINT, temp INT, sum3 INT, cnt3 BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'rows', 'sink.parallelism' = '1');
CREATE TABLE last10s (sensor INT, n BIGINT, temp INT, avg10s INT, total BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'range', 'sink.parallelism' = '1');

-- Every OVER of one SELECT uses the same window (as in Flink); a named
-- window says it once.
INSERT INTO last3
SELECT sensor, n, temp, SUM(temp) OVER w AS sum3, COUNT(*) OVER w AS cnt3
FROM readings
WINDOW w AS (PARTITION BY sensor ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);

INSERT INTO last10s
SELECT sensor, n, temp,
  AVG(temp) OVER (PARTITION BY sensor ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS avg10s,
  COUNT(*) OVER (PARTITION BY sensor ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS total
FROM readings;
