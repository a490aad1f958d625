package session

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// changelog applies the lines a print sink wrote ("+I[..]", "2> -U[..]")
// and returns the resulting multiset of rows, each rendered as "[a, b]".
func applyChangelog(t *testing.T, out string) map[string]int {
	t.Helper()
	rows := map[string]int{}
	forPrintLines(t, out, func(kind, row string) {
		switch kind {
		case "+I", "+U":
			rows[row]++
		case "-U", "-D":
			rows[row]--
			if rows[row] < 0 {
				t.Fatalf("retraction of a row never added: %s%s", kind, row)
			}
			if rows[row] == 0 {
				delete(rows, row)
			}
		}
	})
	return rows
}

// printLine is a line of the print sink: an optional "id:n> " prefix, the
// row kind, the row.
var printLine = regexp.MustCompile(`^(?:\S*> )?([+-][IUD])(\[.*\])$`)

// forPrintLines calls fn with the kind ("+I", ...) and the row ("[a, b]")
// of every line the print sink wrote.
func forPrintLines(t *testing.T, out string, fn func(kind, row string)) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		m := printLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected print line %q", l)
		}
		fn(m[1], m[2])
	}
}

func sortedRows(m map[string]int) []string {
	var out []string
	for r, n := range m {
		for i := 0; i < n; i++ {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// runScript runs src in a fresh session and returns what the print sinks wrote.
func runScript(t *testing.T, src string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	err := s.RunScript(context.Background(), src, RunOptions{JobName: t.Name(), Quiet: true, Exec: exec.Options{BatchSize: 64}})
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	return stdout.String()
}

type order struct {
	k    int64
	v    int64
	null bool // v is NULL
	name string
}

// writeOrders writes n random rows to a CSV file and returns them with the path.
func writeOrders(t *testing.T, n int, seed uint64) ([]order, string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	rows := make([]order, n)
	names := []string{"ann", "bob", "cy", "dee", "eve"}
	for i := range rows {
		o := order{k: int64(r.IntN(37)), v: int64(r.IntN(201) - 100), name: names[r.IntN(len(names))]}
		if r.IntN(10) == 0 {
			o.null = true
		}
		rows[i] = o
		if o.null {
			fmt.Fprintf(&b, "%d,,%s\n", o.k, o.name)
		} else {
			fmt.Fprintf(&b, "%d,%d,%s\n", o.k, o.v, o.name)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "orders.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows, path
}

const ordersDDL = `
CREATE TABLE orders (k BIGINT, v BIGINT, name STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
`

type aggState struct {
	count, countV, sum int64
	min, max           int64
	distinct           map[int64]bool
	names              map[string]bool
}

func batchAggregate(rows []order) map[int64]*aggState {
	groups := map[int64]*aggState{}
	for _, o := range rows {
		g := groups[o.k]
		if g == nil {
			g = &aggState{distinct: map[int64]bool{}, names: map[string]bool{}}
			groups[o.k] = g
		}
		g.count++
		g.names[o.name] = true
		if o.null {
			continue
		}
		if g.countV == 0 || o.v < g.min {
			g.min = o.v
		}
		if g.countV == 0 || o.v > g.max {
			g.max = o.v
		}
		g.countV++
		g.sum += o.v
		g.distinct[o.v] = true
	}
	return groups
}

func nullable(ok bool, v int64) string {
	if !ok {
		return "<NULL>"
	}
	return fmt.Sprint(v)
}

// TestGroupedQueriesMatchBatchAnswer runs grouped queries over a CSV file at
// several parallelisms and compares the changelog's final state with the
// answer computed here in plain Go.
func TestGroupedQueriesMatchBatchAnswer(t *testing.T) {
	rows, path := writeOrders(t, 5000, 1)
	groups := batchAggregate(rows)

	cases := []struct {
		name   string
		sink   string
		query  string
		answer func() []string
	}{
		{
			name:  "sum count min max avg",
			sink:  "k BIGINT, s BIGINT, c BIGINT, cv BIGINT, mn BIGINT, mx BIGINT, av BIGINT",
			query: "SELECT k, SUM(v), COUNT(*), COUNT(v), MIN(v), MAX(v), AVG(v) FROM orders GROUP BY k",
			answer: func() []string {
				var out []string
				for k, g := range groups {
					has := g.countV > 0
					avg := int64(0)
					if has {
						avg = g.sum / g.countV
					}
					out = append(out, fmt.Sprintf("[%d, %s, %d, %d, %s, %s, %s]", k, nullable(has, g.sum), g.count, g.countV,
						nullable(has, g.min), nullable(has, g.max), nullable(has, avg)))
				}
				return out
			},
		},
		{
			name:  "count distinct and where",
			sink:  "k BIGINT, d BIGINT, n BIGINT",
			query: "SELECT k, COUNT(DISTINCT v), COUNT(DISTINCT name) FROM orders WHERE k < 20 GROUP BY k",
			answer: func() []string {
				var out []string
				for k, g := range groups {
					if k < 20 {
						out = append(out, fmt.Sprintf("[%d, %d, %d]", k, len(g.distinct), len(g.names)))
					}
				}
				return out
			},
		},
		{
			name:  "having on an updating result",
			sink:  "k BIGINT, s BIGINT",
			query: "SELECT k, SUM(v) AS s FROM orders GROUP BY k HAVING SUM(v) > 0",
			answer: func() []string {
				var out []string
				for k, g := range groups {
					if g.countV > 0 && g.sum > 0 {
						out = append(out, fmt.Sprintf("[%d, %d]", k, g.sum))
					}
				}
				return out
			},
		},
		{
			name:  "aggregate over an aggregate",
			sink:  "bucket BIGINT, keys BIGINT",
			query: "SELECT s / 100, COUNT(*) FROM (SELECT k, SUM(v) AS s FROM orders WHERE v IS NOT NULL GROUP BY k) GROUP BY s / 100",
			answer: func() []string {
				buckets := map[int64]int64{}
				for _, g := range groups {
					if g.countV > 0 {
						buckets[g.sum/100]++
					}
				}
				var out []string
				for b, n := range buckets {
					out = append(out, fmt.Sprintf("[%d, %d]", b, n))
				}
				return out
			},
		},
		{
			name:  "global aggregate",
			sink:  "c BIGINT, s BIGINT",
			query: "SELECT COUNT(*), SUM(v) FROM orders",
			answer: func() []string {
				var c, s int64
				for _, o := range rows {
					c++
					if !o.null {
						s += o.v
					}
				}
				return []string{fmt.Sprintf("[%d, %d]", c, s)}
			},
		},
		{
			name:  "count star alone",
			sink:  "c BIGINT",
			query: "SELECT COUNT(*) FROM orders",
			answer: func() []string {
				return []string{fmt.Sprintf("[%d]", len(rows))}
			},
		},
		{
			name:  "expressions in group keys and union all",
			sink:  "parity BIGINT, s BIGINT",
			query: "SELECT k % 2, SUM(v) FROM (SELECT k, v FROM orders UNION ALL SELECT k, v * 2 FROM orders WHERE name = 'ann') GROUP BY k % 2",
			answer: func() []string {
				sums := map[int64]int64{}
				seen := map[int64]bool{}
				for _, o := range rows {
					seen[o.k%2] = true
					if !o.null {
						sums[o.k%2] += o.v
						if o.name == "ann" {
							sums[o.k%2] += 2 * o.v
						}
					}
				}
				var out []string
				for p := range seen {
					out = append(out, fmt.Sprintf("[%d, %d]", p, sums[p]))
				}
				return out
			},
		},
	}
	for _, tc := range cases {
		want := tc.answer()
		sort.Strings(want)
		// Each query at parallelism 1, 2 and 4, in one phase and in two (a
		// local pre-aggregation before the exchange, for insert-only input).
		for _, run := range []struct {
			par      int
			strategy string
		}{{1, "ONE_PHASE"}, {2, "ONE_PHASE"}, {4, "ONE_PHASE"}, {1, "TWO_PHASE"}, {2, "TWO_PHASE"}, {4, "TWO_PHASE"}} {
			par := run.par
			t.Run(fmt.Sprintf("%s/p%d/%s", tc.name, par, run.strategy), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) +
					fmt.Sprintf("SET 'table.optimizer.agg-phase-strategy' = '%s';\n", run.strategy) +
					fmt.Sprintf(ordersDDL, path) +
					fmt.Sprintf("CREATE TABLE out_t (%s) WITH ('connector' = 'print');\n", tc.sink) +
					"INSERT INTO out_t " + tc.query + ";\n"
				got := sortedRows(applyChangelog(t, runScript(t, src)))
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("result differs from the batch answer\ngot  %d rows: %v\nwant %d rows: %v", len(got), head(got), len(want), head(want))
				}
			})
		}
	}
}

func head(rows []string) []string {
	if len(rows) > 10 {
		return rows[:10]
	}
	return rows
}

// TestParitySumExample runs the DESIGN.md worked example through datagen
// sequences at several parallelisms.
func TestParitySumExample(t *testing.T) {
	const n = 2000
	var odd, even int64
	for i := int64(1); i <= n; i++ {
		if i%2 == 0 {
			even += 2 * i
		} else {
			odd += 2 * i
		}
	}
	want := []string{fmt.Sprintf("[0, %d]", even), fmt.Sprintf("[1, %d]", odd)}
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			src := fmt.Sprintf(`SET 'parallelism.default' = '%d';
CREATE TABLE s1 (n BIGINT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '%d', 'rows-per-second' = '100000000');
CREATE TABLE s2 (n BIGINT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '%d', 'rows-per-second' = '100000000');
CREATE TABLE sums (parity BIGINT, total BIGINT) WITH ('connector' = 'print');
INSERT INTO sums SELECT n %% 2 AS parity, SUM(n) AS total
FROM (SELECT n FROM s1 UNION ALL SELECT n FROM s2) GROUP BY n %% 2;`, par, n, n)
			got := sortedRows(applyChangelog(t, runScript(t, src)))
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}
