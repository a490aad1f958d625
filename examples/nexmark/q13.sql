-- Nexmark Query 13: bounded side input join. Each bid is enriched, at
-- processing time, with the row of a side input file whose key is the
-- bid's auction mod 10000 (a lookup join: the file is loaded whole into
-- every subtask's memory; see examples/join_lookup.sql).
--
--   go run ./cmd/weir run examples/nexmark/q13.sql
--
-- side_input.csv holds keys 0..9999 with their value (the reference's
-- side_input_gen.sh makes 10,000 rows); the bids come from the nexmark
-- connector (the first 1,000 events' bids, printed).
SET 'parallelism.default' = '2';

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

CREATE TABLE side_input (
  key BIGINT,
  `value` STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/nexmark/side_input.csv',
  'format' = 'csv'
);

CREATE TABLE nexmark_q13 (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  `dateTime` TIMESTAMP(3),
  `value` STRING
) WITH ('connector' = 'print');

INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.`dateTime`,
    S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10000) = S.key;
