-- The bids of a Nexmark generator that does not wait for the clock:
-- the input of q1.sql (TestSIGTERMAfterSourcesFinished).
CREATE TABLE bid (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  channel VARCHAR,
  url VARCHAR,
  `dateTime` TIMESTAMP(3),
  extra VARCHAR,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
  'connector' = 'nexmark',
  'nexmark.event-type' = 'bid',
  'first-event.rate' = '10000000',
  'next-event.rate' = '10000000',
  'events.num' = '1000000',
  'base-time' = '2026-01-01 00:00:00'
);
