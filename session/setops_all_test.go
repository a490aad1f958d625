package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestIntersectExceptAll runs INTERSECT ALL and EXCEPT ALL over random
// multisets read from CSV files, directly and with an updating left input
// (the per-key counts of a GROUP BY, whose rows retract as they grow), at
// parallelism 1, 2 and 4, and compares the changelog's final multiset with
// the answer computed here: min(m, n) copies of a row found m and n times
// (INTERSECT ALL), max(m - n, 0) (EXCEPT ALL).
func TestIntersectExceptAll(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 15))
	dir := t.TempDir()
	write := func(name string, n, domain int) ([]int64, string) {
		var b strings.Builder
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(r.IntN(domain))
			fmt.Fprintf(&b, "%d,%d\n", r.IntN(40), vals[i])
		}
		path := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return vals, path
	}
	av, ap := write("a", 600, 12)
	bv, bp := write("b", 400, 12)
	// The per-key counts of a (its first column), as the GROUP BY computes.
	data, err := os.ReadFile(ap)
	if err != nil {
		t.Fatal(err)
	}
	perKey := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		perKey[strings.Split(l, ",")[0]]++
	}
	var counts []int64
	for _, c := range perKey {
		counts = append(counts, c)
	}
	multiset := func(vs []int64) map[int64]int {
		m := map[int64]int{}
		for _, v := range vs {
			m[v]++
		}
		return m
	}
	answer := func(l, r []int64, except bool) []string {
		lm, rm := multiset(l), multiset(r)
		var out []string
		for v, m := range lm {
			n := min(m, rm[v])
			if except {
				n = max(m-rm[v], 0)
			}
			for range n {
				out = append(out, fmt.Sprintf("[%d]", v))
			}
		}
		sort.Strings(out)
		return out
	}
	bBig := make([]int64, len(bv))
	for i, v := range bv {
		bBig[i] = v * 4 // b's values spread over the counts' range
	}
	cases := []struct {
		name, query string
		want        []string
	}{
		{"intersect all", "SELECT v FROM a INTERSECT ALL SELECT v FROM b", answer(av, bv, false)},
		{"except all", "SELECT v FROM a EXCEPT ALL SELECT v FROM b", answer(av, bv, true)},
		{"except all reversed", "SELECT v FROM b EXCEPT ALL SELECT v FROM a", answer(bv, av, true)},
		{"intersect all updating", "SELECT c FROM (SELECT k, COUNT(*) AS c FROM a GROUP BY k) INTERSECT ALL SELECT v * 4 FROM b", answer(counts, bBig, false)},
		{"except all updating", "SELECT c FROM (SELECT k, COUNT(*) AS c FROM a GROUP BY k) EXCEPT ALL SELECT v * 4 FROM b", answer(counts, bBig, true)},
	}
	for _, tc := range cases {
		for _, par := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/p%d", tc.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) +
					fmt.Sprintf("CREATE TABLE a (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", ap) +
					fmt.Sprintf("CREATE TABLE b (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", bp) +
					"CREATE TABLE out_t (v BIGINT) WITH ('connector' = 'print');\n" +
					"INSERT INTO out_t " + tc.query + ";\n"
				got := sortedRows(applyChangelog(t, runScript(t, src)))
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Fatalf("result differs from the answer\ngot  %d rows: %v\nwant %d rows: %v", len(got), head(got), len(tc.want), head(tc.want))
				}
			})
		}
	}
}
