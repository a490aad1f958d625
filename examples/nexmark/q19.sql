-- Nexmark q19: auction Top-10 price: the 10 highest bids of each auction.
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q19.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q19.sql), into
-- its blackhole sink.

CREATE TABLE nexmark_q19 (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    url  VARCHAR,
    `dateTime`  TIMESTAMP(3),
    extra  VARCHAR,
    rank_number  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q19
SELECT * FROM
(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
WHERE rank_number <= 10;
