package session

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// This file runs temporal joins end to end (files through the planner
// and the runtime to the print sink) at parallelism 1, 2 and 4 and
// compares the output with answers computed here in Go.

type tjOrder struct {
	id, k, ts int64
	nullK     bool
}

type tjRate struct {
	op       byte // 'c', 'u' (the new row of an update), 'd'
	k, rate  int64
	ts       int64
	inBefore bool // an update's old row, not a version
}

// writeTemporalInputs writes orders (id, k INT, ts; in time order) as CSV
// and a versioned changelog of rates (k BIGINT, rate, ts; out of order by
// up to 2 s, within its 3 s watermark delay) as debezium-json and as CSV
// (the versions as inserts).
func writeTemporalInputs(t *testing.T, seed uint64) (orders []tjOrder, rates []tjRate, opath, dbzPath, csvPath string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 14))
	dir := t.TempDir()
	var ob strings.Builder
	clock := int64(10_000)
	for id := range int64(300) {
		clock += int64(r.IntN(3000))
		o := tjOrder{id: id, k: int64(r.IntN(6)), ts: clock}
		if r.IntN(20) == 0 {
			o.nullK = true
			fmt.Fprintf(&ob, "%d,,%s\n", id, tsText(o.ts))
		} else {
			fmt.Fprintf(&ob, "%d,%d,%s\n", id, o.k, tsText(o.ts))
		}
		orders = append(orders, o)
	}
	var db, cb strings.Builder
	live := map[int64]tjRate{}
	obj := func(x tjRate) string {
		return fmt.Sprintf(`{"k":%d,"rate":%d,"ts":"%s"}`, x.k, x.rate, tsText(x.ts))
	}
	clock = 0
	for i := range 200 {
		clock += int64(r.IntN(4000))
		x := tjRate{k: int64(r.IntN(7)), rate: int64(i), ts: max(clock-int64(r.IntN(2000)), 0)}
		old, ok := live[x.k]
		switch {
		case ok && r.IntN(5) == 0:
			x.op, x.rate = 'd', old.rate
			fmt.Fprintf(&db, `{"before":%s,"after":null,"op":"d"}`+"\n", obj(x))
			delete(live, x.k)
		case ok:
			x.op = 'u'
			fmt.Fprintf(&db, `{"before":%s,"after":%s,"op":"u"}`+"\n", obj(old), obj(x))
			live[x.k] = x
		default:
			x.op = 'c'
			fmt.Fprintf(&db, `{"before":null,"after":%s,"op":"c"}`+"\n", obj(x))
			live[x.k] = x
		}
		if x.op != 'd' {
			fmt.Fprintf(&cb, "%d,%d,%s\n", x.k, x.rate, tsText(x.ts))
		}
		rates = append(rates, x)
	}
	opath, dbzPath, csvPath = filepath.Join(dir, "orders.csv"), filepath.Join(dir, "rates.json"), filepath.Join(dir, "rates.csv")
	for p, s := range map[string]string{opath: ob.String(), dbzPath: db.String(), csvPath: cb.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return orders, rates, opath, dbzPath, csvPath
}

// temporalAnswer is each order with the rate valid at its time: the
// latest rates event of its key at or before it (the later one in the
// file on equal times), none if that is a delete (or withDeletes is false
// and it is skipped); with minRate, a version whose rate is not above it
// does not match. LEFT pads orders without a match.
func temporalAnswer(orders []tjOrder, rates []tjRate, left, withDeletes bool, minRate int64) map[string]int {
	want := map[string]int{}
	for _, o := range orders {
		var match *tjRate
		if !o.nullK {
			best := int64(-1)
			for i, x := range rates {
				if x.k != o.k || x.ts > o.ts || x.ts < best || (x.op == 'd' && !withDeletes) {
					continue
				}
				best, match = x.ts, &rates[i]
			}
		}
		if match != nil && (match.op == 'd' || match.rate <= minRate) {
			match = nil
		}
		k := fmt.Sprint(o.k)
		if o.nullK {
			k = "<NULL>"
		}
		switch {
		case match != nil:
			want[row(fmt.Sprint(o.id), k, tsText(o.ts), fmt.Sprint(match.rate), tsText(match.ts))]++
		case left:
			want[row(fmt.Sprint(o.id), k, tsText(o.ts), "<NULL>", "<NULL>")]++
		}
	}
	return want
}

func TestTemporalJoinMatchesAnswer(t *testing.T) {
	orders, rates, opath, dbzPath, csvPath := writeTemporalInputs(t, 21)
	ddl := fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE rates (k BIGINT, rate BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '3' SECOND, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE rates_csv (k BIGINT, rate BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '3' SECOND, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out (id BIGINT, k INT, ots TIMESTAMP(3), rate BIGINT, rts TIMESTAMP(3)) WITH ('connector' = 'print');
`, opath, dbzPath, csvPath)
	cases := []struct {
		name, query string
		want        map[string]int
	}{
		{"inner changelog", "SELECT o.id, o.k, o.ts, r.rate, r.ts FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k",
			temporalAnswer(orders, rates, false, true, -1)},
		{"left changelog residual", "SELECT o.id, o.k, o.ts, r.rate, r.ts FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON r.k = o.k AND r.rate > 50",
			temporalAnswer(orders, rates, true, true, 50)},
		{"left inserts", "SELECT o.id, o.k, o.ts, r.rate, r.ts FROM orders o LEFT JOIN rates_csv FOR SYSTEM_TIME AS OF o.ts r ON o.k = r.k",
			temporalAnswer(orders, rates, true, false, -1)},
	}
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + ddl + "INSERT INTO out " + c.query + ";\n"
				outText := runScript(t, src)
				forPrintLines(t, outText, func(kind, _ string) {
					if kind != "+I" {
						t.Fatalf("temporal join emitted %s; want inserts only", kind)
					}
				})
				got := applyChangelog(t, outText)
				if !slices.Equal(sortedRows(got), sortedRows(c.want)) {
					t.Fatalf("got %d rows, want %d\n got: %v\nwant: %v", len(sortedRows(got)), len(sortedRows(c.want)), head(sortedRows(got)), head(sortedRows(c.want)))
				}
			})
		}
	}
}

// temporalFileScript joins a datagen sequence 0..n-1 (event time id ms, key
// id % keys) with the versions of a rates file FOR SYSTEM_TIME AS OF its
// time (LEFT), into the exactly-once filesystem sink, with checkpoints
// every few milliseconds.
func temporalFileScript(ckDir, ratesPath, outDir string, n, keys, par int) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
SET 'pipeline.auto-watermark-interval' = '5 ms';
CREATE TABLE ev (id BIGINT, k AS id %% %d, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '0.2' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '100000');
CREATE TABLE rates (k INT, rate BIGINT, ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE joined (id BIGINT, k BIGINT, rate BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO joined SELECT e.id, e.k, r.rate FROM ev AS e LEFT JOIN rates FOR SYSTEM_TIME AS OF e.ts AS r ON e.k = r.k;
`, par, ckDir, keys, n-1, ratesPath, outDir)
}

// writeRatesFile writes versions of keys 0..keys-1 at random times in
// [0, n) ms, in time order, and returns the answer "id,k,rate" of
// temporalFileScript: each id with the latest version of id %% keys at or
// before id ms (empty if none).
func writeRatesFile(t *testing.T, n, keys int) (string, []string) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(n), uint64(keys)))
	type ver struct{ k, rate, ts int64 }
	var vers []ver
	var b strings.Builder
	for ts := int64(0); ts < int64(n); ts += int64(1 + r.IntN(40)) {
		v := ver{k: int64(r.IntN(keys)), rate: int64(r.IntN(1000)), ts: ts}
		vers = append(vers, v)
		fmt.Fprintf(&b, "%d,%d,%s\n", v.k, v.rate, tsText(v.ts))
	}
	path := filepath.Join(t.TempDir(), "rates.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cur := map[int64]int64{}
	next := 0
	var want []string
	for id := int64(0); id < int64(n); id++ {
		for next < len(vers) && vers[next].ts <= id {
			cur[vers[next].k] = vers[next].rate
			next++
		}
		k := id % int64(keys)
		if rate, ok := cur[k]; ok {
			want = append(want, fmt.Sprintf("%d,%d,%d", id, k, rate))
		} else {
			want = append(want, fmt.Sprintf("%d,%d,", id, k))
		}
	}
	slices.Sort(want)
	return path, want
}

// TestTemporalJoinExactlyOnceAcrossFaultsAndRescale fails the temporal
// join's job at checkpoint fault points (it restarts from its latest
// checkpoint), and stops one after a few checkpoints and restores it at
// another parallelism: the committed rows equal the Go answer, each once.
func TestTemporalJoinExactlyOnceAcrossFaultsAndRescale(t *testing.T) {
	const n, keys = 40000, 13
	ratesPath, want := writeRatesFile(t, n, keys)
	for _, spec := range []string{"K4@14=error", "K2@9=error,K8=error"} {
		t.Run(spec, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			run := runWithFaults(t, temporalFileScript(filepath.Join(dir, "ck"), ratesPath, out, n, keys, 2), spec,
				RunOptions{JobName: "tj", Exec: exec.Options{BatchSize: 128}})
			run.expectRestored(t)
			if got := committedLines(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("committed rows differ from the Go answer: %d rows, want %d\nfirst got %v\nfirst want %v\n%s", len(got), len(want), head(got), head(want), run.Stderr)
			}
		})
	}
	t.Run("rescale 2 to 3", func(t *testing.T) {
		dir := t.TempDir()
		ck, out := filepath.Join(dir, "ck"), filepath.Join(dir, "out")
		stderr, stderr2 := stopAndRestore(t, temporalFileScript(ck, ratesPath, out, n, keys, 2), temporalFileScript(ck, ratesPath, out, n, keys, 3),
			RunOptions{JobName: "tj", Exec: exec.Options{BatchSize: 128}})
		if got := committedLines(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("committed rows differ from the Go answer: %d rows, want %d\nfirst got %v\nfirst want %v\n%s\n%s", len(got), len(want), head(got), head(want), stderr, stderr2)
		}
	})
}

// TestLookupJoinMatchesAnswer joins orders (a CSV file with a PROCTIME()
// column, BIGINT keys, some NULL) with a CSV lookup table (INT keys, some
// duplicated, some NULL), inner and left, with a residual, at parallelism
// 1, 2 and 4: every order meets the table's rows of its key.
func TestLookupJoinMatchesAnswer(t *testing.T) {
	orders, opath := writeOrders(t, 300, 8)
	custs, cpath := writeCustomers(t, 40, 9)
	inner, left := map[string]int{}, map[string]int{}
	for _, o := range orders {
		n := 0
		for _, c := range custs {
			if !c.null && c.id == o.k && c.cname != "c3" {
				inner[row(fmt.Sprint(o.k), nullable(!o.null, o.v), c.cname)]++
				left[row(fmt.Sprint(o.k), nullable(!o.null, o.v), c.cname)]++
				n++
			}
		}
		if n == 0 {
			left[row(fmt.Sprint(o.k), nullable(!o.null, o.v), "<NULL>")]++
		}
	}
	ddl := fmt.Sprintf(`
CREATE TABLE orders_pt (k BIGINT, v BIGINT, name STRING, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE customers (id INT, cname STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', 'lookup.cache' = 'FULL');
CREATE TABLE out (k BIGINT, v BIGINT, cname STRING) WITH ('connector' = 'print');
`, opath, cpath)
	cases := []struct {
		name, query string
		want        map[string]int
	}{
		{"inner", "SELECT o.k, o.v, c.cname FROM orders_pt AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.k = c.id AND c.cname <> 'c3'", inner},
		{"left", "SELECT o.k, o.v, c.cname FROM orders_pt AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON c.id = o.k AND c.cname <> 'c3'", left},
	}
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + ddl + "INSERT INTO out " + c.query + ";\n"
				outText := runScript(t, src)
				forPrintLines(t, outText, func(kind, _ string) {
					if kind != "+I" {
						t.Fatalf("lookup join emitted %s; want inserts only", kind)
					}
				})
				got := applyChangelog(t, outText)
				if !slices.Equal(sortedRows(got), sortedRows(c.want)) {
					t.Fatalf("got %d rows, want %d\n got: %v\nwant: %v", len(sortedRows(got)), len(sortedRows(c.want)), head(sortedRows(got)), head(sortedRows(c.want)))
				}
			})
		}
	}
}

// TestTemporalJoinExamples runs examples/join_temporal.sql and
// examples/join_lookup.sql (their data paths made relative to this
// folder) and checks their rows against the answers worked out by hand
// from the example data.
func TestTemporalJoinExamples(t *testing.T) {
	cases := map[string][]string{
		"join_temporal.sql": {
			"[1, EUR, 100.00, 1.0800, 108.000000, 2026-01-01 09:05:00.000]",
			"[2, USD, 50.00, 1.0000, 50.000000, 2026-01-01 09:06:00.000]",
			"[3, JPY, 1000.00, 0.0068, 6.800000, 2026-01-01 09:12:00.000]",
			"[4, EUR, 20.00, 1.0900, 21.800000, 2026-01-01 09:12:30.000]",
			"[5, JPY, 500.00, <NULL>, <NULL>, 2026-01-01 09:16:00.000]", // after JPY's delete
			"[6, GBP, 10.00, <NULL>, <NULL>, 2026-01-01 09:21:00.000]",  // before GBP's first rate
			"[7, EUR, 80.00, 1.0700, 85.600000, 2026-01-01 09:22:00.000]",
			"[8, GBP, 30.00, 1.2700, 38.100000, 2026-01-01 09:30:00.000]",
		},
		"join_lookup.sql": {
			"[1, alice, 12.5, gold, Lisbon]", "[2, bob, 59.99, silver, Oslo]", "[3, alice, 19.99, gold, Lisbon]",
			"[4, carol, 7.25, gold, Porto]", "[5, bob, 30.0, silver, Oslo]", "[6, dave, 9.99, <NULL>, <NULL>]",
			"[7, alice, 14.0, gold, Lisbon]", "[8, carol, 44.9, gold, Porto]", "[9, erin, 22.0, <NULL>, <NULL>]",
			"[10, bob, 5.49, silver, Oslo]",
		},
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			src, err := os.ReadFile("../examples/" + file)
			if err != nil {
				t.Fatal(err)
			}
			script := strings.ReplaceAll(string(src), "'examples/data/", "'../examples/data/")
			var rows []string
			for _, l := range strings.Split(runScript(t, script), "\n") {
				if m := printLine.FindStringSubmatch(l); m != nil {
					if m[1] != "+I" {
						t.Fatalf("%s emitted %s", file, l)
					}
					rows = append(rows, m[2])
				}
			}
			slices.Sort(rows)
			slices.Sort(want)
			if !slices.Equal(rows, want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestLookupJoinExactlyOnceAcrossFaults fails a job with a lookup join at
// a checkpoint fault point: it restarts from its latest checkpoint, loads
// the table again, and the committed rows equal the Go answer, each once.
func TestLookupJoinExactlyOnceAcrossFaults(t *testing.T) {
	const n, keys = 40000, 13
	dir := t.TempDir()
	var b strings.Builder
	for k := range keys - 3 { // keys 10, 11, 12 have no row
		fmt.Fprintf(&b, "%d,name%d\n", k, k)
	}
	side := filepath.Join(dir, "side.csv")
	if err := os.WriteFile(side, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []string
	for id := range n {
		if k := id % keys; k < keys-3 {
			want = append(want, fmt.Sprintf("%d,name%d", id, k))
		} else {
			want = append(want, fmt.Sprintf("%d,", id))
		}
	}
	slices.Sort(want)
	out := filepath.Join(dir, "out")
	script := fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT, k AS id %% %d, pt AS PROCTIME())
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '100000');
CREATE TABLE side (k INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE joined (id BIGINT, name STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO joined SELECT e.id, s.name FROM ev AS e LEFT JOIN side FOR SYSTEM_TIME AS OF e.pt AS s ON e.k = s.k;
`, filepath.Join(dir, "ck"), keys, n-1, side, out)
	h, err := ParseFaults("K4@6=error", "")
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: "lj", Exec: exec.Options{BatchSize: 128, Fault: h}}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "weir: restoring checkpoint") {
		t.Fatalf("the job did not restore a checkpoint:\n%s", stderr.String())
	}
	if got := committedLines(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("committed rows differ from the Go answer: %d rows, want %d\nfirst got %v\nfirst want %v\n%s", len(got), len(want), head(got), head(want), stderr.String())
	}
}
