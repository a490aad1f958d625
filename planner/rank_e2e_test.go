package planner

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// This file runs Top-N and deduplication queries end to end (planner and
// runtime, a JSON file as input) at parallelism 1, 2 and 4, and checks
// their final results against answers computed here in Go.

// rankRow is one input row: key k, sort value v (nil: NULL), unique id,
// event time ts (ms).
type rankRow struct {
	k  int
	v  *int
	id int
	ts int64
}

// writeRankInput writes n random rows with few keys, few values (ties)
// and some NULLs as one JSON file and returns its folder and the rows.
func writeRankInput(t *testing.T, seed uint64, n int) (string, []rankRow) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	var rows []rankRow
	var b strings.Builder
	for i := range n {
		r := rankRow{k: rng.IntN(7), id: i, ts: 1_700_000_000_000 + int64(rng.IntN(50))*1000}
		vs := "null"
		if rng.IntN(8) != 0 {
			v := rng.IntN(10) - 3
			r.v = &v
			vs = strconv.Itoa(v)
		}
		rows = append(rows, r)
		fmt.Fprintf(&b, `{"k": %d, "v": %s, "id": %d, "ts": "%s"}`+"\n", r.k, vs, r.id, time.UnixMilli(r.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, rows
}

// runRankQuery runs query over table t (the rows of dir) at parallelism
// par and returns its final rows ("[a, b]", sorted).
func runRankQuery(t *testing.T, dir, query string, par int) []string {
	t.Helper()
	return finalRows(runRankLog(t, dir, query, par))
}

// runRankLog runs query over table t (the rows of dir) at parallelism par
// and returns its changelog ("+I[a, b]", in the order the sink got it).
func runRankLog(t *testing.T, dir, query string, par int) []string {
	t.Helper()
	script := fmt.Sprintf(`CREATE TABLE t (k INT, v INT, id BIGINT, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '10' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
%s`, dir, query)
	stmts, err := parser.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	p := &Planner{Catalog: NewCatalog(), Connectors: testRegistry(), Config: map[string]string{"parallelism.default": strconv.Itoa(par)}}
	if err := p.Catalog.CreateTable(stmts[0].(*parser.CreateTable)); err != nil {
		t.Fatal(err)
	}
	sink := &collectSink{}
	plan, err := p.PlanQuery(stmts[1].(*parser.QueryStmt), func(types.Schema, bool) (connector.Sink, error) { return sink, nil }, "rank")
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

// nullsLow compares optional ints with NULL lowest (Flink's default).
func nullsLow(a, b *int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

func vText(v *int) string {
	if v == nil {
		return "<NULL>"
	}
	return strconv.Itoa(*v)
}

// ranks returns each row's RANK, DENSE_RANK of sorted rows (by less as
// a comparison).
func ranks(rows []rankRow, c func(a, b rankRow) int) (rank, dense []int) {
	rank, dense = make([]int, len(rows)), make([]int, len(rows))
	for i := range rows {
		if i > 0 && c(rows[i-1], rows[i]) == 0 {
			rank[i], dense[i] = rank[i-1], dense[i-1]
			continue
		}
		rank[i] = i + 1
		dense[i] = 1
		if i > 0 {
			dense[i] = dense[i-1] + 1
		}
	}
	return rank, dense
}

func byKey(rows []rankRow) map[int][]rankRow {
	m := map[int][]rankRow{}
	for _, r := range rows {
		m[r.k] = append(m[r.k], r)
	}
	return m
}

func sortedLines(ls []string) []string { slices.Sort(ls); return ls }

func checkRows(t *testing.T, what string, par int, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s at parallelism %d:\ngot  %v\nwant %v", what, par, got, want)
	}
}

func TestTopNAppendOnly(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeRankInput(t, seed, 400)
	desc := func(a, b rankRow) int { return -nullsLow(a.v, b.v) } // DESC: NULLs last
	for _, par := range []int{1, 2, 4} {
		// ROW_NUMBER, top 3 by v DESC: ties may come in any order, so
		// compare (k, v, rn), which is determined.
		got := runRankQuery(t, dir, `SELECT k, v, rn FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM t) WHERE rn <= 3`, par)
		var want []string
		for k, rs := range byKey(rows) {
			slices.SortStableFunc(rs, desc)
			for i := 0; i < 3 && i < len(rs); i++ {
				want = append(want, fmt.Sprintf("[%d, %s, %d]", k, vText(rs[i].v), i+1))
			}
		}
		checkRows(t, "ROW_NUMBER top 3", par, got, sortedLines(want))

		// RANK, ranks 1 to 3 by v ASC (NULLs first), rank not selected:
		// the rows themselves are determined.
		got = runRankQuery(t, dir, `SELECT k, v, id FROM (SELECT *, RANK() OVER (PARTITION BY k ORDER BY v) AS r FROM t) WHERE r <= 3`, par)
		want = nil
		for k, rs := range byKey(rows) {
			slices.SortStableFunc(rs, func(a, b rankRow) int { return nullsLow(a.v, b.v) })
			rank, _ := ranks(rs, func(a, b rankRow) int { return nullsLow(a.v, b.v) })
			for i, r := range rs {
				if rank[i] <= 3 {
					want = append(want, fmt.Sprintf("[%d, %s, %d]", k, vText(r.v), r.id))
				}
			}
		}
		checkRows(t, "RANK <= 3", par, got, sortedLines(want))

		// DENSE_RANK 2 to 3 by v DESC NULLS FIRST, rank selected; one
		// partition (a global Top-N).
		got = runRankQuery(t, dir, `SELECT id, v, r FROM (SELECT *, DENSE_RANK() OVER (ORDER BY v DESC NULLS FIRST) AS r FROM t) WHERE r BETWEEN 2 AND 3`, par)
		want = nil
		all := slices.Clone(rows)
		nf := func(a, b rankRow) int {
			if (a.v == nil) != (b.v == nil) {
				if a.v == nil {
					return -1
				}
				return 1
			}
			return -nullsLow(a.v, b.v)
		}
		slices.SortStableFunc(all, nf)
		_, dense := ranks(all, nf)
		for i, r := range all {
			if dense[i] >= 2 && dense[i] <= 3 {
				want = append(want, fmt.Sprintf("[%d, %s, %d]", r.id, vText(r.v), dense[i]))
			}
		}
		checkRows(t, "global DENSE_RANK 2..3", par, got, sortedLines(want))
	}
}

// TestTopNUpdating ranks the result of a GROUP BY, whose rows retract:
// with its upsert key (UpdateFast) and without it (Retract).
func TestTopNUpdating(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeRankInput(t, seed, 600)
	// Final counts per (k, v).
	type kv struct {
		k int
		v string
	}
	counts := map[kv]int{}
	for _, r := range rows {
		counts[kv{r.k, vText(r.v)}]++
	}
	type group struct {
		k    int
		v    string
		c    int
		cref *int
	}
	var groups []group
	for g, c := range counts {
		c := c
		groups = append(groups, group{g.k, g.v, c, &c})
	}
	for _, par := range []int{1, 2, 4} {
		// UpdateFast: partition k, the group key (k, v) survives.
		got := runRankQuery(t, dir, `SELECT k, v, c, r FROM (SELECT k, v, c, RANK() OVER (PARTITION BY k ORDER BY c DESC) AS r FROM (SELECT k, v, COUNT(*) AS c FROM t GROUP BY k, v)) WHERE r <= 2`, par)
		var want []string
		per := map[int][]group{}
		for _, g := range groups {
			per[g.k] = append(per[g.k], g)
		}
		for k, gs := range per {
			slices.SortFunc(gs, func(a, b group) int { return cmp.Compare(b.c, a.c) })
			rank := 0
			for i, g := range gs {
				if i == 0 || gs[i-1].c != g.c {
					rank = i + 1
				}
				if rank <= 2 {
					want = append(want, fmt.Sprintf("[%d, %s, %d, %d]", k, g.v, g.c, rank))
				}
			}
		}
		checkRows(t, "RANK over GROUP BY (UpdateFast)", par, got, sortedLines(want))

		// Retract: the key column is projected away; partition by v.
		got = runRankQuery(t, dir, `SELECT v, c FROM (SELECT v, c, DENSE_RANK() OVER (PARTITION BY v ORDER BY c DESC) AS r FROM (SELECT v, COUNT(*) AS c FROM t GROUP BY k, v)) WHERE r = 1`, par)
		want = nil
		best := map[string]int{}
		for _, g := range groups {
			best[g.v] = max(best[g.v], g.c)
		}
		for _, g := range groups {
			if g.c == best[g.v] {
				want = append(want, fmt.Sprintf("[%s, %d]", g.v, g.c))
			}
		}
		checkRows(t, "DENSE_RANK over GROUP BY (Retract)", par, got, sortedLines(want))
	}
}

func TestDeduplicate(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeRankInput(t, seed, 300)
	// One file is read by one subtask, in order, and a hash exchange keeps
	// each key's order: keep-first and keep-last on processing time are
	// the first and last row of each key in the file.
	first, last, early, late := map[int]rankRow{}, map[int]rankRow{}, map[int]rankRow{}, map[int]rankRow{}
	for _, r := range rows {
		if _, ok := first[r.k]; !ok {
			first[r.k] = r
		}
		last[r.k] = r
		if e, ok := early[r.k]; !ok || r.ts < e.ts {
			early[r.k] = r
		}
		if l, ok := late[r.k]; !ok || r.ts >= l.ts {
			late[r.k] = r
		}
	}
	lines := func(m map[int]rankRow) []string {
		var out []string
		for k, r := range m {
			out = append(out, fmt.Sprintf("[%d, %d]", k, r.id))
		}
		return sortedLines(out)
	}
	for _, par := range []int{1, 2, 4} {
		q := `SELECT k, id FROM (SELECT k, id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY %s) AS rn FROM t) WHERE rn = 1`
		checkRows(t, "keep first (proctime)", par, runRankQuery(t, dir, fmt.Sprintf(q, "pt"), par), lines(first))
		checkRows(t, "keep last (proctime)", par, runRankQuery(t, dir, fmt.Sprintf(q, "pt DESC"), par), lines(last))
		checkRows(t, "keep first (rowtime)", par, runRankQuery(t, dir, fmt.Sprintf(q, "ts ASC"), par), lines(early))
		checkRows(t, "keep last (rowtime)", par, runRankQuery(t, dir, fmt.Sprintf(q, "ts DESC"), par), lines(late))
	}
}

// writeOverInput writes n rows whose event times are out of order by less
// than the table's watermark delay (10 s), so none is late: row i has ts
// in [i*100 ms, i*100 ms + 5 s].
func writeOverInput(t *testing.T, seed uint64, n int) (string, []rankRow) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var rows []rankRow
	var b strings.Builder
	for i := range n {
		r := rankRow{k: rng.IntN(5), id: i, ts: 1_700_000_000_000 + int64(i)*100 + int64(rng.IntN(50))*100}
		vs := "null"
		if rng.IntN(6) != 0 {
			v := rng.IntN(20) - 5
			r.v = &v
			vs = strconv.Itoa(v)
		}
		rows = append(rows, r)
		fmt.Fprintf(&b, `{"k": %d, "v": %s, "id": %d, "ts": "%s"}`+"\n", r.k, vs, r.id, time.UnixMilli(r.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, rows
}

// overAnswer computes, per row, agg over the rows of its frame: the rows
// of its key ordered by ts then arrival, frame(i, rs) giving the indexes.
func overAnswer(rows []rankRow, frame func(i int, rs []rankRow) []int, agg func(fr []rankRow) string) []string {
	var out []string
	for k, rs := range byKey(rows) {
		slices.SortStableFunc(rs, func(a, b rankRow) int { return cmp.Compare(a.ts, b.ts) })
		for i, r := range rs {
			var fr []rankRow
			for _, j := range frame(i, rs) {
				fr = append(fr, rs[j])
			}
			out = append(out, fmt.Sprintf("[%d, %d, %s]", k, r.id, agg(fr)))
		}
	}
	return sortedLines(out)
}

func sumOf(fr []rankRow) string {
	s, any := 0, false
	for _, r := range fr {
		if r.v != nil {
			s, any = s+*r.v, true
		}
	}
	if !any {
		return "<NULL>"
	}
	return strconv.Itoa(s)
}

func TestOverAggregates(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeOverInput(t, seed, 500)
	lastN := func(n int) func(i int, rs []rankRow) []int {
		return func(i int, _ []rankRow) []int {
			var js []int
			for j := max(0, i-n); j <= i; j++ {
				js = append(js, j)
			}
			return js
		}
	}
	rangeOf := func(ms int64) func(i int, rs []rankRow) []int {
		return func(i int, rs []rankRow) []int {
			var js []int
			for j, r := range rs {
				if r.ts >= rs[i].ts-ms && r.ts <= rs[i].ts {
					js = append(js, j)
				}
			}
			return js
		}
	}
	for _, par := range []int{1, 2, 4} {
		got := runRankQuery(t, dir, `SELECT k, id, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t`, par)
		checkRows(t, "SUM OVER ROWS 2 PRECEDING (rowtime)", par, got, overAnswer(rows, lastN(2), sumOf))
		// The same with a column before the others that nothing reads:
		// pruned below the OVER, whose partition, time and argument move.
		got = runRankQuery(t, dir, `SELECT k, id, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM (SELECT v * 3 AS unread, k, v, id, ts FROM t)`, par)
		checkRows(t, "SUM OVER ROWS 2 PRECEDING (rowtime), an unread column pruned", par, got, overAnswer(rows, lastN(2), sumOf))

		got = runRankQuery(t, dir, `SELECT k, id, MAX(v) OVER w, COUNT(*) OVER w FROM t WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW)`, par)
		checkRows(t, "MAX, COUNT(*) OVER RANGE 3 s (rowtime)", par, got, overAnswer(rows, rangeOf(3000), func(fr []rankRow) string {
			m := "<NULL>"
			best := 0
			for _, r := range fr {
				if r.v != nil && (m == "<NULL>" || *r.v > best) {
					best, m = *r.v, strconv.Itoa(*r.v)
				}
			}
			return fmt.Sprintf("%s, %d", m, len(fr))
		}))

		got = runRankQuery(t, dir, `SELECT k, id, COUNT(v) OVER (PARTITION BY k ORDER BY ts) FROM t`, par)
		checkRows(t, "COUNT OVER RANGE UNBOUNDED (rowtime)", par, got, overAnswer(rows, rangeOf(1<<62), func(fr []rankRow) string {
			n := 0
			for _, r := range fr {
				if r.v != nil {
					n++
				}
			}
			return strconv.Itoa(n)
		}))

		// Processing time: rows in arrival order (the file's, per key).
		got = runRankQuery(t, dir, `SELECT k, id, SUM(v) OVER (PARTITION BY k ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t`, par)
		var want []string
		for k, rs := range byKey(rows) {
			for i, r := range rs {
				want = append(want, fmt.Sprintf("[%d, %d, %s]", k, r.id, sumOf(rs[max(0, i-1):i+1])))
			}
		}
		checkRows(t, "SUM OVER ROWS 1 PRECEDING (proctime)", par, got, sortedLines(want))
	}
}
