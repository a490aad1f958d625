-- An event-time temporal join: each order converted with the currency
-- rate that was valid when it was placed. Run:
--   go run ./cmd/weir run examples/join_temporal.sql
--
-- currency_rates is a versioned table: a changelog (debezium-json: an
-- insert, updates, a delete) with a PRIMARY KEY and an event-time
-- attribute (its WATERMARK), the version time. FOR SYSTEM_TIME AS OF
-- o.order_time picks, per order, the latest version of its currency at or
-- before the order's time; a delete ends a version (its row's time is
-- when), so order 5 (JPY, after the delete) and order 6 (GBP, before GBP's
-- first rate) find none and the LEFT JOIN pads them with NULL. An order
-- waits in the join's state until the watermark (the minimum of both
-- inputs') passes its time, so rates that come late, within the
-- watermark's delay, still count; versions older than the watermark but
-- the latest are dropped. The output is insert-only and keeps the orders'
-- rowtime (EXPLAIN shows TemporalJoin).

SET 'parallelism.default' = '2';

CREATE TABLE fx_orders (
  id          BIGINT,
  currency    STRING,
  amount      DECIMAL(10, 2),
  order_time  TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/fx_orders.csv',
  'format' = 'csv'
);

CREATE TABLE currency_rates (
  currency     STRING,
  rate         DECIMAL(10, 4),
  update_time  TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time,
  PRIMARY KEY (currency) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/currency_rates.json',
  'format' = 'debezium-json'
);

CREATE TABLE converted (
  id          BIGINT,
  currency    STRING,
  amount      DECIMAL(10, 2),
  rate        DECIMAL(10, 4),
  in_usd      DECIMAL(20, 6),
  order_time  TIMESTAMP(3)
) WITH ('connector' = 'print');

EXPLAIN INSERT INTO converted
SELECT o.id, o.currency, o.amount, r.rate, o.amount * r.rate, o.order_time
FROM fx_orders AS o
LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF o.order_time AS r
ON o.currency = r.currency;

INSERT INTO converted
SELECT o.id, o.currency, o.amount, r.rate, o.amount * r.rate, o.order_time
FROM fx_orders AS o
LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF o.order_time AS r
ON o.currency = r.currency;
