-- SESSION windows over a CSV file of page views with event times
-- (examples/data/sessions.csv): a user's session ends after 1 minute
-- without a view, and a view that falls between two sessions merges them.
-- The file is not in time order (bob's /item/3 at 09:00:20 comes after
-- ann's 09:01:30 and joins bob's first session); the watermark allows 30
-- seconds of disorder, and a row behind the watermark in a session that
-- already closed would be dropped and counted ("dropped N late rows" at
-- the end). Run:
--   go run ./cmd/weir run examples/window_session.sql
-- Each session is printed once, when the watermark passes its end (at the
-- end of the file for the last ones).

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

CREATE TABLE sessions (usr STRING, session_start TIMESTAMP(3), session_end TIMESTAMP(3), views BIGINT, pages BIGINT)
WITH ('connector' = 'print');

INSERT INTO sessions
SELECT usr, window_start, window_end, COUNT(*), COUNT(DISTINCT page)
FROM TABLE(SESSION(TABLE views PARTITION BY usr, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY usr, window_start, window_end;

-- The views themselves, each with its session's final bounds (no
-- aggregation): printed, in time order, when the session closes.
CREATE TABLE session_views (usr STRING, page STRING, ts TIMESTAMP(3), session_start TIMESTAMP(3), session_end TIMESTAMP(3))
WITH ('connector' = 'print', 'print-identifier' = 'views');

INSERT INTO session_views
SELECT usr, page, ts, window_start, window_end
FROM TABLE(SESSION(TABLE views PARTITION BY usr, DESCRIPTOR(ts), INTERVAL '1' MINUTE));
