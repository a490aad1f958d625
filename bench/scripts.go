package bench

// parallelism is the parallelism of every workload.
const parallelism = 2

// The workloads' SQL. The datagen source is unthrottled (its rate limit is
// far above what two cores reach).
const (
	w1Script = `SET 'parallelism.default' = '2';
SET 'table.exec.mini-batch.enabled' = 'true';
CREATE TABLE t (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000',
  'fields.k.min' = '0', 'fields.k.max' = '999', 'fields.v.min' = '0', 'fields.v.max' = '99');
CREATE TABLE s (k BIGINT, total BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT k, SUM(v) FROM t GROUP BY k;
`
	w2Table = `SET 'parallelism.default' = '2';
SET 'table.exec.mini-batch.enabled' = 'true';
CREATE TABLE t (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000',
  'fields.k.min' = '0', 'fields.k.max' = '999999', 'fields.v.min' = '0', 'fields.v.max' = '99');
`
	w2Script = w2Table + `CREATE TABLE s (k BIGINT, total BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT k, SUM(v) FROM t GROUP BY k;
`
	// w4Script is W2's query into a sink that notes the first row; the
	// operator ids, which depend on the source and the query only, match
	// W2's checkpoint.
	w4Script = w2Table + `CREATE TABLE s (k BIGINT, total BIGINT) WITH ('connector' = 'bench-sink');
INSERT INTO s SELECT k, SUM(v) FROM t GROUP BY k;
`
	// w5Script is W1's query over stamped rows at a given rate (%f).
	w5Script = `SET 'parallelism.default' = '2';
SET 'table.exec.mini-batch.enabled' = 'true';
CREATE TABLE t (k BIGINT, v BIGINT, ts BIGINT) WITH ('connector' = 'bench-stamp', 'keys' = '1000', 'rows-per-second' = '%f');
CREATE TABLE s (k BIGINT, total BIGINT, sts BIGINT, cnt BIGINT) WITH ('connector' = 'bench-sink', 'latency' = 'true');
INSERT INTO s SELECT k, SUM(v), SUM(ts), COUNT(*) FROM t GROUP BY k;
`
	// w6Table is an unbounded stream with event time from the data: a
	// sequence n stamped n/100 ms (100,000 rows per second of event time),
	// random keys and values, a watermark 1 s behind.
	w6Table = `SET 'parallelism.default' = '2';
CREATE TABLE t (n BIGINT, k BIGINT, v BIGINT, ts AS TO_TIMESTAMP_LTZ(n / 100, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '0', 'fields.n.end' = '9000000000000000000',
  'fields.k.min' = '0', 'fields.k.max' = '%d', 'fields.v.min' = '0', 'fields.v.max' = '99');
CREATE TABLE s (k BIGINT, ws TIMESTAMP_LTZ(3), c BIGINT, total BIGINT) WITH ('connector' = 'blackhole');
`
	w6Script = w6Table + `INSERT INTO s SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;
`
	w7Script = w6Table + `INSERT INTO s SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end;
`
	w8Script = w6Table + `INSERT INTO s SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;
`
)
