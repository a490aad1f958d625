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
	// n0Script reads the nexmark generator's bids into a blackhole sink:
	// the generator's throughput through the engine (unthrottled).
	n0Script = `SET 'parallelism.default' = '2';
CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, ` + "`dateTime`" + ` TIMESTAMP(3), extra STRING)
  WITH ('connector' = 'nexmark', 'nexmark.event-type' = 'bid', 'first-event.rate' = '1000000000');
CREATE TABLE s (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, ` + "`dateTime`" + ` TIMESTAMP(3), extra STRING)
  WITH ('connector' = 'blackhole');
INSERT INTO s SELECT * FROM bid;
`
	// w9Script is an inner equi-join of two datagen streams on 100,000
	// keys, one a dimension with a primary key on the join key.
	w9Script = `SET 'parallelism.default' = '2';
CREATE TABLE dim (k BIGINT, name STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'datagen',
  'rows-per-second' = '1000000000000', 'fields.k.kind' = 'sequence', 'fields.k.start' = '0', 'fields.k.end' = '99999',
  'fields.name.length' = '8');
CREATE TABLE facts (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000',
  'fields.k.min' = '0', 'fields.k.max' = '99999', 'fields.v.min' = '0', 'fields.v.max' = '99');
CREATE TABLE s (k BIGINT, v BIGINT, name STRING) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT f.k, f.v, d.name FROM facts f JOIN dim d ON f.k = d.k;
`
	// w10Script is an interval join within 10 s on 100,000 keys; event
	// time advances 1 ms a row, so each side keeps 10,000 rows. The two
	// sources are in one watermark alignment group (max drift 1 s): without
	// it the faster one runs ahead and the join holds its rows until the
	// slower one's watermark comes. Watermarks come every 20 ms, not every
	// 200 ms: at about a million rows a second per source, event time runs
	// a thousand times faster than the clock, and 200 ms of it is 200 s of
	// event time, twenty times the join's 10 s bound, whose rows the join
	// holds until the next watermark sweeps them.
	w10Script = `SET 'parallelism.default' = '2';
SET 'pipeline.auto-watermark-interval' = '20 ms';
CREATE TABLE a (n BIGINT, k BIGINT, ts AS TO_TIMESTAMP_LTZ(n, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '0', 'fields.n.end' = '1000000000000', 'fields.k.min' = '0', 'fields.k.max' = '99999',
  'scan.watermark.alignment.group' = 'w10', 'scan.watermark.alignment.max-drift' = '1 s');
CREATE TABLE b (n BIGINT, k BIGINT, ts AS TO_TIMESTAMP_LTZ(n, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '0', 'fields.n.end' = '1000000000000', 'fields.k.min' = '0', 'fields.k.max' = '99999',
  'scan.watermark.alignment.group' = 'w10', 'scan.watermark.alignment.max-drift' = '1 s');
CREATE TABLE s (k BIGINT, ats TIMESTAMP_LTZ(3), bts TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT a.k, a.ts, b.ts FROM a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '10' SECOND AND a.ts;
`
	// w12Script keeps the 10 largest v of each of 10,000 keys.
	w12Script = `SET 'parallelism.default' = '2';
CREATE TABLE t (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000',
  'fields.k.min' = '0', 'fields.k.max' = '9999', 'fields.v.min' = '0', 'fields.v.max' = '999999999');
CREATE TABLE s (k BIGINT, v BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT k, v, rn FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM t) WHERE rn <= 10;
`
	// w13Script keeps the last row of each of 1,000,000 keys. Its state
	// (k, v and the materialized proctime per key: about 160 bytes of
	// memory each with the key index, 80 MB per subtask) is sized to stay
	// in memory: at the default 64 MB per subtask it spills and then looks
	// most keys up in Pebble, five times the CPU per row.
	w13Script = `SET 'parallelism.default' = '2';
SET 'state.cache.size' = '256mb';
CREATE TABLE t (k BIGINT, v BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000',
  'fields.k.min' = '0', 'fields.k.max' = '999999', 'fields.v.min' = '0', 'fields.v.max' = '99');
CREATE TABLE s (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM t) WHERE rn = 1;
`
	// w6Table is an unbounded stream with event time from the data: a
	// sequence n stamped n/100 ms (100,000 rows per second of event time),
	// random keys and values, a watermark 1 s behind. Its two source
	// subtasks are in one watermark alignment group (max drift 1 s): without
	// it one subtask's event time runs ahead of the other's on a busy
	// machine and the global window phase holds the faster one's partials
	// until the slower one's watermark comes, so memory follows the drift.
	w6Table = `SET 'parallelism.default' = '2';
CREATE TABLE t (n BIGINT, k BIGINT, v BIGINT, ts AS TO_TIMESTAMP_LTZ(n / 100, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '0', 'fields.n.end' = '9000000000000000000',
  'fields.k.min' = '0', 'fields.k.max' = '%d', 'fields.v.min' = '0', 'fields.v.max' = '99',
  'scan.watermark.alignment.group' = 'w6', 'scan.watermark.alignment.max-drift' = '1 s');
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
