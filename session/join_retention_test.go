package session

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/exec"
)

// q7Script runs Nexmark q7's shape over a datagen sequence 0..n-1: each
// row is a bid of price (id * 7919) % 53 at event time id / 10 + 1000 -
// (id % 5) * 4 ms, a little out of order, by a bidder the query does not
// read (the join's input is pruned of it); the bids whose price is the highest of a 100 ms
// window and whose time lies in the 100 ms before the window's end (ends
// included) go to the exactly-once filesystem sink. The join keeps the
// bids by price and drops them as the windows' watermark passes their
// time + 100 ms (leftStateRetention).
func q7Script(ckDir, outDir string, n, par int) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
SET 'pipeline.auto-watermark-interval' = '5 ms';
CREATE TABLE bid (id BIGINT, bidder AS id %% 7, price AS (id * 7919) %% 53,
  ts AS TO_TIMESTAMP_LTZ(id / 10 + 1000 - (id %% 5) * 4, 3), WATERMARK FOR ts AS ts - INTERVAL '0.02' SECOND)
WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '50000');
CREATE TABLE out (id BIGINT, price BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO out
SELECT B.id, B.price FROM bid B
JOIN (
  SELECT MAX(price) AS maxprice, window_end AS we
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '0.1' SECOND))
  GROUP BY window_start, window_end
) B1
ON B.price = B1.maxprice
WHERE B.ts BETWEEN B1.we - INTERVAL '0.1' SECOND AND B1.we;
`, par, ckDir, n-1, outDir)
}

// q7Answer computes q7Script's rows "id,price" in Go.
func q7Answer(n int) []string {
	price := func(id int64) int64 { return id * 7919 % 53 }
	ts := func(id int64) int64 { return id/10 + 1000 - id%5*4 }
	maxOf := map[int64]int64{} // window (ts / 100) → the highest price
	for id := range int64(n) {
		w := ts(id) / 100
		if p, ok := maxOf[w]; !ok || price(id) > p {
			maxOf[w] = price(id)
		}
	}
	var out []string
	for id := range int64(n) {
		t := ts(id)
		for _, w := range []int64{t/100 - 1, t / 100} {
			end := (w + 1) * 100
			if p, ok := maxOf[w]; ok && p == price(id) && end-100 <= t && t <= end {
				out = append(out, fmt.Sprintf("%d,%d", id, price(id)))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestQ7RetentionAcrossFaults runs the q7 shape, whose join drops bids by
// the windows' watermark, at parallelism 1, 2 and 4, failing it at a
// checkpoint fault point (it restarts from its latest checkpoint), and
// stopping it after a few checkpoints and restoring it at another
// parallelism: the committed rows equal the Go answer, each once.
func TestQ7RetentionAcrossFaults(t *testing.T) {
	const n = 30000
	want := q7Answer(n)
	if len(want) < 100 {
		t.Fatalf("the answer has %d rows: too few to test", len(want))
	}
	check := func(t *testing.T, out string, logs ...string) {
		t.Helper()
		if got := committedLines(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("committed rows differ from the Go answer: %d rows, want %d\nfirst got %v\nfirst want %v\n%s",
				len(got), len(want), head(got), head(want), strings.Join(logs, "\n"))
		}
	}
	opts := RunOptions{JobName: "q7", Exec: exec.Options{BatchSize: 128}}
	for _, par := range []int{1, 2, 4} {
		// K4 is passed by each task at each checkpoint: 3 * par + 1 tasks
		// (two scans, the window aggregate, the join) fail at about the
		// second and the fourth checkpoint.
		tasks := 3*par + 1
		for _, spec := range []string{fmt.Sprintf("K4@%d=error", 2*tasks), fmt.Sprintf("K4@%d=error", 4*tasks)} {
			t.Run(fmt.Sprintf("p%d/%s", par, spec), func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				run := runWithFaults(t, q7Script(filepath.Join(dir, "ck"), out, n, par), spec, opts)
				run.expectRestored(t)
				check(t, out, run.Stderr)
			})
		}
		after := map[int]int{1: 2, 2: 4, 4: 1}[par]
		t.Run(fmt.Sprintf("p%d/stop and restore at p%d", par, after), func(t *testing.T) {
			dir := t.TempDir()
			ck, out := filepath.Join(dir, "ck"), filepath.Join(dir, "out")
			stderr, stderr2 := stopAndRestore(t, q7Script(ck, out, n, par), q7Script(ck, out, n, after), opts)
			if !strings.Contains(stderr2, "restoring checkpoint") {
				t.Fatalf("the second run did not restore:\n%s", stderr2)
			}
			check(t, out, stderr, stderr2)
		})
	}
}

// TestRestoreUnprunedJoinSavepoint takes a savepoint of the q7 shape
// planned without join-input pruning (the plan of a Weir before it) and
// restores it: into the pruned plan it is refused with an error naming
// the join and the scans whose columns changed; with
// 'table.optimizer.join-input-pruning' = 'false' it restores and the
// committed rows equal the Go answer.
func TestRestoreUnprunedJoinSavepoint(t *testing.T) {
	const n = 30000
	dir := t.TempDir()
	ck, sp, out := filepath.Join(dir, "ck"), filepath.Join(dir, "sp"), filepath.Join(dir, "out")
	unpruned := "SET 'table.optimizer.join-input-pruning' = 'false';\n" +
		fmt.Sprintf("SET 'state.savepoints.dir' = '%s';\n", sp) + q7Script(ck, out, n, 2)
	path, _ := stopWithSavepoint(t, unpruned)
	_, stderr, err := resume(t, q7Script(ck, out, n, 2), path, false)
	if err == nil || !strings.Contains(err.Error(), "matches nothing in the query") || !strings.Contains(err.Error(), "Join(") ||
		!strings.Contains(err.Error(), "--allow-non-restored-state") {
		t.Fatalf("want a clear error naming the join whose inputs were pruned, got %v\n%s", err, stderr)
	}
	if _, stderr, err = resume(t, unpruned, path, false); err != nil {
		t.Fatalf("restore without pruning: %v\n%s", err, stderr)
	}
	want := q7Answer(n)
	if got := committedLines(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("committed rows differ from the Go answer: %d rows, want %d\n%s", len(got), len(want), stderr)
	}
}
