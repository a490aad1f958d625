package session

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestReviewComputedCalcSavepointRescale runs a GROUP BY over a table
// whose computed columns the planner merges into the Calc above (a
// filter on a source column, the key and a summed value computed, an
// unread PROCTIME() column), and a view over that table with a filter
// on a computed column read once; it stops with a savepoint and resumes
// at another parallelism. GroupAgg's integer keys are added with lazy
// key groups (state.Records.AddedInt): a group written to the wrong key
// group would be lost at the rescale. The final upserted results must
// equal the answer computed here. Random key counts, seed printed.
func TestReviewComputedCalcSavepointRescale(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 10))
	const n = 30000
	keys := 50 + r.IntN(3000)
	mod := 2 + r.IntN(5)
	// sums: per k = id % keys, over ids with id % mod <> 1: SUM(id*3+1), COUNT(*).
	// big: per k, over ids with v = id*3+1 > n (the view's filter on a computed column): COUNT(*).
	type agg struct{ s, c int64 }
	sums, big := map[int64]*agg{}, map[int64]int64{}
	for id := int64(0); id < n; id++ {
		k, v := id%int64(keys), id*3+1
		if id%int64(mod) != 1 {
			a := sums[k]
			if a == nil {
				a = &agg{}
				sums[k] = a
			}
			a.s += v
			a.c++
		}
		if v > n {
			big[k]++
		}
	}
	var wantS, wantB []string
	for k, a := range sums {
		wantS = append(wantS, fmt.Sprintf("[%d, %d, %d]", k, a.s, a.c))
	}
	for k, c := range big {
		wantB = append(wantB, fmt.Sprintf("[%d, %d]", k, c))
	}
	sort.Strings(wantS)
	sort.Strings(wantB)
	script := func(ck, sp string, par int) string {
		return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '20ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.savepoints.dir' = '%s';
CREATE TABLE ev (id BIGINT, k AS id %% %d, v AS id * 3 + 1, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '40000');
CREATE VIEW vbig AS SELECT k, v FROM ev WHERE v > %d;
CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'print');
INSERT INTO sums SELECT k, SUM(v), COUNT(*) FROM ev WHERE id %% %d <> 1 GROUP BY k
UNION ALL SELECT k + 1000000, 0, COUNT(*) FROM vbig GROUP BY k;
`, par, ck, sp, keys, n-1, n, mod)
	}
	for _, pars := range [][2]int{{2, 3}, {3, 1}} {
		t.Run(fmt.Sprintf("parallelism %d to %d", pars[0], pars[1]), func(t *testing.T) {
			dir := t.TempDir()
			ck, sp := filepath.Join(dir, "ck"), filepath.Join(dir, "sp")
			path, out1 := stopWithSavepoint(t, script(ck, sp, pars[0]))
			out2, stderr, err := resume(t, script(ck, sp, pars[1]), path, false)
			if err != nil {
				t.Fatalf("seed %d: resume: %v\n%s", seed, err, stderr)
			}
			if !strings.Contains(stderr, "restoring savepoint") {
				t.Fatalf("resume did not restore the savepoint:\n%s", stderr)
			}
			var gotS, gotB []string
			for _, row := range upsertByKey(t, out1+out2) {
				var k, s, c int64
				if _, err := fmt.Sscanf(row, "[%d, %d, %d]", &k, &s, &c); err != nil {
					t.Fatalf("row %q: %v", row, err)
				}
				if k >= 1000000 {
					gotB = append(gotB, fmt.Sprintf("[%d, %d]", k-1000000, c))
				} else {
					gotS = append(gotS, row)
				}
			}
			sort.Strings(gotS)
			sort.Strings(gotB)
			if strings.Join(gotS, "\n") != strings.Join(wantS, "\n") {
				t.Fatalf("seed %d: sums differ: %d rows, want %d\ngot  %v\nwant %v", seed, len(gotS), len(wantS), head(gotS), head(wantS))
			}
			if strings.Join(gotB, "\n") != strings.Join(wantB, "\n") {
				t.Fatalf("seed %d: view counts differ: %d rows, want %d\ngot  %v\nwant %v", seed, len(gotB), len(wantB), head(gotB), head(wantB))
			}
		})
	}
}

// TestReviewComputedCalcShapes runs, over tables with computed columns,
// the shapes the merge of the computed-column Calc meets: a non-trivial
// computed column read once by the filter (merged), read by the filter
// and the projection (not merged), a view with a filter over such a table
// queried with another filter, a UNION ALL of two such tables, and a
// computed column of another computed column's expression shape read
// only by the projection, and RAND() and PROCTIME() columns each read
// twice (so evaluated once a row, not merged). Every row must equal the answer computed here.
func TestReviewComputedCalcShapes(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	n := 2000 + r.IntN(3000)
	m := 3 + r.IntN(9)
	src := fmt.Sprintf(`
SET 'parallelism.default' = '2';
CREATE TABLE a (id BIGINT, x AS id * 7 %% %d, y AS id %% 5 + 100, z AS CAST(id AS STRING)) WITH ('connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '1000000');
CREATE TABLE b (id BIGINT, x2 AS id * 3 - 1, w AS id %% 4) WITH ('connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '1000000');
CREATE TABLE c (id BIGINT, r AS RAND(), pt AS PROCTIME()) WITH ('connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '1000000');
CREATE VIEW v AS SELECT id, z, y FROM a WHERE y <> 102;
CREATE TABLE out (tag INT, p BIGINT, q STRING) WITH ('connector' = 'print');
INSERT INTO out SELECT 1, id, CAST(y AS STRING) FROM a WHERE x > %d;
INSERT INTO out SELECT 2, id + x, CAST(x AS STRING) FROM a WHERE x > %d;
INSERT INTO out SELECT 3, id, z FROM v WHERE id %% 2 = 0;
INSERT INTO out SELECT 4, id, CAST(x AS STRING) FROM a WHERE id < 100 UNION ALL SELECT 5, id, CAST(x2 AS STRING) FROM b WHERE w = 1;
INSERT INTO out SELECT 6, id, CAST(r = r AND pt = pt AS STRING) FROM c WHERE r < 2;
`, m, n-1, n-1, n-1, m/2, m/3)
	want := map[string]int{}
	for id := int64(0); id < int64(n); id++ {
		x, y := id*7%int64(m), id%5+100
		if x > int64(m/2) {
			want[fmt.Sprintf("[1, %d, %d]", id, y)]++
		}
		if x > int64(m/3) {
			want[fmt.Sprintf("[2, %d, %d]", id+x, x)]++
		}
		if y != 102 && id%2 == 0 {
			want[fmt.Sprintf("[3, %d, %d]", id, id)]++
		}
		if id < 100 {
			want[fmt.Sprintf("[4, %d, %d]", id, x)]++
		}
		want[fmt.Sprintf("[6, %d, TRUE]", id)]++ // RAND() and PROCTIME() evaluated once a row
		if id%4 == 1 {
			want[fmt.Sprintf("[5, %d, %d]", id, id*3-1)]++
		}
	}
	got := map[string]int{}
	forPrintLines(t, runScript(t, src), func(kind, row string) {
		if kind != "+I" {
			t.Fatalf("row %s%s: not an insert", kind, row)
		}
		got[row]++
	})
	if g, w := sortedRows(got), sortedRows(want); strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("seed %d: %d rows, want %d\ngot  %v\nwant %v", seed, len(g), len(w), head(g), head(w))
	}
}
