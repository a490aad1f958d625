package session

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/types"
)

// Window aggregation end to end: rows (k, v, ts) from a CSV file with a
// watermark 2 s behind, through every window kind and both syntaxes, at
// parallelism 1, 2 and 4, compared with the windows computed here in Go.
// The input comes in order, shuffled within the watermark delay (the same
// answer), and with rows far behind the watermark mixed in (dropped and
// counted, exactly those).

const (
	winBase  = int64(86_400_000) // event times start a day after the epoch
	winStep  = int64(7)          // ms between consecutive rows
	winDelay = int64(2000)       // the watermark's delay
	winLate  = int64(3_600_000)  // how far behind a late row is
)

type winRow struct {
	k, v, ts int64
	late     bool
}

// winRows returns n rows in event-time order, over keys keys.
func winRows(r *rand.Rand, n, keys int) []winRow {
	rows := make([]winRow, n)
	for i := range rows {
		// A key's rows are 49 ms apart on average: with a 30 ms gap,
		// sessions of one to many rows.
		rows[i] = winRow{k: int64(r.IntN(keys)), v: int64(r.IntN(100)), ts: winBase + int64(i)*winStep}
	}
	return rows
}

// shuffleWithinDelay reorders rows so that no row comes after a row more
// than 1.5 s later than itself: never behind a watermark 2 s late.
func shuffleWithinDelay(r *rand.Rand, rows []winRow) []winRow {
	type keyed struct {
		sortKey int64
		row     winRow
	}
	ks := make([]keyed, len(rows))
	for i, row := range rows {
		ks[i] = keyed{row.ts + int64(r.IntN(1500)), row}
	}
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].sortKey < ks[j].sortKey })
	out := make([]winRow, len(rows))
	for i := range ks {
		out[i] = ks[i].row
	}
	return out
}

// addLate inserts late rows (an hour behind the rows around them) after the
// first 300 rows, so that the watermark has long passed their windows
// whatever the batching.
func addLate(r *rand.Rand, rows []winRow, keys, n int) []winRow {
	out := slices.Clone(rows)
	for range n {
		at := 300 + r.IntN(len(out)-300)
		row := winRow{k: int64(r.IntN(keys)), v: int64(r.IntN(100)), ts: out[at].ts - winLate - int64(r.IntN(5000)), late: true}
		out = slices.Insert(out, at, row)
	}
	return out
}

func writeWinCSV(t *testing.T, rows []winRow) string {
	t.Helper()
	var b strings.Builder
	for _, row := range rows {
		fmt.Fprintf(&b, "%d,%d,%s\n", row.k, row.v, time.UnixMilli(row.ts).UTC().Format(types.TimestampLayout))
	}
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// winAcc is one window's expected aggregates.
type winAcc struct {
	n, sum, mn, mx int64
	distinct       map[int64]bool
}

func (a *winAcc) add(v int64) {
	if a.n == 0 || v < a.mn {
		a.mn = v
	}
	if a.n == 0 || v > a.mx {
		a.mx = v
	}
	a.n++
	a.sum += v
	if a.distinct == nil {
		a.distinct = map[int64]bool{}
	}
	a.distinct[v] = true
}

func tsText(ms int64) string { return time.UnixMilli(ms).UTC().Format(types.TimestampLayout) }

// winKind is a window as the test computes it: the windows [start, end)
// that hold ts.
type winKind struct {
	name    string
	tvf     string // FROM TABLE(...) over ev
	group   string // GROUP BY TUMBLE(...) form; "" if none
	windows func(ts int64) [][2]int64
	gap     int64 // SESSION
	// tiles says whether the window [start, end) is one of a set of
	// windows that holds every row exactly once (nil: all windows).
	tiles func(start, end int64) bool
}

func floorTo(x, m int64) int64 { return x - ((x%m)+m)%m }

var winKinds = []winKind{
	{name: "tumble", tvf: "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)",
		group: "TUMBLE(ts, INTERVAL '1' SECOND)",
		windows: func(ts int64) [][2]int64 {
			s := floorTo(ts, 1000)
			return [][2]int64{{s, s + 1000}}
		}},
	{name: "hop", tvf: "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)",
		group: "HOP(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND)",
		windows: func(ts int64) [][2]int64 {
			var out [][2]int64
			for s := floorTo(ts, 1000); s > ts-3000; s -= 1000 {
				out = append(out, [2]int64{s, s + 3000})
			}
			return out
		},
		tiles: func(start, _ int64) bool { return start%3000 == 0 }},
	{name: "cumulate", tvf: "CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4' SECOND)",
		windows: func(ts int64) [][2]int64 {
			var out [][2]int64
			p := floorTo(ts, 4000)
			for e := p + 1000; e <= p+4000; e += 1000 {
				if e > ts {
					out = append(out, [2]int64{p, e})
				}
			}
			return out
		},
		tiles: func(_, end int64) bool { return end%4000 == 0 }},
	{name: "session", tvf: "SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '0.03' SECOND)",
		group: "SESSION(ts, INTERVAL '0.03' SECOND)", gap: 30},
}

// winWant computes the expected rows "[k, start, end, n, sum, min, max,
// distinct]" of kind over the rows that are not late.
func winWant(kind winKind, rows []winRow) []string {
	type wk struct{ k, s, e int64 }
	accs := map[wk]*winAcc{}
	add := func(key wk, v int64) {
		a := accs[key]
		if a == nil {
			a = &winAcc{}
			accs[key] = a
		}
		a.add(v)
	}
	if kind.gap > 0 {
		byKey := map[int64][]winRow{}
		for _, r := range rows {
			if !r.late {
				byKey[r.k] = append(byKey[r.k], r)
			}
		}
		for k, rs := range byKey {
			sort.Slice(rs, func(i, j int) bool { return rs[i].ts < rs[j].ts })
			var cur []winRow
			start, end := int64(0), int64(0)
			flush := func() {
				for _, r := range cur {
					add(wk{k, start, end}, r.v)
				}
			}
			for _, r := range rs {
				if len(cur) > 0 && r.ts <= end {
					cur = append(cur, r)
					end = max(end, r.ts+kind.gap)
					continue
				}
				if len(cur) > 0 {
					flush()
				}
				cur, start, end = []winRow{r}, r.ts, r.ts+kind.gap
			}
			flush()
		}
	} else {
		for _, r := range rows {
			if r.late {
				continue
			}
			for _, w := range kind.windows(r.ts) {
				add(wk{r.k, w[0], w[1]}, r.v)
			}
		}
	}
	var out []string
	for key, a := range accs {
		out = append(out, fmt.Sprintf("[%d, %s, %s, %d, %d, %d, %d, %d]", key.k, tsText(key.s), tsText(key.e), a.n, a.sum, a.mn, a.mx, len(a.distinct)))
	}
	sort.Strings(out)
	return out
}

// runWindowScript runs src with a watermark after every source batch of at
// most 64 rows and returns the print sink's output, the late-row count
// and stderr.
func runWindowScript(t *testing.T, src string) (string, int64, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	err := s.RunScript(context.Background(), src, RunOptions{JobName: t.Name(), Quiet: true,
		Exec: exec.Options{BatchSize: 64, AutoWatermarkInterval: time.Nanosecond}})
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	return stdout.String(), lateFromSummary(stderr.String()), stderr.String()
}

// lateFromSummary reads "dropped N late row(s)" from the run's summary.
func lateFromSummary(stderr string) int64 {
	for _, l := range strings.Split(stderr, "\n") {
		var n int64
		if _, err := fmt.Sscanf(l, "weir: dropped %d late row(s)", &n); err == nil {
			return n
		}
	}
	return 0
}

// splitLateRegion returns the rows of windows that end after
// winBase - winLate/2, and the number of input rows the windows before
// counted (late rows).
func splitLateRegion(t *testing.T, kind winKind, rows []string) ([]string, int64) {
	t.Helper()
	bound := tsText(winBase - winLate/2)
	var keep []string
	var n int64
	for _, r := range rows {
		f := strings.Split(strings.Trim(r, "[]"), ", ")
		if f[2] > bound {
			keep = append(keep, r)
			continue
		}
		if kind.tiles != nil && !kind.tiles(parseTS(t, f[1]), parseTS(t, f[2])) {
			continue
		}
		var c int64
		if _, err := fmt.Sscan(f[3], &c); err != nil {
			t.Fatalf("row %s: %v", r, err)
		}
		n += c
	}
	return keep, n
}

func parseTS(t *testing.T, s string) int64 {
	t.Helper()
	ts, err := time.Parse(types.TimestampLayout, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts.UnixMilli()
}

func windowScript(path string, par int, strategy, query string) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'table.optimizer.agg-phase-strategy' = '%s';
CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out_t (k BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT, mn BIGINT, mx BIGINT, d BIGINT)
WITH ('connector' = 'print');
INSERT INTO out_t %s;
`, par, strategy, path, query)
}

func tvfQuery(kind winKind) string {
	return "SELECT k, window_start, window_end, COUNT(*), SUM(v), MIN(v), MAX(v), COUNT(DISTINCT v) FROM TABLE(" +
		kind.tvf + ") GROUP BY k, window_start, window_end"
}

// windowRuns are the parallelisms and aggregation strategies each window
// query runs at: one and two phases (the local pre-aggregation before the
// exchange) at parallelism 1, 2 and 4.
var windowRuns = []struct {
	par      int
	strategy string
}{
	{1, "ONE_PHASE"}, {1, "TWO_PHASE"}, {2, "ONE_PHASE"}, {2, "TWO_PHASE"}, {4, "ONE_PHASE"}, {4, "TWO_PHASE"},
}

func TestWindowAggregatesMatchGo(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("WEIR_TEST_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (repeat with WEIR_TEST_SEED=%d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 13))
	const n, keys, nLate = 3000, 7, 40
	ordered := winRows(r, n, keys)
	inputs := []struct {
		name string
		rows []winRow
		late int64
	}{
		{"in order", ordered, 0},
		{"out of order within the delay", shuffleWithinDelay(r, ordered), 0},
		{"late rows", addLate(r, shuffleWithinDelay(r, ordered), keys, nLate), nLate},
	}
	for _, in := range inputs {
		path := writeWinCSV(t, in.rows)
		for _, kind := range winKinds {
			want := winWant(kind, in.rows)
			queries := []string{tvfQuery(kind)}
			if kind.group != "" {
				prefix := strings.ToUpper(kind.name)
				args := strings.TrimSuffix(strings.TrimPrefix(kind.group, prefix+"("), ")")
				queries = append(queries, fmt.Sprintf("SELECT k, %s_START(%s), %s_END(%s), COUNT(*), SUM(v), MIN(v), MAX(v), COUNT(DISTINCT v) FROM ev GROUP BY %s, k",
					prefix, args, prefix, args, kind.group))
			}
			for qi, q := range queries {
				for _, run := range windowRuns {
					par := run.par
					if qi == 1 && par != 2 {
						continue // the group-window syntax plans onto the same operator
					}
					name := fmt.Sprintf("%s/%s/q%d/p%d/%s", in.name, kind.name, qi, par, run.strategy)
					out, late, stderr := runWindowScript(t, windowScript(path, par, run.strategy, q))
					got := sortedRows(applyChangelog(t, out))
					if par > 1 && in.late > 0 {
						// Which late rows the windows see depends on when
						// the idle source subtasks send their watermark
						// (the operator's is the least of its inputs'):
						// every late row is dropped and counted, or in a
						// window an hour before the others.
						var accepted int64
						got, accepted = splitLateRegion(t, kind, got)
						if accepted+late != in.late {
							t.Fatalf("%s (seed %d): %d late rows counted and %d in windows, want %d in all", name, seed, late, accepted, in.late)
						}
						late = in.late
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s (seed %d): %d rows, want %d\nfirst got:  %v\nfirst want: %v\nstderr: %s", name, seed, len(got), len(want), head(got), head(want), stderr)
					}
					if late != in.late {
						t.Fatalf("%s (seed %d): %d late rows counted, want %d\nstderr: %s", name, seed, late, in.late, stderr)
					}
					forPrintLines(t, out, func(kind, _ string) {
						if kind != "+I" {
							t.Fatalf("%s: a window aggregate emitted %s", name, kind)
						}
					})
				}
			}
		}
	}
}

// TestCascadedWindows aggregates per-second TUMBLE windows per key into
// 4-second windows over their window_time: the result equals the 4-second
// windows computed in Go from the rows.
func TestCascadedWindows(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 17))
	rows := shuffleWithinDelay(r, winRows(r, 4000, 5))
	path := writeWinCSV(t, rows)
	type acc struct{ n, s int64 }
	want := map[int64]*acc{}
	for _, row := range rows {
		w := floorTo(row.ts, 4000)
		if want[w] == nil {
			want[w] = &acc{}
		}
		want[w].n++
		want[w].s += row.v
	}
	var wantRows []string
	for w, a := range want {
		wantRows = append(wantRows, fmt.Sprintf("[%s, %s, %d, %d]", tsText(w), tsText(w+4000), a.n, a.s))
	}
	sort.Strings(wantRows)
	for _, par := range []int{1, 4} {
		src := fmt.Sprintf(`
SET 'parallelism.default' = '%d';
CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE VIEW per_sec AS SELECT k, window_time AS wt, COUNT(*) AS n, SUM(v) AS s
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end, window_time;
CREATE TABLE out_t (ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO out_t SELECT window_start, window_end, SUM(n), SUM(s)
  FROM TABLE(TUMBLE(TABLE per_sec, DESCRIPTOR(wt), INTERVAL '4' SECOND)) GROUP BY window_start, window_end;
`, par, path)
		out, late, stderr := runWindowScript(t, src)
		got := sortedRows(applyChangelog(t, out))
		if !slices.Equal(got, wantRows) || late != 0 {
			t.Fatalf("p%d (seed %d): %d late, rows %v, want %v\n%s", par, seed, late, got, wantRows, stderr)
		}
	}
}

// TestProcessingTimeWindows counts a bounded datagen stream in 50 ms
// processing-time windows: every row is counted once, in windows of 50
// ms, the last ones when the input ends.
func TestProcessingTimeWindows(t *testing.T) {
	const n = 3000
	src := fmt.Sprintf(`
SET 'table.local-time-zone' = 'UTC';
CREATE TABLE ev (id BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '%d', 'rows-per-second' = '20000');
CREATE TABLE out_t (ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO out_t SELECT window_start, window_end, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(pt), INTERVAL '0.05' SECOND)) GROUP BY window_start, window_end;
`, n)
	out, _, stderr := runWindowScript(t, src)
	var total, sum int64
	windows := map[string]bool{}
	forPrintLines(t, out, func(kind, row string) {
		f := strings.Split(strings.Trim(row, "[]"), ", ")
		start, end := parseTS(t, f[0]), parseTS(t, f[1])
		if kind != "+I" || end-start != 50 || start%50 != 0 || windows[f[0]] {
			t.Fatalf("window row %s%s: want +I of a new 50 ms window\n%s", kind, row, stderr)
		}
		windows[f[0]] = true
		var c, s int64
		fmt.Sscan(f[2], &c)
		fmt.Sscan(f[3], &s)
		total, sum = total+c, sum+s
	})
	if total != n || sum != n*(n+1)/2 || len(windows) < 2 {
		t.Fatalf("%d windows counted %d rows summing to %d, want %d rows summing to %d in several windows\n%s", len(windows), total, sum, n, n*(n+1)/2, stderr)
	}
}
