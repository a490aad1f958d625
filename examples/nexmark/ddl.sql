-- Nexmark: the three event kinds as flat tables, the init file of every
-- query in this folder:
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q5.sql
--
-- The reference (nexmark/nexmark, ddl_gen.sql + ddl_views.sql) declares
-- one table with ROW columns and three views over it; these tables read one
-- kind each ('nexmark.event-type', a Weir extension), with the fields of
-- the reference's ROWs as columns and its watermark on `dateTime` (4 s).
-- 'base-time' fixes the timeline (two runs see the same events);
-- 'events.num' bounds the input: 100,000 events, 1,000 a second of event
-- time, so 100 s of auctions and bids (`weir bench nexmark` raises both).
-- Each table generates the whole event stream and keeps its kind, so the
-- three see the one stream the reference's views see.

CREATE TABLE person (
  id BIGINT,
  name VARCHAR,
  emailAddress VARCHAR,
  creditCard VARCHAR,
  city VARCHAR,
  state VARCHAR,
  `dateTime` TIMESTAMP(3),
  extra VARCHAR,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
  'connector' = 'nexmark',
  'nexmark.event-type' = 'person',
  'first-event.rate' = '1000',
  'next-event.rate' = '1000',
  'events.num' = '100000',
  'base-time' = '2026-01-01 00:00:00'
);

CREATE TABLE auction (
  id BIGINT,
  itemName VARCHAR,
  description VARCHAR,
  initialBid BIGINT,
  reserve BIGINT,
  `dateTime` TIMESTAMP(3),
  expires TIMESTAMP(3),
  seller BIGINT,
  category BIGINT,
  extra VARCHAR,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
  'connector' = 'nexmark',
  'nexmark.event-type' = 'auction',
  'first-event.rate' = '1000',
  'next-event.rate' = '1000',
  'events.num' = '100000',
  'base-time' = '2026-01-01 00:00:00'
);

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
  'first-event.rate' = '1000',
  'next-event.rate' = '1000',
  'events.num' = '100000',
  'base-time' = '2026-01-01 00:00:00'
);
