package planner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// This file runs the split distinct aggregation end to end at parallelism
// 1, 2 and 4 and checks the results against answers computed here in Go.

// splitRow is a bid-like row: a few keys k (and NULL), two distinct
// arguments a and b with NULLs, a price p and a string s.
type splitRow struct {
	k    *string
	a, b *int
	p    int
	s    string
}

func splitInput(seed uint64, n int) []splitRow {
	r := rand.New(rand.NewPCG(seed, 3))
	keys := []string{"x", "y", "z"}
	rows := make([]splitRow, n)
	for i := range rows {
		if x := r.IntN(8); x < 3 {
			rows[i].k = &keys[x]
		} else if x < 7 {
			rows[i].k = &keys[0] // a hot key
		}
		if r.IntN(6) > 0 {
			a := r.IntN(40)
			rows[i].a = &a
		}
		if r.IntN(5) > 0 {
			b := r.IntN(25) - 5
			rows[i].b = &b
		}
		rows[i].p = r.IntN(100)
		rows[i].s = fmt.Sprintf("%02d:%02d", r.IntN(24), r.IntN(60))
	}
	return rows
}

func splitValues(rows []splitRow) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		k, a, b := "CAST(NULL AS VARCHAR)", "CAST(NULL AS BIGINT)", "CAST(NULL AS BIGINT)"
		if r.k != nil {
			k = "'" + *r.k + "'"
		}
		if r.a != nil {
			a = fmt.Sprintf("CAST(%d AS BIGINT)", *r.a)
		}
		if r.b != nil {
			b = fmt.Sprintf("CAST(%d AS BIGINT)", *r.b)
		}
		parts[i] = fmt.Sprintf("(%s, %s, %s, %d, '%s')", k, a, b, r.p, r.s)
	}
	return "(VALUES " + strings.Join(parts, ", ") + ") AS t(k, a, b, p, s)"
}

// splitSelect is the q15/q16-shaped select list (after the key): MAX of a
// string, COUNT(*) with and without FILTER, COUNT DISTINCT of two
// arguments with FILTERs, SUM DISTINCT, SUM of a distinct argument (its
// column is read by two copies), MIN DISTINCT, COUNT(DISTINCT k) (a key
// column read by a copy) and COUNT.
const splitSelect = `MAX(s), COUNT(*), COUNT(*) FILTER (WHERE p < 30),
  COUNT(DISTINCT a), COUNT(DISTINCT a) FILTER (WHERE p < 30), COUNT(DISTINCT a) FILTER (WHERE p >= 30 AND p < 70),
  COUNT(DISTINCT b), COUNT(DISTINCT b) FILTER (WHERE p >= 70), SUM(DISTINCT b), SUM(b), MIN(DISTINCT a),
  COUNT(DISTINCT k), COUNT(a)`

// splitAnswer computes splitSelect per group of rows, grouped by key
// (nil: one global group), as "[key, results…]" rows.
func splitAnswer(rows []splitRow, key func(splitRow) string) []string {
	type agg struct {
		m                string
		n, nLow, ca      int
		da, daLow, daMid map[int]bool
		db, dbHigh       map[int]bool
		dk               map[string]bool
		sumB, minA       *int
	}
	groups := map[string]*agg{}
	for _, r := range rows {
		kt := ""
		if key != nil {
			kt = key(r) + ", "
		}
		g := groups[kt]
		if g == nil {
			g = &agg{da: map[int]bool{}, daLow: map[int]bool{}, daMid: map[int]bool{}, db: map[int]bool{}, dbHigh: map[int]bool{}, dk: map[string]bool{}}
			groups[kt] = g
		}
		g.m = max(g.m, r.s)
		g.n++
		if r.p < 30 {
			g.nLow++
		}
		if r.a != nil {
			g.ca++
			g.da[*r.a] = true
			if r.p < 30 {
				g.daLow[*r.a] = true
			}
			if r.p >= 30 && r.p < 70 {
				g.daMid[*r.a] = true
			}
			if g.minA == nil || *r.a < *g.minA {
				g.minA = r.a
			}
		}
		if r.b != nil {
			g.db[*r.b] = true
			if r.p >= 70 {
				g.dbHigh[*r.b] = true
			}
			s := *r.b
			if g.sumB != nil {
				s += *g.sumB
			}
			g.sumB = &s
		}
		if r.k != nil {
			g.dk[*r.k] = true
		}
	}
	var out []string
	for kt, g := range groups {
		sumDistinctB := "<NULL>"
		if len(g.db) > 0 {
			s := 0
			for b := range g.db {
				s += b
			}
			sumDistinctB = strconv.Itoa(s)
		}
		out = append(out, fmt.Sprintf("[%s%s, %d, %d, %d, %d, %d, %d, %d, %s, %s, %s, %d, %d]", kt, g.m, g.n, g.nLow,
			len(g.da), len(g.daLow), len(g.daMid), len(g.db), len(g.dbHigh), sumDistinctB, vText(g.sumB), vText(g.minA), len(g.dk), g.ca))
	}
	sort.Strings(out)
	return out
}

// oneArgAnswer computes COUNT(DISTINCT a), COUNT(*) per key.
func oneArgAnswer(rows []splitRow, key func(splitRow) string) []string {
	distinct, count := map[string]map[int]bool{}, map[string]int{}
	for _, r := range rows {
		k := key(r)
		if distinct[k] == nil {
			distinct[k] = map[int]bool{}
		}
		if r.a != nil {
			distinct[k][*r.a] = true
		}
		count[k]++
	}
	var out []string
	for k, n := range count {
		out = append(out, fmt.Sprintf("[%s, %d, %d]", k, len(distinct[k]), n))
	}
	sort.Strings(out)
	return out
}

// runSplit plans query with config (and parallelism par) and runs it,
// returning its changelog and its EXPLAIN.
func runSplit(t *testing.T, query string, par int, config map[string]string, opts exec.Options) ([]string, string) {
	t.Helper()
	stmts, err := parser.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{"parallelism.default": strconv.Itoa(par)}
	for k, v := range config {
		cfg[k] = v
	}
	p := &Planner{Catalog: NewCatalog(), Connectors: testRegistry(), Config: cfg}
	sink := &collectSink{}
	plan, err := p.PlanQuery(stmts[0].(*parser.QueryStmt), func(types.Schema, bool) (connector.Sink, error) { return sink, nil }, "split")
	if err != nil {
		t.Fatal(err)
	}
	job, err := exec.Start(context.Background(), plan.Graph, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	return sink.rows, plan.Explain
}

// TestSplitDistinctAgg runs q15/q16-shaped aggregates (grouped by a few
// keys with NULL, and global) with the split distinct aggregation on, at
// parallelism 1, 2 and 4, with 1, 4 and 1024 buckets, with and without
// mini-batch (with 4 buckets and mini-batch, TWO_PHASE): the plan is split, emits no -D, and the final rows equal the
// Go answer.
func TestSplitDistinctAgg(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rows := splitInput(seed, 400)
	from := splitValues(rows)
	keyText := func(r splitRow) string {
		if r.k == nil {
			return "<NULL>"
		}
		return *r.k
	}
	cases := []struct {
		name, query string
		want        []string
	}{
		{"grouped", "SELECT k, " + splitSelect + " FROM " + from + " GROUP BY k", splitAnswer(rows, keyText)},
		{"global", "SELECT " + splitSelect + " FROM " + from, splitAnswer(rows, nil)},
		// One distinct argument, so no Expand; with one bucket each key
		// has one inner group, whose -U and +U may come in two batches.
		{"one argument", "SELECT k, COUNT(DISTINCT a), COUNT(*) FROM " + from + " GROUP BY k", oneArgAnswer(rows, keyText)},
	}
	for _, c := range cases {
		for _, buckets := range []int{1, 4, 1024} {
			for _, par := range []int{1, 2, 4} {
				for _, mini := range []bool{false, true} {
					config := map[string]string{KeyDistinctAggSplit: "true", KeyDistinctAggBuckets: strconv.Itoa(buckets)}
					if mini && buckets == 4 {
						// The inner aggregate in two phases.
						config[KeyAggPhaseStrategy] = "TWO_PHASE"
					}
					log, explain := runSplit(t, c.query, par, config, exec.Options{MiniBatch: mini, BatchSize: 16})
					if !strings.Contains(explain, "partialFinalType=[FINAL]") {
						t.Fatalf("%s: the plan is not split:\n%s", c.name, explain)
					}
					if config[KeyAggPhaseStrategy] != "" && !strings.Contains(explain, "LocalGroupAggregate") {
						t.Fatalf("%s: TWO_PHASE, and the inner aggregate has one phase:\n%s", c.name, explain)
					}
					for _, r := range log {
						if strings.HasPrefix(r, "-D") {
							t.Fatalf("%s p%d buckets=%d mini-batch=%t: %s in the output", c.name, par, buckets, mini, r)
						}
					}
					if got := finalRows(log); !slices.Equal(got, c.want) {
						t.Errorf("%s p%d buckets=%d mini-batch=%t:\ngot  %v\nwant %v", c.name, par, buckets, mini, got, c.want)
					}
				}
			}
		}
	}
}

// TestSplitDistinctAggDeclined: aggregates the split cannot take are
// planned as before, the option on: over updating input, with a call the
// outer cannot merge (AVG), and with only MIN/MAX DISTINCT.
func TestSplitDistinctAggDeclined(t *testing.T) {
	rows := splitInput(7, 50)
	from := splitValues(rows)
	config := map[string]string{KeyDistinctAggSplit: "true"}
	for _, q := range []string{
		"SELECT k, COUNT(DISTINCT a) FROM (SELECT k, a, COUNT(*) AS c FROM " + from + " GROUP BY k, a) GROUP BY k",
		"SELECT k, COUNT(DISTINCT a), AVG(b) FROM " + from + " GROUP BY k",
		"SELECT k, MAX(DISTINCT a), MIN(DISTINCT b) FROM " + from + " GROUP BY k",
	} {
		_, explain := runSplit(t, q, 2, config, exec.Options{})
		if strings.Contains(explain, "partialFinalType") {
			t.Errorf("%s: split, want the plan unchanged:\n%s", q, explain)
		}
	}
}

// TestSplitDistinctAggIDs: the aggregates of the split plan have operator
// ids of their own, which change with the bucket number (a value's bucket
// would), so that a savepoint of another plan is refused, not misread.
func TestSplitDistinctAggIDs(t *testing.T) {
	q := "SELECT k, COUNT(DISTINCT a), COUNT(DISTINCT b) FROM " + splitValues(splitInput(1, 10)) + " GROUP BY k"
	aggIDs := func(config map[string]string) []string {
		stmts, err := parser.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		p := &Planner{Catalog: NewCatalog(), Connectors: testRegistry(), Config: config}
		plan, err := p.PlanQuery(stmts[0].(*parser.QueryStmt), func(types.Schema, bool) (connector.Sink, error) { return &collectSink{}, nil }, "ids")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, v := range plan.Graph.Vertices {
			for _, op := range v.Operators {
				if strings.Contains(op.Name, "GroupAggregate") {
					ids = append(ids, op.ID)
				}
			}
		}
		return ids
	}
	plain := aggIDs(map[string]string{"parallelism.default": "2"})
	split := aggIDs(map[string]string{"parallelism.default": "2", KeyDistinctAggSplit: "true"})
	split16 := aggIDs(map[string]string{"parallelism.default": "2", KeyDistinctAggSplit: "true", KeyDistinctAggBuckets: "16"})
	if len(plain) != 1 || len(split) != 2 || len(split16) != 2 {
		t.Fatalf("aggregates: %v unsplit, %v and %v split, want 1, 2 and 2", plain, split, split16)
	}
	for _, id := range append(split, split16...) {
		if id == plain[0] {
			t.Errorf("a split aggregate has the unsplit one's id %s", id)
		}
	}
	for i := range split {
		if split[i] == split16[i] {
			t.Errorf("aggregate %d has id %s with 1024 buckets and with 16", i, split[i])
		}
	}
}
