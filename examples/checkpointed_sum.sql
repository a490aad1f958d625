-- Exactly-once state across a crash. A bounded stream of 200,000 events is
-- summed per key with checkpoints every second. Kill it at any moment
-- (Ctrl-C stops cleanly; kill -9 is a crash) and continue with
--   go run ./cmd/weir run --restore latest examples/checkpointed_sum.sql
-- Every source seeks to its checkpointed position and every operator gets
-- its state back, so the final sums are those of an uninterrupted run:
-- key k (0..999) ends with SUM = 200*k + 1000*(0+1+...+199) = 200*k + 19900000.
-- Checkpoints go to ./weir-checkpoints/checkpointed_sum/chk-<n>/; see them with
--   go run ./cmd/weir checkpoints list weir-checkpoints/checkpointed_sum

SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '1s';
SET 'state.checkpoints.dir' = 'weir-checkpoints';

CREATE TABLE events (
  id BIGINT
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '0',
  'fields.id.end' = '199999',
  'rows-per-second' = '20000'
);

CREATE TABLE sums (k BIGINT, total BIGINT, n BIGINT) WITH ('connector' = 'blackhole');

CREATE TABLE progress (k BIGINT, total BIGINT, n BIGINT) WITH ('connector' = 'print', 'sink.parallelism' = '1');

INSERT INTO sums SELECT id % 1000, SUM(id), COUNT(*) FROM events GROUP BY id % 1000;
INSERT INTO progress SELECT id % 1000, SUM(id), COUNT(*) FROM events WHERE id % 1000 = 7 GROUP BY id % 1000;
