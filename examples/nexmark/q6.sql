-- Nexmark q6: average selling price per seller over their last 10 closed auctions
-- (OVER over an updating input: FLINK-19059, Flink cannot run it).
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q6.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q6.sql), into
-- its blackhole sink. One change: the reference filters `rownum <= 1` in
-- the WHERE of the SELECT that defines rownum (and names A and B outside
-- the subquery that defines them), which SQL does not allow; the
-- ROW_NUMBER is wrapped in one more subquery, as every Top-N is. And
-- the sink's seller is BIGINT (the reference declares VARCHAR, which
-- Flink would reject too: BIGINT to VARCHAR is not an implicit cast).

CREATE TABLE nexmark_q6 (
  seller BIGINT,
  avg_price  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q6
SELECT
    Q.seller,
    AVG(Q.price) OVER
        (PARTITION BY Q.seller ORDER BY Q.`dateTime` ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM (
  SELECT * FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY id, seller ORDER BY price DESC) AS rownum
    FROM (SELECT A.id, A.seller, B.price, B.`dateTime`
        FROM auction AS A,
            bid AS B
        WHERE A.id = B.auction
            and B.`dateTime` between A.`dateTime` and A.expires)
  )
  WHERE rownum <= 1
) AS Q;
