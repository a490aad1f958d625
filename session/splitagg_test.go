package session

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// splitScript runs a Nexmark q16-shaped query over a datagen sequence
// 0..n-1 (few groups, k = id % 3; two distinct arguments a, with NULLs,
// and b; FILTERs on p; COUNT(*); MAX of a string) into a print table,
// with the split distinct aggregation on or off, mini-batch on and
// checkpoints every few milliseconds; rate is the source's rows per
// second.
func splitScript(ckDir, spDir string, n, par int, split bool, rate int) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.optimizer.distinct-agg.split.enabled' = '%t';
SET 'table.optimizer.distinct-agg.split.bucket-num' = '16';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.savepoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT, k AS id %% 3, a AS CASE WHEN id %% 7 = 0 THEN CAST(NULL AS BIGINT) ELSE id * 31 %% 500 END,
  b AS id * 17 %% 900, p AS id * 13 %% 100, s AS CAST(id %% 60 AS STRING))
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '%d');
CREATE TABLE stats (k BIGINT, m STRING, c BIGINT, c_low BIGINT, da BIGINT, da_low BIGINT, db BIGINT, db_high BIGINT)
WITH ('connector' = 'print');
INSERT INTO stats
SELECT k, MAX(s), COUNT(*), COUNT(*) FILTER (WHERE p < 30),
  COUNT(DISTINCT a), COUNT(DISTINCT a) FILTER (WHERE p < 30),
  COUNT(DISTINCT b), COUNT(DISTINCT b) FILTER (WHERE p >= 30)
FROM ev GROUP BY k;
`, par, split, ckDir, spDir, n-1, rate)
}

// splitAnswer computes splitScript's final rows in Go.
func splitAnswer(n int) []string {
	type agg struct {
		m           string
		c, cLow     int
		da, daLow   map[int]bool
		db, dbHigh  map[int]bool
		initialized bool
	}
	groups := map[int]*agg{}
	for id := range n {
		k := id % 3
		g := groups[k]
		if g == nil {
			g = &agg{da: map[int]bool{}, daLow: map[int]bool{}, db: map[int]bool{}, dbHigh: map[int]bool{}}
			groups[k] = g
		}
		p, s, b := id*13%100, fmt.Sprint(id%60), id*17%900
		if !g.initialized || s > g.m {
			g.m, g.initialized = s, true
		}
		g.c++
		if p < 30 {
			g.cLow++
		}
		if id%7 != 0 {
			a := id * 31 % 500
			g.da[a] = true
			if p < 30 {
				g.daLow[a] = true
			}
		}
		g.db[b] = true
		if p >= 30 {
			g.dbHigh[b] = true
		}
	}
	var out []string
	for k, g := range groups {
		out = append(out, fmt.Sprintf("[%d, %s, %d, %d, %d, %d, %d, %d]", k, g.m, g.c, g.cLow, len(g.da), len(g.daLow), len(g.db), len(g.dbHigh)))
	}
	sort.Strings(out)
	return out
}

// TestSplitDistinctAggRestore runs the q16 shape through the split
// distinct aggregation at parallelism 1, 2 and 4 with an injected failure,
// so that the job restores both aggregates from a checkpoint: the final
// rows equal the answer computed in Go.
func TestSplitDistinctAggRestore(t *testing.T) {
	const n = 30000
	want := splitAnswer(n)
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			dir := t.TempDir()
			// K4 is passed by each task at each checkpoint: 3 * par
			// tasks (the source's chain, the inner aggregate, the
			// outer's chain) fail at about the third checkpoint.
			hook, err := ParseFaults(fmt.Sprintf("K4@%d=error", 2*3*par+1), "")
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			script := splitScript(filepath.Join(dir, "ck"), filepath.Join(dir, "sp"), n, par, true, 100000)
			if err := s.RunScript(context.Background(), script, RunOptions{JobName: "split", Exec: exec.Options{BatchSize: 128, Fault: hook}}); err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "weir: restoring checkpoint") {
				t.Fatalf("the job did not restore a checkpoint:\n%s", stderr.String())
			}
			if strings.Contains(stdout.String(), "-D") {
				t.Errorf("the split aggregate deleted a row; the aggregate it replaces emits +I, -U and +U only")
			}
			got := upsertByKey(t, stdout.String())
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("final rows differ from the Go answer:\ngot  %v\nwant %v", got, want)
			}
		})
	}
}

// TestSplitDistinctAggRefusesUnsplitSavepoint takes a savepoint of the q16
// shape planned without the split and restores it with the split on: the
// aggregate's state matches nothing in the split plan, and the restore is
// refused with an error naming it; restored with the split off again, the
// job finishes with the Go answer.
func TestSplitDistinctAggRefusesUnsplitSavepoint(t *testing.T) {
	const n = 30000
	dir := t.TempDir()
	ck, sp := filepath.Join(dir, "ck"), filepath.Join(dir, "sp")
	path, out1 := stopWithSavepoint(t, splitScript(ck, sp, n, 2, false, 30000))
	_, stderr, err := resume(t, splitScript(ck, sp, n, 2, true, 30000), path, false)
	if err == nil || !strings.Contains(err.Error(), "matches nothing in the query") || !strings.Contains(err.Error(), "GroupAggregate(") ||
		!strings.Contains(err.Error(), "--allow-non-restored-state") {
		t.Fatalf("want a clear error naming the aggregate, got %v\n%s", err, stderr)
	}
	t.Logf("restore refused: %v", err)
	out2, stderr, err := resume(t, splitScript(ck, sp, n, 2, false, 30000), path, false)
	if err != nil {
		t.Fatalf("restore without the split: %v\n%s", err, stderr)
	}
	want := splitAnswer(n)
	if got := upsertByKey(t, out1+out2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final rows differ from the Go answer:\ngot  %v\nwant %v", got, want)
	}
}

// TestSplitDistinctAggRescale stops the q16 shape with the split on at
// one parallelism with a savepoint and resumes it at another: the inner
// aggregate's groups (keys and buckets) and the outer's move to other
// subtasks, and the final rows equal the Go answer.
func TestSplitDistinctAggRescale(t *testing.T) {
	const n = 30000
	want := splitAnswer(n)
	for _, c := range [][2]int{{2, 4}, {4, 1}} {
		t.Run(fmt.Sprintf("p%d to p%d", c[0], c[1]), func(t *testing.T) {
			dir := t.TempDir()
			ck, sp := filepath.Join(dir, "ck"), filepath.Join(dir, "sp")
			path, out1 := stopWithSavepoint(t, splitScript(ck, sp, n, c[0], true, 30000))
			out2, stderr, err := resume(t, splitScript(ck, sp, n, c[1], true, 30000), path, false)
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, "restoring savepoint") {
				t.Fatalf("resume did not restore the savepoint:\n%s", stderr)
			}
			if got := upsertByKey(t, out1+out2); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("final rows differ from the Go answer:\ngot  %v\nwant %v", got, want)
			}
		})
	}
}
