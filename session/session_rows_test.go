package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSessionWindowTVFRows selects the rows of a SESSION window TVF
// (no aggregation), per partition and over all rows, from events out of
// order within the watermark's delay, at parallelism 1, 2 and 4, and
// compares them with the sessions computed here: per key, rows in time
// order, a row within gap of its session's last row (its end) joining it;
// each row once, with its session's start (first row) and end (last row +
// gap); at parallelism 1 a last row an hour behind the watermark is
// late: left out and counted.
func TestSessionWindowTVFRows(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 19))
	const layout = "2006-01-02 15:04:05.000"
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	type ev struct {
		id int
		k  string
		ts time.Time
	}
	var evs []ev
	var csv strings.Builder
	clock := base
	for i := range 400 {
		clock = clock.Add(time.Duration(r.IntN(1500)) * time.Millisecond)
		// Out of order by up to 4 s; the watermark waits 5 s.
		ts := clock.Add(-time.Duration(r.IntN(4000)) * time.Millisecond)
		e := ev{i, []string{"a", "b", "c"}[r.IntN(3)], ts}
		evs = append(evs, e)
		fmt.Fprintf(&csv, "%d,%s,%s\n", e.id, e.k, e.ts.Format(layout))
	}
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same, then a row an hour behind the watermark: late, dropped
	// and counted. Read at parallelism 1 only: with more source subtasks
	// the idle ones may hold the watermark back until the end.
	fmt.Fprintf(&csv, "%d,z,%s\n", len(evs), base.Add(-time.Hour).Format(layout))
	latePath := filepath.Join(filepath.Dir(path), "late.csv")
	if err := os.WriteFile(latePath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const gap = 3 * time.Second
	answer := func(keyOf func(ev) string) []string {
		byKey := map[string][]ev{}
		for _, e := range evs {
			byKey[keyOf(e)] = append(byKey[keyOf(e)], e)
		}
		var out []string
		for _, es := range byKey {
			slices.SortStableFunc(es, func(a, b ev) int { return a.ts.Compare(b.ts) })
			for i := 0; i < len(es); {
				j, end := i+1, es[i].ts.Add(gap)
				for j < len(es) && !es[j].ts.After(end) {
					end = es[j].ts.Add(gap)
					j++
				}
				for _, e := range es[i:j] {
					out = append(out, fmt.Sprintf("[%d, %s, %s, %s]", e.id, e.k, es[i].ts.Format(layout), end.Format(layout)))
				}
				i = j
			}
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		name, partition string
		want            []string
	}{
		{"per key", " PARTITION BY k", answer(func(e ev) string { return e.k })},
		{"all rows", "", answer(func(ev) string { return "" })},
	}
	for _, tc := range cases {
		for _, par := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/p%d", tc.name, par), func(t *testing.T) {
				path, wantLate := path, int64(0)
				if par == 1 {
					path, wantLate = latePath, 1
				}
				out, late, _ := runWindowScript(t, fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par)+
					fmt.Sprintf("CREATE TABLE ev (id BIGINT, k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", path)+
					"CREATE TABLE o (id BIGINT, k STRING, ws TIMESTAMP(3), we TIMESTAMP(3)) WITH ('connector' = 'print');\n"+
					"INSERT INTO o SELECT id, k, window_start, window_end FROM TABLE(SESSION(TABLE ev"+tc.partition+", DESCRIPTOR(ts), INTERVAL '3' SECOND));\n")
				forPrintLines(t, out, func(kind, row string) {
					if kind != "+I" {
						t.Fatalf("%s%s: want insert-only", kind, row)
					}
				})
				if late != wantLate {
					t.Errorf("%d late rows, want %d", late, wantLate)
				}
				if got := sortedRows(applyChangelog(t, out)); !slices.Equal(got, tc.want) {
					t.Fatalf("got %d rows, want %d\n got  %v\n want %v", len(got), len(tc.want), head(got), head(tc.want))
				}
			})
		}
	}
}
