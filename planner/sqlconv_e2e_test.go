package planner

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// This file runs VALUES, SELECT without FROM, WITH, INTERSECT, EXCEPT,
// ORDER BY and LIMIT end to end (planner and runtime) at parallelism 1, 2
// and 4 and checks the results against answers computed here in Go.

// runConv runs the script's last statement (a query) after its CREATE
// TABLEs at parallelism par and returns the changelog in arrival order.
func runConv(t *testing.T, script string, par int) []string {
	t.Helper()
	stmts, err := parser.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	p := &Planner{Catalog: NewCatalog(), Connectors: testRegistry(), Config: map[string]string{"parallelism.default": strconv.Itoa(par)}}
	for _, st := range stmts[:len(stmts)-1] {
		if err := p.Catalog.CreateTable(st.(*parser.CreateTable)); err != nil {
			t.Fatal(err)
		}
	}
	sink := &collectSink{}
	plan, err := p.PlanQuery(stmts[len(stmts)-1].(*parser.QueryStmt), func(types.Schema, bool) (connector.Sink, error) { return sink, nil }, "conv")
	if err != nil {
		t.Fatal(err)
	}
	job, err := exec.Start(context.Background(), plan.Graph, exec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	return sink.rows
}

func valuesList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = "(" + strconv.Itoa(x) + ")"
	}
	return strings.Join(parts, ", ")
}

func TestValuesAndSelectWithoutFrom(t *testing.T) {
	for _, c := range []struct{ query, want string }{
		{"VALUES (1, 'a'), (2 + 3, NULL)", "+I[1, a] +I[5, <NULL>]"},
		{"SELECT 1 + 1 AS two, UPPER('x') AS u", "+I[2, X]"},
		{"SELECT id * 10, name FROM (VALUES (1, 'a'), (2, 'b')) AS t(id, name) WHERE id > 1", "+I[20, b]"},
		// A DECIMAL and an INT column widen to the common type.
		{"SELECT x FROM (VALUES (1), (2.5)) AS t(x)", "+I[1.0] +I[2.5]"},
	} {
		for _, par := range []int{1, 4} {
			got := strings.Join(runConv(t, c.query, par), " ")
			if got != c.want {
				t.Errorf("p%d %s: got %s, want %s", par, c.query, got, c.want)
			}
		}
	}
}

// TestIntersectExcept: INTERSECT and EXCEPT of random multisets (as
// VALUES) are the distinct rows in both, or in the left only.
func TestIntersectExcept(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	gen := func() []int {
		xs := make([]int, 60)
		for i := range xs {
			xs[i] = rng.IntN(40)
		}
		return xs
	}
	l, r := gen(), gen()
	inter, except := map[int]bool{}, map[int]bool{}
	for _, x := range l {
		if slices.Contains(r, x) {
			inter[x] = true
		} else {
			except[x] = true
		}
	}
	want := func(m map[int]bool) []string {
		var out []string
		for x := range m {
			out = append(out, "["+strconv.Itoa(x)+"]")
		}
		slices.Sort(out)
		return out
	}
	for _, par := range []int{1, 2, 4} {
		for op, m := range map[string]map[int]bool{"INTERSECT": inter, "EXCEPT": except} {
			q := fmt.Sprintf("SELECT x FROM (VALUES %s) AS l(x) %s SELECT y FROM (VALUES %s) AS r(y)", valuesList(l), op, valuesList(r))
			got := finalRows(runConv(t, q, par))
			if !slices.Equal(got, want(m)) {
				t.Errorf("seed %d p%d %s: got %v, want %v", seed, par, op, got, want(m))
			}
		}
	}
}

// convRow is a row of the file the ORDER BY tests read.
type convRow struct {
	k, v, id int
	ts       int64
}

func writeConvInput(t *testing.T, seed uint64, n int) (string, []convRow) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	var rows []convRow
	var b strings.Builder
	for i := range n {
		// At most 5 s out of order: within the watermark's 10 s.
		r := convRow{k: rng.IntN(9), v: rng.IntN(20) - 5, id: i, ts: 1_700_000_000_000 + int64(i)*1000 + int64(rng.IntN(5000))}
		rows = append(rows, r)
		fmt.Fprintf(&b, `{"k": %d, "v": %d, "id": %d, "ts": "%s"}`+"\n", r.k, r.v, r.id, time.UnixMilli(r.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, rows
}

func convTable(dir string) string {
	return fmt.Sprintf(`CREATE TABLE t (k INT, v INT, id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '10' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, dir)
}

// TestOrderByLimit checks, in the order the rows come out: ORDER BY … LIMIT
// on a bounded input (the first n, sorted), ORDER BY alone (all rows,
// sorted), ORDER BY a rowtime (sorted as the watermark passes), LIMIT alone
// (n rows of the input), and a WITH around them.
func TestOrderByLimit(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	dir, rows := writeConvInput(t, seed, 400)
	format := func(rs []convRow, f func(convRow) string) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = "+I" + f(r)
		}
		return out
	}
	sorted := func(less func(a, b convRow) int, n int) []convRow {
		s := slices.Clone(rows)
		slices.SortStableFunc(s, less)
		if n > 0 {
			s = s[:n]
		}
		return s
	}
	byVDescID := func(a, b convRow) int { return cmp.Or(cmp.Compare(b.v, a.v), cmp.Compare(a.id, b.id)) }
	kvid := func(r convRow) string { return fmt.Sprintf("[%d, %d, %d]", r.k, r.v, r.id) }
	cases := []struct {
		query string
		want  []string
	}{
		{"SELECT k, v, id FROM t ORDER BY v DESC, id LIMIT 7", format(sorted(byVDescID, 7), kvid)},
		{"SELECT k, v, id FROM t ORDER BY v DESC, id", format(sorted(byVDescID, 0), kvid)},
		// An expression that is not selected orders too.
		{"SELECT id FROM t ORDER BY k * 100 + id LIMIT 5", format(sorted(func(a, b convRow) int {
			return cmp.Compare(a.k*100+a.id, b.k*100+b.id)
		}, 5), func(r convRow) string { return fmt.Sprintf("[%d]", r.id) })},
		{"SELECT id, ts FROM t ORDER BY ts, id", format(sorted(func(a, b convRow) int {
			return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.id, b.id))
		}, 0), func(r convRow) string {
			return fmt.Sprintf("[%d, %s]", r.id, time.UnixMilli(r.ts).UTC().Format("2006-01-02 15:04:05.000"))
		})},
		{"WITH big AS (SELECT * FROM t WHERE v > 10) SELECT id FROM big ORDER BY 1 DESC LIMIT 3", format(sorted(func(a, b convRow) int {
			return cmp.Or(cmpBool(b.v > 10, a.v > 10), cmp.Compare(b.id, a.id))
		}, 3), func(r convRow) string { return fmt.Sprintf("[%d]", r.id) })},
		// OFFSET skips the first rows: with LIMIT, FETCH, or alone.
		{"SELECT k, v, id FROM t ORDER BY v DESC, id LIMIT 7 OFFSET 5 ROWS", format(sorted(byVDescID, 12)[5:], kvid)},
		{"SELECT k, v, id FROM t ORDER BY v DESC, id OFFSET 3 ROWS FETCH NEXT 4 ROWS ONLY", format(sorted(byVDescID, 7)[3:], kvid)},
		{"SELECT k, v, id FROM t ORDER BY v DESC, id FETCH FIRST ROW ONLY", format(sorted(byVDescID, 1), kvid)},
		{"SELECT k, v, id FROM t ORDER BY v DESC, id OFFSET 390 ROWS", format(sorted(byVDescID, 0)[390:], kvid)},
		{"SELECT k, v, id FROM t ORDER BY v DESC, id OFFSET 500 ROWS", []string{}},
	}
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			got := runConv(t, convTable(dir)+c.query, par)
			if !slices.Equal(got, c.want) {
				t.Errorf("seed %d p%d %s:\n got  %.400v\n want %.400v", seed, par, c.query, got, c.want)
			}
		}
		// OFFSET and FETCH over an updating input: a Top-N of ranks 3
		// to 5 of the per-key counts, its changelog applied.
		counts := map[int64]int{}
		for _, r := range rows {
			counts[int64(r.k)]++
		}
		type kc struct{ k, c int64 }
		var groups []kc
		for k, c := range counts {
			groups = append(groups, kc{k, int64(c)})
		}
		slices.SortFunc(groups, func(a, b kc) int { return cmp.Or(cmp.Compare(b.c, a.c), cmp.Compare(a.k, b.k)) })
		var want []string
		for _, g := range groups[2:min(5, len(groups))] {
			want = append(want, fmt.Sprintf("[%d, %d]", g.k, g.c))
		}
		sort.Strings(want)
		q := "SELECT k, c FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k) ORDER BY c DESC, k OFFSET 2 ROWS FETCH NEXT 3 ROWS ONLY"
		if got := finalRows(runConv(t, convTable(dir)+q, par)); !slices.Equal(got, want) {
			t.Errorf("seed %d p%d %s:\n got  %v\n want %v", seed, par, q, got, want)
		}
		// LIMIT alone: 9 distinct rows of the input.
		got := finalRows(runConv(t, convTable(dir)+"SELECT id FROM t LIMIT 9", par))
		if len(got) != 9 || len(slices.Compact(slices.Clone(got))) != 9 {
			t.Errorf("seed %d p%d LIMIT 9: got %v", seed, par, got)
		}
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
