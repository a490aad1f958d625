-- Nexmark q3: local item suggestion: auctions of category 10 by sellers in OR, ID or CA
-- (a regular join of auctions and people).
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q3.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q3.sql), into
-- its blackhole sink.

CREATE TABLE nexmark_q3 (
  name  VARCHAR,
  city  VARCHAR,
  state  VARCHAR,
  id  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q3
SELECT
    P.name, P.city, P.state, A.id
FROM
    auction AS A INNER JOIN person AS P on A.seller = P.id
WHERE
    A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
