-- Nexmark q18: last bid of each bidder on each auction (deduplication, keep last on
-- event time).
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q18.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q18.sql), into
-- its blackhole sink.

CREATE TABLE nexmark_q18 (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    url  VARCHAR,
    `dateTime`  TIMESTAMP(3),
    extra  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q18
SELECT auction, bidder, price, channel, url, `dateTime`, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS rank_number
       FROM bid)
 WHERE rank_number <= 1;
