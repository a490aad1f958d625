-- A partitioned filesystem sink, as Nexmark q10 writes its bids: rows go
-- to folders dt=<day>/hm=<hour:minute> ('hm=10%3A05': ':' is escaped in
-- folder names, as Flink does), the partition columns are not written
-- into the files, and each partition gets a _SUCCESS file once the
-- watermark passes its time ('$dt $hm:00') plus 1 minute, or when the
-- input ends. Exactly once across kills and restores, as the unpartitioned
-- sink.
--
--   go run ./cmd/weir run examples/partitioned_sink.sql
--   find /tmp/weir-partitioned | sort
--
-- Read it back (the partition columns come from the folder names):
--
--   CREATE TABLE readings (sensor INT, reading DOUBLE, ts TIMESTAMP(3), dt STRING, hm STRING)
--     PARTITIONED BY (dt, hm) WITH ('connector' = 'filesystem', 'path' = '/tmp/weir-partitioned', 'format' = 'csv');
--   SELECT dt, hm, COUNT(*) FROM readings GROUP BY dt, hm;
--
-- A second run is refused (the folder holds committed output); remove the
-- folder first, or pass --allow-duplicate-output.
SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '/tmp/weir-checkpoints';

-- 6,000 readings, one every 100 ms of event time: 10 minutes from 2026-01-01 10:00.
CREATE TABLE sensors (
  n BIGINT,
  sensor INT,
  reading DOUBLE,
  ts AS TO_TIMESTAMP(FROM_UNIXTIME(1767261600 + n / 10)),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'datagen', 'rows-per-second' = '2000',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '5999',
  'fields.sensor.min' = '1', 'fields.sensor.max' = '4');

CREATE TABLE readings (
  sensor INT,
  reading DOUBLE,
  ts TIMESTAMP(3),
  dt STRING,
  hm STRING
) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/weir-partitioned',
  'format' = 'csv',
  'partition.time-extractor.timestamp-pattern' = '$dt $hm:00',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 min',
  'sink.partition-commit.policy.kind' = 'success-file'
);

INSERT INTO readings
SELECT sensor, reading, ts, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm') FROM sensors;
