-- Orders per minute of event time, where the event time is each record's
-- Kafka timestamp (a metadata column; produce.sql sets it), and the
-- partition and offset each window's orders came from (VIRTUAL metadata
-- columns: read, never written). Reads what is in the topic now and ends;
-- every window holds 6,000 orders (the last one 4,000), from all the
-- partitions: the watermark is the minimum over them, so reading one
-- partition's backlog first makes none of the others' orders late.
SET 'parallelism.default' = '2';

CREATE TABLE orders (
  customer INT,
  amount INT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `partition` INT METADATA VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9092',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json');

CREATE TABLE per_minute (window_start TIMESTAMP_LTZ(3), orders BIGINT, total BIGINT,
  max_partition INT, first_offset BIGINT, last_offset BIGINT) WITH ('connector' = 'print');

INSERT INTO per_minute
SELECT window_start, COUNT(*), SUM(amount), MAX(`partition`), MIN(`offset`), MAX(`offset`)
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;
