-- Windows over a window aggregate's output (Nexmark q5 in miniature), over
-- the page views of examples/data/sessions.csv: the views per page in the
-- last 5 minutes, every minute; the busiest page's count per window (a
-- GROUP BY of the counts' window bounds: a window-attached aggregate, not
-- an updating GroupAggregate); and the busiest pages themselves (a window
-- join of the counts with that maximum). All three are insert-only: each
-- window's rows once, when the watermark passes its end.
-- Run:  go run ./cmd/weir run examples/window_cascade.sql
-- (EXPLAIN INSERT INTO … shows WindowAggregate(…, window=[HOP(win_start=
-- [starttime], win_end=[endtime], …)]) and WindowJoin.)

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

CREATE VIEW page_views AS
SELECT page, COUNT(*) AS num, window_start AS starttime, window_end AS endtime
FROM TABLE(HOP(TABLE views, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))
GROUP BY page, window_start, window_end;

CREATE TABLE busiest_count (starttime TIMESTAMP(3), endtime TIMESTAMP(3), maxn BIGINT, pages BIGINT)
WITH ('connector' = 'print');
CREATE TABLE busiest_pages (page STRING, num BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3))
WITH ('connector' = 'print');

-- The most views of one page, and the pages viewed, per window.
INSERT INTO busiest_count
SELECT starttime, endtime, MAX(num), COUNT(*)
FROM page_views
GROUP BY starttime, endtime;

-- The pages with that many views in their window (ties all come out).
INSERT INTO busiest_pages
SELECT P.page, P.num, P.starttime, P.endtime
FROM page_views AS P
JOIN (SELECT MAX(num) AS maxn, starttime, endtime FROM page_views GROUP BY starttime, endtime) AS M
ON P.starttime = M.starttime AND P.endtime = M.endtime AND P.num >= M.maxn;
