-- A query whose work comes after its input: the bidders of one day's
-- window (fired at the end of the bounded input) paired with each other,
-- quadratic in the bidders (about 400 million rows), so the operators work for minutes after the
-- source has finished (TestSIGTERMAfterSourcesFinished).
CREATE TABLE pairs (a BIGINT, b BIGINT) WITH ('connector' = 'print');

INSERT INTO pairs
SELECT x.bidder, y.bidder
FROM (SELECT bidder, window_start FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '1' DAY))
      GROUP BY bidder, window_start, window_end) AS x
JOIN (SELECT bidder, window_start FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '1' DAY))
      GROUP BY bidder, window_start, window_end) AS y
ON x.window_start = y.window_start;
