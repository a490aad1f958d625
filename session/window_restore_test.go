package session

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/exec"
)

// windowFileScript counts a datagen sequence 0..n-1 in 100 ms TUMBLE
// windows (event time id/10 ms) per id % keys into the exactly-once
// filesystem sink, with checkpoints every few milliseconds. A kind
// "TUMBLE/ONE_PHASE" sets 'table.optimizer.agg-phase-strategy' (else AUTO,
// two phases).
func windowFileScript(ckDir, outDir string, n, keys, par int, kind string) string {
	kind, strategy, ok := strings.Cut(kind, "/")
	if !ok {
		strategy = "AUTO"
	}
	win, where, delay := "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '0.1' SECOND)", "", "10"
	if kind == "SESSION" {
		// A key has a row every 5 ms but none in the last 30 ms of each
		// 100 ms: with a 10 ms gap, one session per key and 100 ms.
		win, where = "SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '0.01' SECOND)", "WHERE id % 1000 < 700"
	}
	if kind == "HOP" {
		// 200 ms windows every 100 ms: each row is in two of them. A
		// watermark 50 ms behind fires windows between checkpoints, so a
		// restore finds slices whose first window fired.
		delay = "0.05"
		win = "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '0.1' SECOND, INTERVAL '0.2' SECOND)"
	}
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'table.optimizer.agg-phase-strategy' = '%s';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
SET 'pipeline.auto-watermark-interval' = '5 ms';
CREATE TABLE ev (id BIGINT, k AS id %% %d, ts AS TO_TIMESTAMP_LTZ(id / 10, 3), WATERMARK FOR ts AS ts - INTERVAL '%s' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '100000');
CREATE TABLE wins (k BIGINT, c BIGINT, s BIGINT, mn BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO wins SELECT k, COUNT(*), SUM(id), MIN(id) FROM TABLE(%s) %s GROUP BY k, window_start, window_end;
`, par, strategy, ckDir, keys, delay, n-1, outDir, win, where)
}

// windowFileAnswer computes the windows' rows "k,c,s,mn" in Go: with
// event time id/10 ms, 100 ms windows hold ids [1000w, 1000w+1000).
func windowFileAnswer(n, keys int, kind string) []string {
	kind, _, _ = strings.Cut(kind, "/")
	type acc struct{ c, s, mn int64 }
	m := map[[2]int64]*acc{}
	for id := int64(0); id < int64(n); id++ {
		if kind == "SESSION" && id%1000 >= 700 {
			continue
		}
		wins := []int64{id / 1000}
		if kind == "HOP" {
			wins = append(wins, id/1000-1) // the windows starting in its slice and in the one before
		}
		for _, w := range wins {
			key := [2]int64{id % int64(keys), w}
			a := m[key]
			if a == nil {
				a = &acc{mn: id}
				m[key] = a
			}
			a.c++
			a.s += id
		}
	}
	var out []string
	for key, a := range m {
		out = append(out, fmt.Sprintf("%d,%d,%d,%d", key[0], a.c, a.s, a.mn))
	}
	sort.Strings(out)
	return out
}

// committedLines returns the lines of the committed part files, sorted.
func committedLines(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "part-*"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	return lines
}

// TestWindowExactlyOnceAcrossFaultsAndRescale fails a windowed job at
// checkpoint fault points (it restarts from its latest checkpoint), and
// stops one after a few checkpoints and restores it at another
// parallelism: the committed windows equal the Go answer, each once.
func TestWindowExactlyOnceAcrossFaultsAndRescale(t *testing.T) {
	const n, keys = 30000, 50
	for _, tc := range []struct{ spec, kind string }{{"K4@5=error", "TUMBLE"}, {"K2@3=error,K8=error", "TUMBLE"}, {"K4@9=error", "SESSION"}, {"K4@5=error", "TUMBLE/ONE_PHASE"}, {"K2@3=error,K8=error", "TUMBLE/TWO_PHASE"}, {"K4@5=error,K8=error", "HOP"}, {"K4@5=error", "HOP/ONE_PHASE"}} {
		want := windowFileAnswer(n, keys, tc.kind)
		t.Run(tc.kind+"/"+tc.spec, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			run := runWithFaults(t, windowFileScript(filepath.Join(dir, "ck"), out, n, keys, 2, tc.kind), tc.spec,
				RunOptions{JobName: "win", Exec: exec.Options{BatchSize: 128}})
			run.expectRestored(t)
			if got := committedLines(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("committed windows differ from the Go answer: %d rows, want %d\nfirst got %v\nfirst want %v\n%s", len(got), len(want), head(got), head(want), run.Stderr)
			}
		})
	}
	for _, kind := range []string{"TUMBLE", "TUMBLE/ONE_PHASE", "HOP", "SESSION"} {
		t.Run(kind+"/rescale 2 to 3", func(t *testing.T) { testWindowRescale(t, kind, n, keys) })
	}
}

func testWindowRescale(t *testing.T, kind string, n, keys int) {
	want := windowFileAnswer(n, keys, kind)
	{
		dir := t.TempDir()
		ck, out := filepath.Join(dir, "ck"), filepath.Join(dir, "out")
		stderr, stderr2 := stopAndRestore(t, windowFileScript(ck, out, n, keys, 2, kind), windowFileScript(ck, out, n, keys, 3, kind),
			RunOptions{JobName: "win", Exec: exec.Options{BatchSize: 128}})
		if got := committedLines(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("committed windows differ from the Go answer: %d rows, want %d\nfirst got %v\nfirst want %v\n%s\n%s", len(got), len(want), head(got), head(want), stderr, stderr2)
		}
	}
}
