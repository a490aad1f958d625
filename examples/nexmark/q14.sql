-- Nexmark q14: calculation: price conversion, a time-of-day class and a user-defined
-- function (count_char, written in Go, built into cmd/weir).
--
--   go run ./cmd/weir run -i examples/nexmark/ddl.sql examples/nexmark/q14.sql
--
-- The query of nexmark/nexmark (nexmark-flink/.../queries/q14.sql), into
-- its blackhole sink.
-- count_char is a Go function registered in cmd/weir's build
-- (cmd/weir/functions.go) under 'count_char' and, so that the reference's
-- statement runs as written, under the reference's Java class name.

CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar';

CREATE TABLE nexmark_q14 (
    auction BIGINT,
    bidder BIGINT,
    price  DECIMAL(23, 3),
    bidTimeType VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    c_counts BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q14
SELECT
    auction,
    bidder,
    0.908 * price as price,
    CASE
        WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
        WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    `dateTime`,
    extra,
    count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
