-- Nexmark q2: selection: the bids of every 123rd auction.
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q2.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q2.sql), into
-- its blackhole sink.

CREATE TABLE nexmark_q2 (
  auction  BIGINT,
  price  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
