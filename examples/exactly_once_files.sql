-- Exactly-once output files across crashes and savepoints.
-- A bounded stream of 300,000 events is summed per key (1,000 keys) and the
-- updating result is written as a Debezium-JSON changelog by the filesystem
-- sink, whose part files appear only when the checkpoint covering them
-- completes (two-phase commit).
--
--   go run ./cmd/weir run --stop-with-savepoint examples/exactly_once_files.sql
--     ... press Ctrl-C after a few checkpoints: a savepoint is written and
--     its folder printed (weir-savepoints/savepoint-<n>-<time>)
--   go run ./cmd/weir run --restore weir-savepoints/savepoint-<n>-<time> examples/exactly_once_files.sql
--     ... resumes from the savepoint (change 'parallelism.default' first to
--     rescale). kill -9 it and continue with --restore latest as often as
--     you like.
--
-- The final part files hold every change exactly once: read them with
--   cat /tmp/weir-exactly-once/part-*
-- (hidden .inprogress files are not yet committed).
--
-- Two runs of the job at once are refused (the second names the process of
-- the first), and so is a start from the beginning into a folder that holds
-- the output of an earlier run: rm -r /tmp/weir-exactly-once weir-checkpoints/exactly_once_files
-- to start over.

SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '1s';

CREATE TABLE events (
  id BIGINT
) WITH (
  'connector' = 'datagen',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '0',
  'fields.id.end' = '299999',
  'rows-per-second' = '30000'
);

CREATE TABLE sums (
  k BIGINT,
  total BIGINT,
  n BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/weir-exactly-once',
  'format' = 'debezium-json'
);

INSERT INTO sums SELECT id % 1000, SUM(id), COUNT(*) FROM events GROUP BY id % 1000;
