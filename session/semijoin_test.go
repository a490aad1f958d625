package session

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This file runs IN / EXISTS subqueries (semi and anti joins) end to end
// at parallelism 1, 2 and 4 and compares the applied changelog with
// answers computed here in Go: NULL keys on both sides (customers have
// NULL ids), NOT IN with a NULL on the right (never true) and with a NULL
// operand, correlated EXISTS with an equality and a residual, and semi and
// anti joins against a grouped aggregate (an updating input) on either
// side.

func TestSemiJoinsMatchBatchAnswer(t *testing.T) {
	orders, opath := writeOrders(t, 400, 5)
	custs, cpath := writeCustomers(t, 60, 6)
	ids := map[int64]bool{}
	for _, c := range custs {
		if !c.null {
			ids[c.id] = true
		}
	}
	counts := map[int64]int{}
	for _, o := range orders {
		counts[o.k]++
	}
	kv := func(o order) string { return row(fmt.Sprint(o.k), nullable(!o.null, o.v)) }
	filter := func(keep func(o order) bool) map[string]int {
		out := map[string]int{}
		for _, o := range orders {
			if keep(o) {
				out[kv(o)]++
			}
		}
		return out
	}
	hasNullID := slices.ContainsFunc(custs, func(c customer) bool { return c.null })
	if !hasNullID || len(ids) == 0 {
		t.Fatal("test data: want customers with and without NULL ids")
	}
	// customers other than c3 with id = k (correlated EXISTS).
	existsOther := func(o order) bool {
		for i, c := range custs {
			if !c.null && c.id == o.k && c.cname != fmt.Sprintf("c%d", 3) && i >= 0 {
				return true
			}
		}
		return false
	}
	// NOT EXISTS a customer with id = k and v > id.
	notExistsBelow := func(o order) bool {
		for _, c := range custs {
			if !c.null && c.id == o.k && !o.null && o.v > c.id {
				return false
			}
		}
		return true
	}
	aggIn := map[string]int{}
	for k, n := range counts {
		if ids[k] {
			aggIn[row(fmt.Sprint(k), fmt.Sprint(n))]++
		}
	}
	cases := []struct {
		name, query string
		want        map[string]int
	}{
		{"in", "SELECT k, v FROM orders WHERE k IN (SELECT id FROM customers)",
			filter(func(o order) bool { return ids[o.k] })},
		{"in and filter", "SELECT k, v FROM orders WHERE v > 0 AND k IN (SELECT id FROM customers WHERE cname <> 'c3')",
			filter(func(o order) bool { return !o.null && o.v > 0 && existsOther(o) })},
		{"not in with a NULL on the right", "SELECT k, v FROM orders WHERE k NOT IN (SELECT id FROM customers)",
			map[string]int{}},
		{"not in without NULLs", "SELECT k, v FROM orders WHERE k NOT IN (SELECT id FROM customers WHERE id IS NOT NULL)",
			filter(func(o order) bool { return !ids[o.k] })},
		{"not in with a NULL operand", "SELECT k, v FROM orders WHERE v NOT IN (SELECT id FROM customers WHERE id IS NOT NULL)",
			filter(func(o order) bool { return !o.null && !ids[o.v] })},
		{"correlated exists", "SELECT k, v FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.k AND c.cname <> 'c3')",
			filter(existsOther)},
		{"correlated not exists with a residual", "SELECT k, v FROM orders o WHERE NOT EXISTS (SELECT * FROM customers c WHERE c.id = o.k AND o.v > c.id)",
			filter(notExistsBelow)},
		{"in a grouped aggregate", "SELECT k, v FROM orders WHERE k IN (SELECT k FROM orders GROUP BY k HAVING COUNT(*) > 12)",
			filter(func(o order) bool { return counts[o.k] > 12 })},
		{"not in a grouped aggregate", "SELECT k, v FROM orders WHERE k NOT IN (SELECT k FROM orders GROUP BY k HAVING COUNT(*) > 12)",
			filter(func(o order) bool { return counts[o.k] <= 12 })},
		{"aggregate in", "SELECT k, n AS v FROM (SELECT k, COUNT(*) AS n FROM orders GROUP BY k) a WHERE a.k IN (SELECT id FROM customers)",
			aggIn},
	}
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) +
					fmt.Sprintf(ordersDDL, opath) + fmt.Sprintf(customersDDL, cpath) +
					"CREATE TABLE out (k BIGINT, v BIGINT) WITH ('connector' = 'print');\n" +
					"INSERT INTO out " + c.query + ";\n"
				got := applyChangelog(t, runScript(t, src))
				if !slices.Equal(sortedRows(got), sortedRows(c.want)) {
					t.Fatalf("got %d rows, want %d\n got: %v\nwant: %v", len(sortedRows(got)), len(sortedRows(c.want)), head(sortedRows(got)), head(sortedRows(c.want)))
				}
			})
		}
	}
}

// TestJoinSemiExample runs examples/join_semi.sql and checks the applied
// output of its three queries against its data files, read here.
func TestJoinSemiExample(t *testing.T) {
	src, err := os.ReadFile("../examples/join_semi.sql")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(string(src), "'examples/data/", "'../examples/data/")
	readCSV := func(name string) [][]string {
		data, err := os.ReadFile("../examples/data/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			out = append(out, strings.Split(l, ","))
		}
		return out
	}
	orders, customers := readCSV("orders.csv"), readCSV("customers.csv")
	tier := map[string]string{}
	for _, c := range customers {
		tier[c[0]] = c[1]
	}
	want := map[string]int{}
	spent := map[string]float64{}
	for _, o := range orders {
		amount, err := strconv.ParseFloat(o[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		spent[o[1]] += amount
		if _, ok := tier[o[1]]; ok {
			a := strconv.FormatFloat(amount, 'f', -1, 64)
			if !strings.Contains(a, ".") {
				a += ".0" // DOUBLE prints as 30.0
			}
			want[row(o[0], o[1], a)]++
		} else {
			want[row(o[0], o[1])]++
		}
	}
	for name, sum := range spent {
		if t, ok := tier[name]; ok && sum > 50 {
			want[row(name, t)]++
		}
	}
	var lines []string
	for _, l := range strings.Split(runScript(t, script), "\n") {
		if printLine.MatchString(l) {
			lines = append(lines, l)
		}
	}
	got := applyChangelog(t, strings.Join(lines, "\n"))
	if !slices.Equal(sortedRows(got), sortedRows(want)) {
		t.Fatalf("got\n%v\nwant\n%v", sortedRows(got), sortedRows(want))
	}
}
