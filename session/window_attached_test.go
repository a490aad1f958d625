package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// This file runs Nexmark q5's shape (a window join of a HOP window count
// with the window-attached MAX of those counts) and a cascaded
// window-attached aggregation end to end, at parallelism 1, 2 and 4, with
// windows firing while the input streams (a throttled datagen sequence
// whose event times are out of order within the watermark's delay), and
// compares the output, insert-only, with an answer computed here; then
// through checkpoint faults into the exactly-once file sink. A row that a
// window aggregate emits at its window's end must never be late for the
// window operators below it: no run may drop a late row.

// q5Event is event id's auction and event time (ms): auctions 0..6,
// unevenly often; times id/10 ms moved up to 40 ms later (the watermark
// allows 60 ms).
func q5Event(id int64) (auction, ts int64) {
	return id % 10 * (id % 3) % 7, id/10 + id*37%41
}

// q5Script declares the events (ids 0..n-1, at rps rows a second) at
// parallelism par, then sink and insert.
func q5Script(par, n, rps int, pre, sink, insert string) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'pipeline.auto-watermark-interval' = '5 ms';
%s
CREATE TABLE bid (id BIGINT, auction AS id %% 10 * (id %% 3) %% 7, ts AS TO_TIMESTAMP_LTZ(id / 10 + id * 37 %% 41, 3), WATERMARK FOR ts AS ts - INTERVAL '0.06' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '%d');
%s;
INSERT INTO out %s;
`, par, pre, n-1, rps, sink, insert)
}

// q5Counts is the HOP window (200 ms every 100 ms) counts of ids 0..n-1:
// window start → auction → bids.
func q5Counts(n int) map[int64]map[int64]int64 {
	m := map[int64]map[int64]int64{}
	for id := int64(0); id < int64(n); id++ {
		a, ts := q5Event(id)
		s0 := ts - ((ts%100)+100)%100
		for _, s := range []int64{s0, s0 - 100} {
			if m[s] == nil {
				m[s] = map[int64]int64{}
			}
			m[s][a]++
		}
	}
	return m
}

const q5CountBids = `SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
	FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '0.1' SECOND, INTERVAL '0.2' SECOND))
	GROUP BY auction, window_start, window_end`

// q5Query is q5 with the window's start in the output.
var q5Query = `SELECT AuctionBids.auction, AuctionBids.num, AuctionBids.starttime
 FROM (` + q5CountBids + `) AS AuctionBids
 JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime AS st, CountBids.endtime AS et
	FROM (` + q5CountBids + `) AS CountBids GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids
 ON AuctionBids.starttime = MaxBids.st AND AuctionBids.endtime = MaxBids.et AND AuctionBids.num >= MaxBids.maxn`

// q5Answer is q5Query's rows "auction,num,start ms".
func q5Answer(n int) []string {
	var out []string
	for s, byAuction := range q5Counts(n) {
		var mx int64
		for _, c := range byAuction {
			mx = max(mx, c)
		}
		for a, c := range byAuction {
			if c >= mx {
				out = append(out, fmt.Sprintf("%d,%d,%d", a, c, s))
			}
		}
	}
	sort.Strings(out)
	return out
}

// printedRows returns the print sink's rows, failing on anything but +I
// (the plans are insert-only), each as its fields joined by commas, with
// TIMESTAMP_LTZ fields (UTC) as epoch milliseconds, sorted.
func printedRows(t *testing.T, out string) []string {
	t.Helper()
	var rows []string
	forPrintLines(t, out, func(kind, row string) {
		if kind != "+I" {
			t.Fatalf("an insert-only plan emitted %s%s", kind, row)
		}
		rows = append(rows, strings.ReplaceAll(strings.Trim(row, "[]"), ", ", ","))
	})
	return epochRows(rows)
}

// epochRows returns rows (fields separated by commas) with their
// timestamp fields (UTC) as epoch milliseconds, sorted.
func epochRows(rows []string) []string {
	out := make([]string, len(rows))
	for r, row := range rows {
		fields := strings.Split(row, ",")
		for i, f := range fields {
			if ts, err := time.Parse("2006-01-02 15:04:05.000", f); err == nil {
				fields[i] = fmt.Sprint(ts.UnixMilli())
			}
		}
		out[r] = strings.Join(fields, ",")
	}
	sort.Strings(out)
	return out
}

// runPrinted runs script and returns the print sink's output; it fails
// the test if the job dropped a late row.
func runPrinted(t *testing.T, script string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: t.Name(), Exec: exec.Options{BatchSize: 64}}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "late row") {
		t.Fatalf("rows emitted by a window aggregate were late downstream:\n%s", stderr.String())
	}
	return stdout.String()
}

func sameRows(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		var extra, missing []string
		for _, g := range got {
			if !slices.Contains(want, g) {
				extra = append(extra, g)
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing = append(missing, w)
			}
		}
		t.Fatalf("got %d rows, want %d\nextra: %v\nmissing: %v", len(got), len(want), head(extra), head(missing))
	}
}

// TestWindowJoinOverWindowAggregatesMatchesGoAnswer runs q5's shape: the
// plan is a window join over a window-attached aggregate, insert-only,
// and its rows are q5Answer's.
func TestWindowJoinOverWindowAggregatesMatchesGoAnswer(t *testing.T) {
	const n = 20000
	want := q5Answer(n)
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			script := q5Script(par, n, 50000, "", "CREATE TABLE out (auction BIGINT, num BIGINT, st TIMESTAMP_LTZ(3)) WITH ('connector' = 'print')", q5Query)
			sameRows(t, printedRows(t, runPrinted(t, script)), want)
		})
	}
}

// TestWindowAttachedAggregateMatchesGoAnswer groups the HOP window counts
// by their renamed window bounds (a cascaded, window-attached aggregate):
// once per window, insert-only, with MAX, COUNT and SUM of the counts and
// the window's bounds and window_time.
func TestWindowAttachedAggregateMatchesGoAnswer(t *testing.T) {
	const n = 20000
	var want []string
	for s, byAuction := range q5Counts(n) {
		var mx, sum int64
		for _, c := range byAuction {
			mx, sum = max(mx, c), sum+c
		}
		want = append(want, fmt.Sprintf("%d,%d,%d,%d,%d,%d", s, s+200, s+199, mx, len(byAuction), sum))
	}
	sort.Strings(want)
	query := `SELECT s, e, window_time, MAX(num), COUNT(*), SUM(num) FROM (
		SELECT auction, count(*) AS num, window_start AS s, window_end AS e, window_time
		FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '0.1' SECOND, INTERVAL '0.2' SECOND))
		GROUP BY auction, window_start, window_end, window_time) GROUP BY e, window_time, s`
	sink := "CREATE TABLE out (s TIMESTAMP_LTZ(3), e TIMESTAMP_LTZ(3), wt TIMESTAMP_LTZ(3), m BIGINT, c BIGINT, total BIGINT) WITH ('connector' = 'print')"
	for _, par := range []int{1, 2, 4} {
		for _, strategy := range []string{"AUTO", "ONE_PHASE"} {
			t.Run(fmt.Sprintf("p%d/%s", par, strategy), func(t *testing.T) {
				pre := fmt.Sprintf("SET 'table.optimizer.agg-phase-strategy' = '%s';", strategy)
				sameRows(t, printedRows(t, runPrinted(t, q5Script(par, n, 50000, pre, sink, query))), want)
			})
		}
	}
}

// TestWindowJoinOverWindowAggregatesAcrossFaults fails q5's shape at
// checkpoint fault points, with windows firing between checkpoints: it
// restarts from its latest checkpoint, and the exactly-once file sink
// holds q5Answer's rows, each once.
func TestWindowJoinOverWindowAggregatesAcrossFaults(t *testing.T) {
	const n = 30000
	want := q5Answer(n)
	script := func(dir string, par int) string {
		pre := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';`, filepath.Join(dir, "ck"))
		sink := fmt.Sprintf("CREATE TABLE out (auction BIGINT, num BIGINT, st TIMESTAMP_LTZ(3)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv')", filepath.Join(dir, "out"))
		return q5Script(par, n, 30000, pre, sink, q5Query)
	}
	for _, spec := range []string{"K4@15=error", "K4@25=error,K8=error"} {
		t.Run(spec, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			run := runWithFaults(t, script(dir, 2), spec, RunOptions{JobName: "q5", Exec: exec.Options{BatchSize: 128}})
			run.expectRestored(t)
			if strings.Contains(run.Stderr, "late row") {
				t.Fatalf("late rows dropped:\n%s", run.Stderr)
			}
			sameRows(t, epochRows(committedLines(t, out)), want)
		})
	}
	// Stopped after its fourth checkpoint and restored at parallelism 3.
	t.Run("rescale 2 to 3", func(t *testing.T) {
		dir := t.TempDir()
		stderr, stderr2 := stopAndRestore(t, script(dir, 2), script(dir, 3), RunOptions{JobName: "q5", Exec: exec.Options{BatchSize: 128}})
		if strings.Contains(stderr+stderr2, "late row") {
			t.Fatalf("late rows dropped:\n%s\n%s", stderr, stderr2)
		}
		sameRows(t, epochRows(committedLines(t, filepath.Join(dir, "out"))), want)
	})
}

// TestWindowCascadeExample runs examples/window_cascade.sql and checks
// both sinks' rows against its data file, cut into the HOP windows here.
func TestWindowCascadeExample(t *testing.T) {
	src, err := os.ReadFile("../examples/window_cascade.sql")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../examples/data/sessions.csv")
	if err != nil {
		t.Fatal(err)
	}
	const layout = "2006-01-02 15:04:05.000"
	views := map[time.Time]map[string]int{} // window start → page → views
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(l, ",")
		ts, err := time.Parse(layout, f[2])
		if err != nil {
			t.Fatal(err)
		}
		for s := ts.Truncate(time.Minute); s.After(ts.Add(-5 * time.Minute)); s = s.Add(-time.Minute) {
			if views[s] == nil {
				views[s] = map[string]int{}
			}
			views[s][f[1]]++
		}
	}
	var want []string
	for s, pages := range views {
		mx := 0
		for _, n := range pages {
			mx = max(mx, n)
		}
		start, end := s.Format(layout), s.Add(5*time.Minute).Format(layout)
		want = append(want, row(start, end, fmt.Sprint(mx), fmt.Sprint(len(pages))))
		for p, n := range pages {
			if n == mx {
				want = append(want, row(p, fmt.Sprint(n), start, end))
			}
		}
	}
	sort.Strings(want)
	script := strings.ReplaceAll(string(src), "'examples/data/", "'../examples/data/")
	var got []string
	forPrintLines(t, runPrinted(t, script), func(kind, r string) {
		if kind != "+I" {
			t.Fatalf("the example emitted %s%s", kind, r)
		}
		got = append(got, r)
	})
	sort.Strings(got)
	sameRows(t, got, want)
}
