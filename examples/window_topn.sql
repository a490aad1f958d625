-- Window Top-N and window deduplication: per 10-second event-time window,
-- the 3 biggest bids per auction, the last bid of each bidder, and the 2
-- auctions with the most bids (a Top-N over a window aggregate).
-- Run:  go run ./cmd/weir run examples/window_topn.sql
-- Each window's rows are printed once, when the watermark passes its end
-- (insert-only: no updates), and the window's state is dropped.
-- `weir explain examples/window_topn.sql` shows WindowRank(window=[TUMBLE(
-- win_start=[window_start], win_end=[window_end], ...)], ...) and
-- WindowDeduplicate(..., keep=[LastRow], ...).

SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE bids (
  n       BIGINT,
  auction INT,
  bidder  INT,
  price   INT,
  -- Event time: bid n happens n * 500 ms after 2026-01-01 00:00 UTC.
  ts      AS TO_TIMESTAMP_LTZ(1767225600000 + n * 500, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '60',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '59',
  'fields.auction.min' = '1', 'fields.auction.max' = '3',
  'fields.bidder.min' = '1', 'fields.bidder.max' = '4',
  'fields.price.min' = '1', 'fields.price.max' = '100'
);

CREATE TABLE top3 (window_start TIMESTAMP_LTZ(3), auction INT, price INT, rn BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'top3', 'sink.parallelism' = '1');
CREATE TABLE last_bid (window_start TIMESTAMP_LTZ(3), bidder INT, price INT)
  WITH ('connector' = 'print', 'print-identifier' = 'last', 'sink.parallelism' = '1');
CREATE TABLE hot (window_start TIMESTAMP_LTZ(3), auction INT, bids BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'hot', 'sink.parallelism' = '1');

-- Window Top-N: partitioned by the window's start and end (and more).
INSERT INTO top3
SELECT window_start, auction, price, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, auction ORDER BY price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rn <= 3;

-- Window deduplication: ROW_NUMBER() = 1 ordered by the time attribute.
INSERT INTO last_bid
SELECT window_start, bidder, price FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, bidder ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rn = 1;

-- A Top-N over a window aggregate.
INSERT INTO hot
SELECT window_start, auction, bids FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bids DESC, auction) AS rn
  FROM (SELECT window_start, window_end, auction, COUNT(*) AS bids
        FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
        GROUP BY window_start, window_end, auction)
) WHERE rn <= 2;
