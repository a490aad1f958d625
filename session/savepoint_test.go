package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
)

// savepointScript sums a datagen sequence 0..n-1 per id % keys at the given
// parallelism; extra is appended to the query (e.g. a downstream filter).
func savepointScript(ckDir, spDir string, n, keys, par int, query string) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '20ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.savepoints.dir' = '%s';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '40000');
CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'print');
%s;
`, par, ckDir, spDir, n-1, fmt.Sprintf(query, keys, keys))
}

const sumQuery = "INSERT INTO sums SELECT id %% %d, SUM(id), COUNT(*) FROM ev GROUP BY id %% %d"

// stopWithSavepoint runs src until its second checkpoint completes, then
// stops it with a savepoint and returns the savepoint folder and the output.
func stopWithSavepoint(t *testing.T, src string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	stderr := &watchWriter{onLine: func(l string) {
		if strings.HasPrefix(l, "weir: checkpoint 2 complete") {
			cancel()
		}
	}}
	s := New(connector.Env{Stdout: &out, Stderr: stderr})
	if err := s.RunScript(ctx, src, RunOptions{JobName: "sp", StopWithSavepoint: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`savepoint written to (\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no savepoint written:\n%s", stderr.String())
	}
	return m[1], out.String()
}

// resume runs src restored from path and returns its output and stderr.
func resume(t *testing.T, src, path string, allow bool) (string, string, error) {
	t.Helper()
	var out, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &out, Stderr: &stderr})
	err := s.RunScript(context.Background(), src, RunOptions{JobName: "sp", Restore: path, AllowNonRestoredState: allow})
	return out.String(), stderr.String(), err
}

// TestStopWithSavepointAndResume stops a job with a savepoint and resumes
// it unchanged, with an extra downstream filter, and at another parallelism.
func TestStopWithSavepointAndResume(t *testing.T) {
	const n, keys = 30000, 200
	want := keyedSumAnswer(n, keys)
	cases := []struct {
		name                string
		parBefore, parAfter int
		after               string
	}{
		{"same query", 2, 2, sumQuery},
		{"extra downstream filter", 2, 2, "INSERT INTO sums SELECT * FROM (SELECT id %% %d AS k, SUM(id) AS s, COUNT(*) AS c FROM ev GROUP BY id %% %d) WHERE c >= 0"},
		{"parallelism 1 to 4", 1, 4, sumQuery},
		{"parallelism 4 to 1", 4, 1, sumQuery},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ck, sp := filepath.Join(dir, "ck"), filepath.Join(dir, "sp")
			path, out1 := stopWithSavepoint(t, savepointScript(ck, sp, n, keys, tc.parBefore, sumQuery))
			if !strings.HasPrefix(path, sp) {
				t.Fatalf("savepoint %s is not in state.savepoints.dir %s", path, sp)
			}
			out2, stderr, err := resume(t, savepointScript(ck, sp, n, keys, tc.parAfter, tc.after), path, false)
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, "restoring savepoint") {
				t.Fatalf("resume did not restore the savepoint:\n%s", stderr)
			}
			got := upsertByKey(t, out1+out2)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("final state differs from the batch answer (%d rows, want %d)\n%s", len(got), len(want), stderr)
			}
		})
	}
}

// TestIncompatibleRestore restores a savepoint into a query whose aggregate
// changed: a clear error names the unmatched state; with
// --allow-non-restored-state the job runs.
func TestIncompatibleRestore(t *testing.T) {
	dir := t.TempDir()
	ck, sp := filepath.Join(dir, "ck"), filepath.Join(dir, "sp")
	path, _ := stopWithSavepoint(t, savepointScript(ck, sp, 30000, 100, 2, sumQuery))
	changed := savepointScript(ck, sp, 30000, 100, 2, "INSERT INTO sums SELECT id %% %d, MAX(id), COUNT(*) FROM ev GROUP BY id %% %d")
	_, stderr, err := resume(t, changed, path, false)
	if err == nil || !strings.Contains(err.Error(), "matches nothing in the query") || !strings.Contains(err.Error(), "GroupAggregate") ||
		!strings.Contains(err.Error(), "--allow-non-restored-state") {
		t.Fatalf("want a clear error naming the unmatched operator, got %v\n%s", err, stderr)
	}
	out, stderr, err := resume(t, changed, path, true)
	if err != nil {
		t.Fatalf("with --allow-non-restored-state: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "+I[") {
		t.Fatalf("the changed query produced nothing:\n%s", stderr)
	}
}

// TestSavepointMovedElsewhere copies a savepoint to another folder, removes
// the checkpoints and the original, and restores from the copy.
func TestSavepointMovedElsewhere(t *testing.T) {
	const n, keys = 30000, 150
	dir := t.TempDir()
	ck, sp := filepath.Join(dir, "ck"), filepath.Join(dir, "sp")
	src := savepointScript(ck, sp, n, keys, 2, sumQuery)
	path, out1 := stopWithSavepoint(t, src)
	moved := filepath.Join(t.TempDir(), "moved-savepoint")
	if out, err := exec.Command("cp", "-r", path, moved).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	for _, d := range []string{ck, sp} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	out2, stderr, err := resume(t, src, moved, false)
	if err != nil {
		t.Fatalf("resume from the moved savepoint: %v\n%s", err, stderr)
	}
	got := upsertByKey(t, out1+out2)
	if want := keyedSumAnswer(n, keys); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final state differs from the batch answer\n%s", stderr)
	}
}
