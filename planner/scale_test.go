package planner

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/weir-sql/weir/parser"
)

// scaleShapes are statements that grow with n in different directions:
// each must cost planning work linear in n.
var scaleShapes = []struct {
	name string
	sql  func(n int) string
}{
	{"flat sum", func(n int) string { return "SELECT id" + strings.Repeat(" + id", n-1) + " FROM t" }},
	{"flat concat", func(n int) string { return "SELECT s" + strings.Repeat(" || s", n-1) + " FROM t" }},
	{"AND chain", func(n int) string { return "SELECT id FROM t WHERE id > 0" + strings.Repeat(" AND id > 0", n-1) }},
	{"OR chain", func(n int) string { return "SELECT id FROM t WHERE id = 0" + strings.Repeat(" OR id = 1", n-1) }},
	{"IN list", func(n int) string { return "SELECT id FROM t WHERE id IN (0" + strings.Repeat(", 1", n-1) + ")" }},
	{"CASE arms", func(n int) string {
		return "SELECT CASE" + strings.Repeat(" WHEN id = 1 THEN 2", n) + " ELSE 0 END FROM t"
	}},
	{"select list", func(n int) string {
		var b strings.Builder
		b.WriteString("SELECT id AS c0")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, ", id + %d AS c%d", i, i)
		}
		b.WriteString(" FROM t")
		return b.String()
	}},
	{"aggregates", func(n int) string { return "SELECT id" + strings.Repeat(", SUM(id)", n) + " FROM t GROUP BY id" }},
	{"nested parentheses", func(n int) string {
		return "SELECT " + strings.Repeat("(id + ", n/3) + "1" + strings.Repeat(")", n/3) + " FROM t"
	}},
	{"nested subqueries", func(n int) string {
		return "SELECT id FROM " + strings.Repeat("(SELECT id + 1 AS id FROM ", n/3) + "t" + strings.Repeat(") AS x", n/3)
	}},
	{"UNION ALL", func(n int) string { return "SELECT id FROM t" + strings.Repeat(" UNION ALL SELECT id FROM t", n-1) }},
	{"UNION ALL widening", func(n int) string {
		return "SELECT id FROM t" + strings.Repeat(" UNION ALL SELECT i FROM t UNION ALL SELECT d FROM t", n/2)
	}},
}

// planCost parses and explains sql against a table t, and returns the
// number of heap allocations and of bytes allocated it took.
func planCost(t *testing.T, sql string) (allocs, bytes float64) {
	t.Helper()
	p := &Planner{Catalog: NewCatalog(), Connectors: testRegistry(), Config: map[string]string{"parallelism.default": "2"}}
	ddl, err := parser.Parse("CREATE TABLE t (id BIGINT, i INT, d DOUBLE, s STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '1')")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Catalog.CreateTable(ddl[0].(*parser.CreateTable)); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stmts, err := parser.Parse("EXPLAIN " + sql)
	if err == nil {
		_, err = p.Explain(stmts[0].(*parser.Explain))
	}
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("planning %.80s…: %v", sql, err)
	}
	return float64(after.Mallocs - before.Mallocs), float64(after.TotalAlloc - before.TotalAlloc)
}

// TestPlanningIsLinear checks that doubling the size of a statement at
// most about doubles the work of parsing and planning it, counted in
// allocations and allocated bytes (which, unlike time, do not depend on
// the machine's load). Not under the race detector, which multiplies
// the allocations and made it a quarter of the package's -race time (CI runs
// it without -race; the other tests plan under -race).
func TestPlanningIsLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("counts the allocations of statements of 1,000 and 2,000 terms (not under the race detector; CI runs it without)")
	}
	const n = 1000
	for _, s := range scaleShapes {
		t.Run(s.name, func(t *testing.T) {
			a1, b1 := planCost(t, s.sql(n))
			a2, b2 := planCost(t, s.sql(2*n))
			t.Logf("%d terms: %.0f allocations, %.0f bytes; %d terms: x%.2f, x%.2f", n, a1, b1, 2*n, a2/a1, b2/b1)
			if a2 > 2.5*a1 || b2 > 2.5*b1 {
				t.Errorf("%d terms took %.0f allocations (%.0f bytes), %d terms %.0f (%.0f bytes): x%.2f (x%.2f), more than linear",
					n, a1, b1, 2*n, a2, b2, a2/a1, b2/b1)
			}
		})
	}
}

// TestPlanLongExpression plans the flat sum of 100,000 terms (which took
// 37 s and 530 MB when plan text was rendered by concatenating the text of
// subtrees) within a generous bound of allocations per term.
func TestPlanLongExpression(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("plans a 100,000-term expression (not under -short or the race detector, which multiplies its allocations)")
	}
	const n = 100_000
	allocs, bytes := planCost(t, scaleShapes[0].sql(n))
	t.Logf("%d terms: %.0f allocations, %.0f MB", n, allocs, bytes/(1<<20))
	if allocs > 200*n || bytes > 25_000*n {
		t.Errorf("%d terms took %.0f allocations and %.0f bytes, want at most 200 and 25 KB a term", n, allocs, bytes)
	}
}
