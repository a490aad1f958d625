package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/internal/filelock"
)

// unboundedSumScript is an unbounded grouped sum with checkpoints into a
// filesystem sink, all under dir, with job name job and sink folder out.
func unboundedSumScript(dir, job, out string) string {
	return sumScript(dir, job, out, "")
}

// sumScript is unboundedSumScript with more datagen options (such as
// 'number-of-rows', which bounds it).
func sumScript(dir, job, out, more string) string {
	return fmt.Sprintf(`SET 'parallelism.default' = '1';
SET 'pipeline.name' = '%s';
SET 'execution.checkpointing.interval' = '50ms';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'random', 'rows-per-second' = '1000'%s);
CREATE TABLE sums (k BIGINT, s BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
INSERT INTO sums SELECT id %% 10, SUM(id) FROM ev GROUP BY id %% 10;
`, job, filepath.Join(dir, "ckpts"), more, filepath.Join(dir, out))
}

// TestBackgroundJobsShareNoFolder submits a job in the background, as the
// shell's INSERT does, then the same job again: the second fails at once,
// saying another job of this process holds the checkpoint folder. A job
// of another name that writes the same sink folder fails too; one with
// folders of its own runs. After the first stops, the job starts again.
func TestBackgroundJobsShareNoFolder(t *testing.T) {
	dir := t.TempDir()
	jobs := NewJobs()
	defer jobs.Close()
	submitWith := func(job, out string, opts RunOptions) (string, error) {
		t.Helper()
		s := New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
		plan, query, err := s.PlanScript(unboundedSumScript(dir, job, out), RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return jobs.Submit(s, plan, query, opts)
	}
	submit := func(job, out string) (string, error) { return submitWith(job, out, RunOptions{}) }
	first, err := submit("sums", "out")
	if err != nil {
		t.Fatal(err)
	}
	_, err = submit("sums", "out")
	if !errors.Is(err, filelock.ErrHeld) || !strings.Contains(err.Error(), "checkpoint folder") ||
		!strings.Contains(err.Error(), "held by another job of this process") {
		t.Fatalf("second run of the job: %v, want the checkpoint folder held by another job of this process", err)
	}
	_, err = submit("other", "out")
	if !errors.Is(err, filelock.ErrHeld) || !strings.Contains(err.Error(), "sink sums: filesystem sink folder") {
		t.Fatalf("another job into the same sink folder: %v, want the sink folder in use", err)
	}
	third, err := submit("third", "out3")
	if err != nil {
		t.Fatalf("a job with folders of its own: %v", err)
	}
	for _, id := range []string{first, third} {
		if err := jobs.Stop(id); err != nil {
			t.Fatal(err)
		}
	}
	jobs.Wait()
	// Once the first run is stopped, the job restarts from its latest
	// checkpoint.
	again, err := submitWith("sums", "out", RunOptions{Restore: RestoreLatest})
	if err != nil {
		t.Fatalf("restarting the stopped job: %v", err)
	}
	if err := jobs.Stop(again); err != nil {
		t.Fatal(err)
	}
	jobs.Wait()
	// A bounded job that ran to its end has committed its output: a fresh
	// start of it into the same folder is refused.
	submitBounded := func() (string, error) {
		s := New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
		plan, query, err := s.PlanScript(sumScript(dir, "bounded", "out4", ", 'number-of-rows' = '100'"), RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return jobs.Submit(s, plan, query, RunOptions{})
	}
	if _, err := submitBounded(); err != nil {
		t.Fatal(err)
	}
	jobs.Wait()
	_, err = submitBounded()
	var committed *exec.CommittedOutputError
	if !errors.As(err, &committed) || committed.Restored != 0 || committed.Committed < 1 {
		t.Fatalf("a fresh start into the job's committed output: %v, want a CommittedOutputError", err)
	}
}

// TestAllowDuplicateOutputKey checks that the SET key is known and takes
// only a boolean.
func TestAllowDuplicateOutputKey(t *testing.T) {
	if warn, err := CheckSet(KeyAllowDuplicateOutput, "true"); err != nil || warn != "" {
		t.Fatalf("SET '%s' = 'true': %v %s", KeyAllowDuplicateOutput, err, warn)
	}
	if _, err := CheckSet(KeyAllowDuplicateOutput, "sometimes"); err == nil {
		t.Fatalf("SET '%s' = 'sometimes' accepted", KeyAllowDuplicateOutput)
	}
}

// TestTwoInsertsIntoOneFolder: two INSERTs of one job into the same
// filesystem folder would collide; the job is refused with what to do.
func TestTwoInsertsIntoOneFolder(t *testing.T) {
	dir := t.TempDir()
	s := New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	err := s.RunScript(context.Background(), fmt.Sprintf(`
CREATE TABLE a (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out SELECT n FROM a;
INSERT INTO out SELECT n + 100 FROM a;`, filepath.Join(dir, "out")), RunOptions{JobName: "two"})
	if err == nil || !strings.Contains(err.Error(), "is written by two INSERTs") || !strings.Contains(err.Error(), "UNION ALL") {
		t.Fatalf("got %v, want the refusal of two INSERTs into one folder", err)
	}
	// The same folder named through a symbolic link is the same folder.
	if err := os.MkdirAll(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	s = New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	err = s.RunScript(context.Background(), fmt.Sprintf(`
CREATE TABLE a (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE o1 (n BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE o2 (n BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO o1 SELECT n FROM a;
INSERT INTO o2 SELECT n + 100 FROM a;`, filepath.Join(dir, "real"), filepath.Join(dir, "link")), RunOptions{JobName: "two-linked"})
	if err == nil || !strings.Contains(err.Error(), "is written by two INSERTs (into o1 and o2)") {
		t.Fatalf("got %v, want the refusal of two INSERTs into one folder under two names", err)
	}
}
