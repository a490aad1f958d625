-- OVER over an updating input (beyond Flink; Nexmark q6's shape): the
-- average final price of each seller's last 3 closed auctions, where an
-- auction's final price is the MAX of its bids, a GROUP BY whose rows
-- update as bids come.
-- Run:  go run ./cmd/weir run examples/over_updating.sql
-- Each bid that raises an auction's price is a -U/+U into the OVER, which
-- re-emits the rows whose frame holds that auction: the changelog printed
-- ends at the batch answer. `weir explain examples/over_updating.sql`
-- shows UpdatingOverAggregate(partitionBy=[seller], orderBy=[closed ASC],
-- window=[ROWS BETWEEN 2 PRECEDING AND CURRENT ROW], ...).

SET 'parallelism.default' = '2';

-- 40 bids over 8 auctions of 2 sellers; auction a closes at 100 + a.
CREATE TABLE bids (
  n     BIGINT,
  price BIGINT
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '40',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '40',
  'fields.price.min' = '1', 'fields.price.max' = '100'
);

CREATE TABLE avg_last3 (seller BIGINT, auction BIGINT, final BIGINT, avg3 BIGINT)
  WITH ('connector' = 'print', 'sink.parallelism' = '1');

INSERT INTO avg_last3
SELECT seller, auction, final,
  AVG(final) OVER (PARTITION BY seller ORDER BY closed ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS avg3
FROM (
  SELECT n % 8 % 2 AS seller, n % 8 AS auction, 100 + n % 8 AS closed, MAX(price) AS final
  FROM bids
  GROUP BY n % 8 % 2, n % 8, 100 + n % 8
);
