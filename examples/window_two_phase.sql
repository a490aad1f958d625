-- Two-phase window aggregation ('table.optimizer.agg-phase-strategy'):
-- the same HOP count planned in one phase and in two, and run in two.
-- In two phases a LocalWindowAggregate, chained to the scan, sums each
-- user's views per 1-minute slice in memory and sends one partial row per
-- user and slice through the hash exchange; the GlobalWindowAggregate
-- merges the partials and emits each window once, when the watermark
-- passes its end. The results are those of one phase.
-- Run:  go run ./cmd/weir run examples/window_two_phase.sql

SET 'parallelism.default' = '2';

CREATE TABLE views (
  usr  STRING,
  page STRING,
  ts   TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '30' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/sessions.csv',
  'format' = 'csv'
);

CREATE TABLE per_user (usr STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), views BIGINT)
WITH ('connector' = 'print');

-- One phase: the rows go through the exchange to one WindowAggregate.
SET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE';
EXPLAIN INSERT INTO per_user
SELECT usr, window_start, window_end, COUNT(*)
FROM TABLE(HOP(TABLE views, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))
GROUP BY usr, window_start, window_end;

-- AUTO (the default) and TWO_PHASE take two phases (for TUMBLE, HOP and
-- CUMULATE in event time), at any parallelism.
SET 'table.optimizer.agg-phase-strategy' = 'AUTO';
EXPLAIN INSERT INTO per_user
SELECT usr, window_start, window_end, COUNT(*)
FROM TABLE(HOP(TABLE views, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))
GROUP BY usr, window_start, window_end;

INSERT INTO per_user
SELECT usr, window_start, window_end, COUNT(*)
FROM TABLE(HOP(TABLE views, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))
GROUP BY usr, window_start, window_end;
