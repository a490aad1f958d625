-- The Nexmark generator: the first 1,000 events' bids, printed.
--
--   go run ./cmd/weir run examples/nexmark/gen.sql
--
-- 'nexmark.event-type' = 'bid' (a Weir extension) reads the bids alone,
-- with the fields of the reference's bid ROW as columns. 'base-time'
-- fixes the timeline, so two runs print the same bids; without it, event
-- 0 is at the time the job first started. At 'first-event.rate' = 1000,
-- event n is at base-time + n ms.
SET 'parallelism.default' = '1';

CREATE TABLE bid (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  channel STRING,
  url STRING,
  `dateTime` TIMESTAMP(3),
  extra STRING,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
  'connector' = 'nexmark',
  'nexmark.event-type' = 'bid',
  'events.num' = '1000',
  'first-event.rate' = '1000',
  'base-time' = '2026-01-01 00:00:00'
);

CREATE TABLE out (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  channel STRING,
  `dateTime` TIMESTAMP(3)
) WITH ('connector' = 'print');

INSERT INTO out SELECT auction, bidder, price, channel, `dateTime` FROM bid;
