-- Nexmark q0: pass through: the bids as they come (the cost of source and sink).
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q0.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q0.sql), into
-- its blackhole sink.

CREATE TABLE nexmark_q0 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q0
SELECT auction, bidder, price, `dateTime`, extra FROM bid;
