package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/internal/testseed"
)

// This file runs regular joins end to end (CSV files through the planner
// and the runtime to the print sink) at parallelism 1, 2 and 4 and
// compares the applied changelog with answers computed here in Go:
// duplicate keys on both sides, NULL keys, an INT key joined with a BIGINT
// one, a residual predicate, outer joins, a three-way comma join with a
// self-join, and a full outer join of two grouped aggregates (both inputs
// updating, so padded rows are retracted and emitted again).

type customer struct {
	id    int64
	null  bool // id is NULL
	cname string
}

func writeCustomers(t *testing.T, n int, seed uint64) ([]customer, string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 9))
	var b strings.Builder
	rows := make([]customer, n)
	for i := range rows {
		c := customer{id: int64(r.IntN(45)), cname: fmt.Sprintf("c%d", i)}
		if r.IntN(12) == 0 {
			c.null = true
			fmt.Fprintf(&b, ",%s\n", c.cname)
		} else {
			fmt.Fprintf(&b, "%d,%s\n", c.id, c.cname)
		}
		rows[i] = c
	}
	path := filepath.Join(t.TempDir(), "customers.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows, path
}

const customersDDL = `
CREATE TABLE customers (id INT, cname STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
`

func row(vals ...string) string { return "[" + strings.Join(vals, ", ") + "]" }

func TestJoinsMatchBatchAnswer(t *testing.T) {
	orders, opath := writeOrders(t, 400, 3)
	custs, cpath := writeCustomers(t, 60, 4)
	const null = "<NULL>"

	// inner join on k = id (BIGINT = INT) with o.v > 0, and the left join
	// with the same condition.
	inner, left := map[string]int{}, map[string]int{}
	for _, o := range orders {
		n := 0
		for _, c := range custs {
			if !c.null && c.id == o.k && !o.null && o.v > 0 {
				inner[row(fmt.Sprint(o.k), fmt.Sprint(o.v), c.cname)]++
				left[row(fmt.Sprint(o.k), fmt.Sprint(o.v), c.cname)]++
				n++
			}
		}
		if n == 0 {
			left[row(fmt.Sprint(o.k), nullable(!o.null, o.v), null)]++
		}
	}
	// the comma form: orders, customers c, customers d with c.id = d.id.
	comma := map[string]int{}
	for _, o := range orders {
		for _, c := range custs {
			for _, d := range custs {
				if !c.null && !d.null && o.k == c.id && c.id == d.id {
					comma[row(fmt.Sprint(o.k), c.cname, d.cname)]++
				}
			}
		}
	}
	// a full join of the per-key counts, matched when the order count
	// exceeds the customer count.
	on, cn := map[int64]int64{}, map[int64]int64{}
	for _, o := range orders {
		on[o.k]++
	}
	for _, c := range custs {
		if !c.null {
			cn[c.id]++
		}
	}
	full := map[string]int{}
	matchedC := map[int64]bool{}
	for k, n := range on {
		if m, ok := cn[k]; ok && n > m {
			full[row(fmt.Sprint(k), fmt.Sprint(n), fmt.Sprint(k), fmt.Sprint(m))]++
			matchedC[k] = true
		} else {
			full[row(fmt.Sprint(k), fmt.Sprint(n), null, null)]++
		}
	}
	for k, m := range cn {
		if !matchedC[k] {
			full[row(null, null, fmt.Sprint(k), fmt.Sprint(m))]++
		}
	}

	cases := []struct {
		name, cols, query string
		want              map[string]int
	}{
		{"inner", "k BIGINT, v BIGINT, cname STRING", "SELECT o.k, o.v, c.cname FROM orders o JOIN customers c ON o.k = c.id AND o.v > 0", inner},
		{"left", "k BIGINT, v BIGINT, cname STRING", "SELECT o.k, o.v, c.cname FROM orders AS o LEFT JOIN customers AS c ON c.id = o.k AND o.v > 0", left},
		{"right", "k BIGINT, v BIGINT, cname STRING", "SELECT o.k, o.v, c.cname FROM customers AS c RIGHT OUTER JOIN orders AS o ON c.id = o.k AND o.v > 0", left},
		{"comma", "k BIGINT, c STRING, d STRING", "SELECT o.k, c.cname, d.cname FROM orders o, customers c, customers d WHERE o.k = c.id AND c.id = d.id", comma},
		{"full over aggregates", "k BIGINT, n BIGINT, id INT, m BIGINT", `SELECT a.k, a.n, b.id, b.m FROM
			(SELECT k, COUNT(*) AS n FROM orders GROUP BY k) a FULL JOIN
			(SELECT id, COUNT(*) AS m FROM customers WHERE id IS NOT NULL GROUP BY id) b
			ON a.k = b.id AND a.n > b.m`, full},
	}
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) +
					fmt.Sprintf(ordersDDL, opath) + fmt.Sprintf(customersDDL, cpath) +
					"CREATE TABLE out (" + c.cols + ") WITH ('connector' = 'print');\n" +
					"INSERT INTO out " + c.query + ";\n"
				got := applyChangelog(t, runScript(t, src))
				if !slices.Equal(sortedRows(got), sortedRows(c.want)) {
					t.Fatalf("got %d rows, want %d\n got: %v\nwant: %v", len(sortedRows(got)), len(sortedRows(c.want)), head(sortedRows(got)), head(sortedRows(c.want)))
				}
			})
		}
	}
}

func TestJoinIntoInsertOnlySinkFailsAtPlanning(t *testing.T) {
	_, opath := writeOrders(t, 10, 1)
	_, cpath := writeCustomers(t, 10, 1)
	dir := t.TempDir()
	src := fmt.Sprintf(ordersDDL, opath) + fmt.Sprintf(customersDDL, cpath) + fmt.Sprintf(`
CREATE TABLE out (k BIGINT, cname STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO out SELECT o.k, c.cname FROM orders o LEFT JOIN customers c ON o.k = c.id;
`, dir)
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	err := s.RunScript(context.Background(), src, RunOptions{JobName: t.Name(), Quiet: true})
	if err == nil || !strings.Contains(err.Error(), "because of Join(joinType=[LeftOuterJoin]") || !strings.Contains(err.Error(), "line 9:1") {
		t.Fatalf("want a planning error naming the join at the INSERT, got %v", err)
	}
}

// TestIntervalJoinMatchesBatchAnswer joins two event streams (CSV files in
// time order, so no row is late) within a time bound, inner and full
// outer, at parallelism 1, 2 and 4: the output is insert-only and equals
// the answer computed here; the unmatched rows come NULL-padded.
func TestIntervalJoinMatchesBatchAnswer(t *testing.T) {
	type ev struct {
		k, ts int64 // ts in seconds
	}
	r := rand.New(rand.NewPCG(testseed.Seed(t), 5))
	gen := func(n int) ([]ev, string) {
		var b strings.Builder
		evs := make([]ev, n)
		ts := int64(0)
		for i := range evs {
			ts += int64(r.IntN(4))
			evs[i] = ev{k: int64(r.IntN(7)), ts: ts}
			fmt.Fprintf(&b, "%d,1970-01-01 %02d:%02d:%02d.000\n", evs[i].k, ts/3600, ts/60%60, ts%60)
		}
		path := filepath.Join(t.TempDir(), "ev.csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return evs, path
	}
	clicks, cpath := gen(300)
	buys, bpath := gen(200)
	ts := func(s int64) string { return fmt.Sprintf("1970-01-01 %02d:%02d:%02d.000", s/3600, s/60%60, s%60) }
	inner, full := map[string]int{}, map[string]int{}
	bm := make([]bool, len(buys))
	for _, c := range clicks {
		n := 0
		for j, b := range buys {
			if b.k == c.k && b.ts >= c.ts && b.ts <= c.ts+10 {
				inner[row(fmt.Sprint(c.k), ts(c.ts), ts(b.ts))]++
				full[row(fmt.Sprint(c.k), ts(c.ts), ts(b.ts))]++
				bm[j] = true
				n++
			}
		}
		if n == 0 {
			full[row(fmt.Sprint(c.k), ts(c.ts), "<NULL>")]++
		}
	}
	for j, b := range buys {
		if !bm[j] {
			full[row("<NULL>", "<NULL>", ts(b.ts))]++
		}
	}
	ddl := `
CREATE TABLE clicks (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE buys (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out (k INT, cts TIMESTAMP(3), bts TIMESTAMP(3)) WITH ('connector' = 'print');
`
	cases := []struct {
		name, query string
		want        map[string]int
	}{
		{"inner BETWEEN", "SELECT c.k, c.ts, b.ts FROM clicks c JOIN buys b ON c.k = b.k AND b.ts BETWEEN c.ts AND c.ts + INTERVAL '10' SECOND", inner},
		{"full with comparisons", "SELECT c.k, c.ts, b.ts FROM clicks c FULL JOIN buys b ON c.k = b.k AND b.ts >= c.ts AND c.ts > b.ts - INTERVAL '11' SECOND", full},
	}
	// The same joins with both sources in one watermark alignment group
	// (the filesystem source through the common source runner).
	aligned := strings.ReplaceAll(ddl, "'format' = 'csv')",
		"'format' = 'csv', 'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '5 s')")
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("aligned %s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + fmt.Sprintf(aligned, cpath, bpath) +
					"INSERT INTO out " + c.query + ";\n"
				got := applyChangelog(t, runScript(t, src))
				if !slices.Equal(sortedRows(got), sortedRows(c.want)) {
					t.Fatalf("got %d rows, want %d\n got: %v\nwant: %v", len(sortedRows(got)), len(sortedRows(c.want)), head(sortedRows(got)), head(sortedRows(c.want)))
				}
			})
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + fmt.Sprintf(ddl, cpath, bpath) +
					"INSERT INTO out " + c.query + ";\n"
				outText := runScript(t, src)
				forPrintLines(t, outText, func(kind, _ string) {
					if kind != "+I" {
						t.Fatalf("interval join emitted %s; want inserts only", kind)
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

// TestJoinIntervalExample runs examples/join_interval.sql (TIMESTAMP_LTZ
// rowtimes kept in the join's state) and checks its rows against the
// example's generators, evaluated here.
func TestJoinIntervalExample(t *testing.T) {
	src, err := os.ReadFile("../examples/join_interval.sql")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(runScript(t, string(src)), "\n") {
		if m := printLine.FindStringSubmatch(l); m != nil {
			if m[1] != "+I" {
				t.Fatalf("interval join emitted %s", l)
			}
			rows = append(rows, m[2])
		}
	}
	ts := func(min int64) string { return fmt.Sprintf("2026-01-01 %02d:%02d:00.000", min/60, min%60) }
	var want []string
	for id := int64(1); id <= 20; id++ {
		if id%3 != 0 && id%5 != 0 {
			continue
		}
		paid := "<NULL>" // paid 15 minutes later: outside the 10 minutes
		if id%5 != 0 {
			paid = ts(id*3 + 4)
		}
		want = append(want, row(fmt.Sprint(id), ts(id*3), paid))
	}
	slices.Sort(rows)
	slices.Sort(want)
	if !slices.Equal(rows, want) {
		t.Fatalf("rows\n%v\nwant\n%v", rows, want)
	}
}

// TestWatermarkAlignmentExample runs examples/watermark_alignment.sql
// and checks its rows against the example's generators, evaluated here.
func TestWatermarkAlignmentExample(t *testing.T) {
	src, err := os.ReadFile("../examples/watermark_alignment.sql")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(runScript(t, string(src)), "\n") {
		if m := printLine.FindStringSubmatch(l); m != nil {
			rows = append(rows, m[1]+" "+m[2])
		}
	}
	ts := func(s int64) string { return fmt.Sprintf("1970-01-01 %02d:%02d:%02d.000", s/3600, s/60%60, s%60) }
	var want []string
	for f := int64(1); f <= 200; f++ {
		for s := int64(1); s <= 200; s++ {
			if f%20 == 0 && f%10 == s%10 && s >= f-2 && s <= f {
				want = append(want, "+I "+row(fmt.Sprint(f), fmt.Sprint(s), ts(f), ts(s)))
			}
		}
	}
	slices.Sort(rows)
	slices.Sort(want)
	if !slices.Equal(rows, want) {
		t.Fatalf("rows\n%v\nwant\n%v", rows, want)
	}
}

// TestWatermarkAlignmentOptions checks the alignment options' errors at
// CREATE TABLE, and that a job reading a table with valid ones runs (the
// datagen connector, which refuses unknown options, never sees them).
func TestWatermarkAlignmentOptions(t *testing.T) {
	const wm = "CREATE TABLE t (n BIGINT, ts AS TO_TIMESTAMP_LTZ(n, 3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '5', %s)"
	cases := []struct{ ddl, want string }{
		{fmt.Sprintf(wm, "'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '1 s'"), ""},
		{fmt.Sprintf(wm, "'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '1 s', 'scan.watermark.alignment.update-interval' = '100ms'"), ""},
		{fmt.Sprintf(wm, "'scan.watermark.alignment.group' = 'g'"), "needs 'scan.watermark.alignment.max-drift'"},
		{fmt.Sprintf(wm, "'scan.watermark.alignment.group' = ' ', 'scan.watermark.alignment.max-drift' = '1 s'"), "must name a group"},
		{fmt.Sprintf(wm, "'scan.watermark.alignment.max-drift' = '1 s'"), "option 'scan.watermark.alignment.max-drift' needs 'scan.watermark.alignment.group'"},
		{fmt.Sprintf(wm, "'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = 'soon'"), "'scan.watermark.alignment.max-drift': invalid value 'soon'"},
		{fmt.Sprintf(wm, "'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '0 s'"), "expected a positive duration"},
		{fmt.Sprintf(wm, "'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '1 s', 'scan.watermark.alignment.update-interval' = '-1'"), "'scan.watermark.alignment.update-interval': invalid value '-1'"},
		{"CREATE TABLE t (n BIGINT) WITH ('connector' = 'datagen', 'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '1 s')", "1:1: table t: option 'scan.watermark.alignment.group' needs a WATERMARK FOR"},
	}
	for _, c := range cases {
		src := c.ddl + ";"
		if c.want == "" {
			// The job runs: the datagen connector never sees the options.
			src += "CREATE TABLE p (n BIGINT) WITH ('connector' = 'blackhole'); INSERT INTO p SELECT n FROM t;"
		}
		s := New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
		err := s.RunScript(context.Background(), src, RunOptions{JobName: t.Name(), Quiet: true})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.ddl, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error with %q", c.ddl, err, c.want)
		}
	}
}
