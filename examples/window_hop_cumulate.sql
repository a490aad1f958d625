-- HOP and CUMULATE windows over the page views of
-- examples/data/sessions.csv, and the older GROUP BY TUMBLE(...) syntax.
-- Run:  go run ./cmd/weir run examples/window_hop_cumulate.sql

SET 'parallelism.default' = '1';

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

CREATE TABLE hop_out (window_start TIMESTAMP(3), window_end TIMESTAMP(3), views BIGINT, users BIGINT)
WITH ('connector' = 'print');
CREATE TABLE cumulate_out (window_start TIMESTAMP(3), window_end TIMESTAMP(3), views BIGINT)
WITH ('connector' = 'print');
CREATE TABLE tumble_out (usr STRING, minute_start TIMESTAMP(3), views BIGINT)
WITH ('connector' = 'print');

-- Views and distinct users in the last 5 minutes, every minute: each view
-- is added to one 1-minute slice; a window merges its five slices.
INSERT INTO hop_out
SELECT window_start, window_end, COUNT(*), COUNT(DISTINCT usr)
FROM TABLE(HOP(TABLE views, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))
GROUP BY window_start, window_end;

-- Views since the start of the quarter hour, every 5 minutes (named arguments).
INSERT INTO cumulate_out
SELECT window_start, window_end, COUNT(*)
FROM TABLE(CUMULATE(DATA => TABLE views, TIMECOL => DESCRIPTOR(ts),
                    STEP => INTERVAL '5' MINUTE, SIZE => INTERVAL '15' MINUTE))
GROUP BY window_start, window_end;

-- The group-window syntax (Flink's older form, as in Nexmark q11).
INSERT INTO tumble_out
SELECT usr, TUMBLE_START(ts, INTERVAL '1' MINUTE), COUNT(*)
FROM views
GROUP BY usr, TUMBLE(ts, INTERVAL '1' MINUTE);
