package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRollupCompositeAndGroupID checks ROLLUP((a, b), c) and CUBE((a, b),
// c), whose composite column (a, b) is kept or left out as one, and
// GROUP_ID() over GROUPING SETS with a repeated set, against the groups
// computed here from random rows, at parallelism 1 and 2, over an
// updating input too (each key's latest row).
func TestRollupCompositeAndGroupID(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 13))
	type row struct {
		a int
		b string
		c int
	}
	var rows []row
	var csv strings.Builder
	for i := range 300 {
		x := row{r.IntN(3), []string{"x", "y"}[r.IntN(2)], r.IntN(4)}
		rows = append(rows, x)
		fmt.Fprintf(&csv, "%d,%d,%s,%d\n", i, x.a, x.b, x.c)
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// sets: per grouping set, which of a, b, c it keeps.
	answer := func(sets [][3]bool) []string {
		type agg struct{ n, sum int }
		var out []string
		for i, keep := range sets {
			gid := 0
			for _, before := range sets[:i] {
				if before == keep {
					gid++
				}
			}
			groups := map[string]*agg{}
			for _, x := range rows {
				k := [3]string{"<NULL>", "<NULL>", "<NULL>"}
				if keep[0] {
					k[0] = fmt.Sprint(x.a)
				}
				if keep[1] {
					k[1] = x.b
				}
				if keep[2] {
					k[2] = fmt.Sprint(x.c)
				}
				key := strings.Join(k[:], ", ")
				if groups[key] == nil {
					groups[key] = &agg{}
				}
				groups[key].n++
				groups[key].sum += x.c
			}
			bits := 0
			for j := range 3 {
				bits <<= 1
				if !keep[j] {
					bits |= 1
				}
			}
			for k, g := range groups {
				out = append(out, fmt.Sprintf("[%s, %d, %d, %d, %d]", k, gid, bits, g.n, g.sum))
			}
		}
		slices.Sort(out)
		return out
	}
	all, ab, none := [3]bool{true, true, true}, [3]bool{true, true, false}, [3]bool{}
	cases := []struct {
		groupBy string
		sets    [][3]bool
	}{
		{"ROLLUP((a, b), c)", [][3]bool{all, ab, none}},
		{"CUBE((a, b), c)", [][3]bool{all, ab, {false, false, true}, none}},
		{"GROUPING SETS ((a, b), (c), (a, b), ())", [][3]bool{ab, {false, false, true}, ab, none}},
	}
	for _, tc := range cases {
		want := answer(tc.sets)
		for _, par := range []int{1, 2} {
			for _, src := range []string{"t", "(SELECT LAST_VALUE(a) AS a, LAST_VALUE(b) AS b, LAST_VALUE(c) AS c FROM t GROUP BY id)"} {
				t.Run(fmt.Sprintf("%s/p%d/%.5s", tc.groupBy, par, src), func(t *testing.T) {
					out := runScript(t, fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par)+
						fmt.Sprintf("CREATE TABLE t (id BIGINT, a INT, b STRING, c INT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", path)+
						"CREATE TABLE o (a INT, b STRING, c INT, gid BIGINT, g BIGINT, n BIGINT, s INT) WITH ('connector' = 'print');\n"+
						"INSERT INTO o SELECT a, b, c, GROUP_ID(), GROUPING(a, b, c), COUNT(*), SUM(c) FROM "+src+" GROUP BY "+tc.groupBy+";\n")
					if got := sortedRows(applyChangelog(t, out)); !slices.Equal(got, want) {
						t.Fatalf("GROUP BY %s:\n got  %v\n want %v", tc.groupBy, head(got), head(want))
					}
				})
			}
		}
	}
}
