package session

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPresenceDistinctOverInsertOnlyInputs runs COUNT(DISTINCT), MIN, MAX
// and COUNT(*) per key over inputs the planner deems insert-only (so the
// GroupAgg is NewGroupAggOverInserts, whose DISTINCT entries are
// presence-only and which fails on a retraction): a scan, LIMIT without
// ORDER BY, UNION ALL, a semi join, an inner join, a keep-first dedup on
// processing time, and the split distinct aggregate's partial phase. Each
// must run without a retraction reaching the aggregate and give the answer
// computed here in Go. The seed is printed.
func TestPresenceDistinctOverInsertOnlyInputs(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	orders, opath := writeOrders(t, 500, seed)
	custs, cpath := writeCustomers(t, 40, seed+1)
	mult := map[int64]int64{} // customers per id
	for _, c := range custs {
		if !c.null {
			mult[c.id]++
		}
	}
	// answer: per k, the rows (each times weight) of orders keep accepts.
	answer := func(rows []order, weight func(o order) int64) map[string]int {
		type acc struct {
			n, mn, mx int64
			hasV      bool
			d         map[int64]bool
		}
		g := map[int64]*acc{}
		for _, o := range rows {
			w := weight(o)
			if w == 0 {
				continue
			}
			a := g[o.k]
			if a == nil {
				a = &acc{d: map[int64]bool{}}
				g[o.k] = a
			}
			a.n += w
			if o.null {
				continue
			}
			if !a.hasV || o.v < a.mn {
				a.mn = o.v
			}
			if !a.hasV || o.v > a.mx {
				a.mx = o.v
			}
			a.hasV = true
			a.d[o.v] = true
		}
		out := map[string]int{}
		for k, a := range g {
			out[row(fmt.Sprint(k), fmt.Sprint(len(a.d)), nullable(a.hasV, a.mn), nullable(a.hasV, a.mx), fmt.Sprint(a.n))] = 1
		}
		return out
	}
	one := func(order) int64 { return 1 }
	// The first row of each (k, v, name).
	type kvn struct {
		k, v int64
		null bool
		name string
	}
	seen := map[kvn]bool{}
	var firsts []order
	for _, o := range orders {
		x := kvn{o.k, o.v, o.null, o.name}
		if o.null {
			x.v = 0
		}
		if !seen[x] {
			seen[x] = true
			firsts = append(firsts, o)
		}
	}
	const sel = "SELECT k, COUNT(DISTINCT v), MIN(v), MAX(v), COUNT(*) FROM "
	cases := []struct {
		name, set, query string
		want             map[string]int
	}{
		{"scan", "", sel + "orders GROUP BY k", answer(orders, one)},
		{"limit without order", "", sel + "(SELECT * FROM orders LIMIT 100000) GROUP BY k", answer(orders, one)},
		{"union all", "", sel + "(SELECT k, v FROM orders UNION ALL SELECT k, v FROM orders) GROUP BY k",
			answer(orders, func(order) int64 { return 2 })},
		{"semi join", "", sel + "(SELECT * FROM orders WHERE k IN (SELECT id FROM customers)) GROUP BY k",
			answer(orders, func(o order) int64 { return min(mult[o.k], 1) })},
		{"inner join", "", "SELECT o.k, COUNT(DISTINCT o.v), MIN(o.v), MAX(o.v), COUNT(*) FROM orders o JOIN customers c ON o.k = c.id GROUP BY o.k",
			answer(orders, func(o order) int64 { return mult[o.k] })},
		{"dedup keep-first on proctime", "", sel + "(SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k, v, name ORDER BY pt) AS rn FROM orders) WHERE rn = 1) GROUP BY k",
			answer(firsts, one)},
		{"split distinct", "SET 'table.optimizer.distinct-agg.split.enabled' = 'true';\n", sel + "orders GROUP BY k", answer(orders, one)},
	}
	for _, par := range []int{1, 3} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + c.set +
					fmt.Sprintf("CREATE TABLE orders (k BIGINT, v BIGINT, name STRING, pt AS PROCTIME())\nWITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", opath) +
					fmt.Sprintf(customersDDL, cpath) +
					"CREATE TABLE out (k BIGINT, c BIGINT, mn BIGINT, mx BIGINT, n BIGINT) WITH ('connector' = 'print');\n" +
					"INSERT INTO out " + c.query + ";\n"
				got := applyChangelog(t, runScript(t, src))
				if g, w := sortedRows(got), sortedRows(c.want); !slices.Equal(g, w) {
					t.Fatalf("seed %d: got %d rows, want %d\n got: %s\nwant: %s", seed, len(g), len(w), strings.Join(head(g), " "), strings.Join(head(w), " "))
				}
			})
		}
	}
}

// TestPresenceDistinctOverFullLimit groups the rows of a LIMIT with an
// OFFSET and no ORDER BY, which the planner deems insert-only once the
// limit is full too (later rows are dropped, none displaced): the
// aggregate over it, presence-only, must see no retraction and count
// exactly the limit's rows.
func TestPresenceDistinctOverFullLimit(t *testing.T) {
	_, opath := writeOrders(t, 500, 3)
	for _, par := range []int{1, 3} {
		src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) +
			fmt.Sprintf(ordersDDL, opath) +
			"CREATE TABLE out (n BIGINT, c BIGINT) WITH ('connector' = 'print');\n" +
			"INSERT INTO out SELECT COUNT(*), COUNT(DISTINCT k) FROM (SELECT * FROM orders LIMIT 50 OFFSET 7);\n"
		got := sortedRows(applyChangelog(t, runScript(t, src)))
		if len(got) != 1 || !strings.HasPrefix(got[0], "[50, ") {
			t.Fatalf("p%d: %v, want one row of 50 rows", par, got)
		}
	}
}
