-- DECIMAL, DATE, TIME, BYTES, TINYINT and FLOAT read from a JSON file,
-- exact DECIMAL arithmetic with Flink's result types, TRY_CAST, and a
-- grouped SUM/AVG of a DECIMAL by a DATE key.
-- Run:  go run ./cmd/weir run examples/types.sql

SET 'parallelism.default' = '1';

CREATE TABLE trades (
  id      BIGINT,
  symbol  STRING,
  price   DECIMAL(10, 2),   -- JSON number or string; exact, not a DOUBLE
  qty     INT,
  `day`   DATE,             -- "2026-01-05"
  `at`    TIME,             -- "09:30:00"
  tag     BYTES,            -- base64, as Flink's json format
  small   TINYINT,
  ratio   FLOAT
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/trades.jsonl',
  'format' = 'json'
);

CREATE TABLE priced (
  id        BIGINT,
  notional  DECIMAL(21, 2),   -- DECIMAL(10, 2) * INT = DECIMAL(20, 2)
  fee       DECIMAL(14, 5),   -- 0.908 * DECIMAL(10, 2) = DECIMAL(13, 5)
  `day`     DATE,
  morning   BOOLEAN,
  tag       BYTES,
  small2    INT,
  as_int    INT
) WITH ('connector' = 'print', 'print-identifier' = 'priced');

CREATE TABLE daily (
  `day`     DATE,
  turnover  DECIMAL(38, 2),   -- SUM of DECIMAL(20, 2) is DECIMAL(38, 2)
  avg_px    DECIMAL(38, 6),   -- AVG of DECIMAL(10, 2) is DECIMAL(38, 6)
  trades    BIGINT
) WITH ('connector' = 'print', 'print-identifier' = 'daily');

INSERT INTO priced
SELECT id, price * qty, 0.908 * price, `day`, `at` < TIME '12:00:00', tag,
       small * 2, TRY_CAST(symbol AS INT)
FROM trades
WHERE `day` >= DATE '2026-01-05';

INSERT INTO daily
SELECT `day`, SUM(price * qty), AVG(price), COUNT(*)
FROM trades
GROUP BY `day`;
