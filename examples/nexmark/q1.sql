-- Nexmark q1: currency conversion: each bid's price in euros (exact DECIMAL).
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q1.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q1.sql), into
-- its blackhole sink.

CREATE TABLE nexmark_q1 (
  auction  BIGINT,
  bidder  BIGINT,
  price  DECIMAL(23, 3),
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q1
SELECT
    auction,
    bidder,
    0.908 * price as price, -- convert dollar to euro
    `dateTime`,
    extra
FROM bid;
