-- Nexmark q13: bounded side input join: each bid enriched from a CSV file (a lookup
-- join on processing time).
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q13.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q13.sql), into
-- its blackhole sink.
-- The reference declares side_input with the legacy options
-- ('connector.type' = 'filesystem', 'connector.path' = …, 'format.type' =
-- 'csv') and the file its SideInputGenerator writes; here the current
-- options and side_input.csv, the same rows (key i, value i, i < 10,000).

CREATE TABLE side_input (
  key BIGINT,
  `value` VARCHAR
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/nexmark/side_input.csv',
  'format' = 'csv'
);

CREATE TABLE nexmark_q13 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  `value`  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.`dateTime`,
    S.`value`
FROM (SELECT *, PROCTIME() as p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON mod(B.auction, 10000) = S.key;
