-- Nexmark q4: average price per category of the winning bids of closed auctions.
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q4.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q4.sql), into
-- its blackhole sink.

CREATE TABLE nexmark_q4 (
  id BIGINT,
  final BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q4
SELECT
    Q.category,
    AVG(Q.final)
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
