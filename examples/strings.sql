-- Scalar functions over a few generated rows, then FILTER on aggregates.
-- Run:  go run ./cmd/weir run examples/strings.sql
-- The input is bounded (12 rows), so the job ends by itself.

SET 'parallelism.default' = '1';

CREATE TABLE nums (n BIGINT) WITH (
  'connector' = 'datagen',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '12'
);

-- A URL and a JSON document per row, built from n.
CREATE VIEW events AS
SELECT n,
       CONCAT('https://shop.example/item/', CAST(n AS STRING), '/page?channel_id=', CAST(n % 3 AS STRING), '&ref=x') AS url,
       CONCAT('{"user": {"name": "u', CAST(n AS STRING), '", "tags": ["a", "b', CAST(n % 2 AS STRING), '"]}}') AS doc
FROM nums;

CREATE TABLE strings_out (
  n BIGINT, channel STRING, item STRING, padded STRING, title STRING,
  user_name STRING, second_tag STRING, tags STRING, digest STRING,
  root DOUBLE, rounded DOUBLE, size STRING, biggest BIGINT
) WITH ('connector' = 'print');

INSERT INTO strings_out
SELECT n,
       REGEXP_EXTRACT(url, '(&|\?)channel_id=([^&]*)', 2),  -- Nexmark q21
       SPLIT_INDEX(url, '/', 4),                              -- Nexmark q22
       LPAD(CAST(n AS STRING), 4, '0'),
       INITCAP(REPLACE('item number x', 'x', CAST(n AS STRING))),
       JSON_VALUE(doc, '$.user.name'),
       JSON_VALUE(doc, '$.user.tags[1]'),
       JSON_QUERY(doc, '$.user.tags'),
       LEFT(MD5(url), 8),
       SQRT(n),
       ROUND(n / 7.0, 2),
       IF(n > 6, 'big', 'small'),
       GREATEST(n, 10 - n)
FROM events;

-- FILTER (WHERE ...) on aggregates: per channel, how many rows, how many
-- with an even n, and how many distinct n % 4 among n > 4.
CREATE TABLE per_channel (channel STRING, c BIGINT, evens BIGINT, d BIGINT) WITH ('connector' = 'print');

INSERT INTO per_channel
SELECT REGEXP_EXTRACT(url, 'channel_id=([0-9]+)', 1) AS channel,
       COUNT(*),
       COUNT(*) FILTER (WHERE n % 2 = 0),
       COUNT(DISTINCT n % 4) FILTER (WHERE n > 4)
FROM events
GROUP BY REGEXP_EXTRACT(url, 'channel_id=([0-9]+)', 1);
