package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/filesystem"
	"github.com/weir-sql/weir/exec"
)

// endCommitScript copies ids 0..n-1 that are not 3 modulo 7, with id*3,
// into a CSV filesystem sink at out, at parallelism par; checkpointing
// (every interval) into ck when ck is not "".
func endCommitScript(ck, out string, n, par int, interval string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "SET 'parallelism.default' = '%d';\n", par)
	if ck != "" {
		fmt.Fprintf(&sb, `SET 'execution.checkpointing.interval' = '%s';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '3';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
`, interval, ck)
	}
	fmt.Fprintf(&sb, `CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '1000000');
CREATE TABLE out (id BIGINT, x BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv',
  'sink.rolling-policy.file-size' = '2kb');
INSERT INTO out SELECT id, id * 3 FROM ev WHERE id %% 7 <> 3;
`, n-1, out)
	return sb.String()
}

// endCommitAnswer is the batch answer of endCommitScript, computed here:
// "id,x" lines, sorted.
func endCommitAnswer(n int) []string {
	var out []string
	for id := range n {
		if id%7 != 3 {
			out = append(out, fmt.Sprintf("%d,%d", id, id*3))
		}
	}
	slices.Sort(out)
	return out
}

// endOutput returns the lines of the final part files in dir,
// sorted, and the names of the in-progress ones.
func endOutput(t *testing.T, dir string) (lines, inProgress []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".inprogress"):
			inProgress = append(inProgress, name)
		case strings.HasPrefix(name, "part-"):
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if l != "" {
					lines = append(lines, l)
				}
			}
		}
	}
	slices.Sort(lines)
	return lines, inProgress
}

// TestEndCommitAllOrNothing: a job without checkpoints writes a
// filesystem sink with 2 to 4 subtasks; at its end, after every subtask
// prepared its files, the commit of subtask k fails (the fault point E1
// before each subtask's commit: the subtasks before k have committed).
// The job must fail with that error and leave no output at all, visible
// or in progress; the rerun must then be allowed and write exactly the
// batch answer.
func TestEndCommitAllOrNothing(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for par := 2; par <= 4; par++ {
		for k := 1; k <= par; k++ {
			t.Run(fmt.Sprintf("p=%d/fail=%d", par, k), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				script := endCommitScript("", out, n, par, "")
				var passes atomic.Int32
				fault := func(p string) error {
					if p == exec.FaultEndCommit && passes.Add(1) == int32(k) {
						return fmt.Errorf("%w at %s", ErrInjected, p)
					}
					return nil
				}
				var stderr bytes.Buffer
				s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
				err := s.RunScript(context.Background(), script, RunOptions{JobName: "end", Exec: exec.Options{BatchSize: 128, Fault: fault}})
				if !errors.Is(err, ErrInjected) || !strings.Contains(err.Error(), "close sink out") {
					t.Fatalf("the job returned %v, want the injected commit failure naming the sink\n%s", err, stderr.String())
				}
				if got := passes.Load(); got != int32(k) {
					t.Fatalf("%d subtasks began to commit, want %d (the failure stops the commits)", got, k)
				}
				if lines, tmp := endOutput(t, out); len(lines) > 0 || len(tmp) > 0 {
					t.Fatalf("the failed job left %d rows visible and %d in-progress files", len(lines), len(tmp))
				}
				var stderr2 bytes.Buffer
				s2 := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr2})
				if err := s2.RunScript(context.Background(), script, RunOptions{JobName: "end", Exec: exec.Options{BatchSize: 128}}); err != nil {
					t.Fatalf("rerun: %v\n%s", err, stderr2.String())
				}
				lines, tmp := endOutput(t, out)
				if !slices.Equal(lines, want) || len(tmp) > 0 {
					t.Fatalf("after the rerun %d rows visible (%d in-progress files), want the %d of the batch answer", len(lines), len(tmp), len(want))
				}
			})
		}
	}
}

// TestFinalCheckpointCommitFailure: with checkpointing, a bounded job's
// only checkpoint is its final one; the first sink subtask to commit it
// fails right after its commit (K6), so the other subtasks' files of
// that checkpoint may or may not be committed. The restart restores the
// final checkpoint, whose Recover commits every subtask's transaction:
// the output is then exactly the batch answer, with nothing in progress
// left.
func TestFinalCheckpointCommitFailure(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for par := 2; par <= 4; par++ {
		t.Run(fmt.Sprintf("p=%d", par), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			run := runWithFaults(t, endCommitScript(filepath.Join(dir, "ck"), out, n, par, "1 h"), "K6@1=error",
				RunOptions{JobName: "final", Exec: exec.Options{BatchSize: 128}})
			run.expectFired(t, []string{"K6"})
			if !strings.Contains(run.Stderr, "restarting") {
				t.Fatalf("the job did not restart:\n%s", run.Stderr)
			}
			lines, tmp := endOutput(t, out)
			if !slices.Equal(lines, want) || len(tmp) > 0 {
				t.Fatalf("%d rows visible (%d in-progress files), want the %d of the batch answer\n%s", len(lines), len(tmp), len(want), run.Stderr)
			}
		})
	}
}

// commitFailSink is a filesystem sink whose writer of subtask fail fails
// its first Commit, before committing anything.
type commitFailSink struct {
	*filesystem.Sink
	fail   int
	failed *atomic.Bool
}

func (s commitFailSink) Open(subtask, par int) (connector.SinkWriter, error) {
	w, err := s.Sink.Open(subtask, par)
	if err != nil || subtask != s.fail {
		return w, err
	}
	return commitFailWriter{Writer: w.(*filesystem.Writer), failed: s.failed}, nil
}

type commitFailWriter struct {
	*filesystem.Writer
	failed *atomic.Bool
}

func (w commitFailWriter) Commit(txn []byte) error {
	if w.failed.CompareAndSwap(false, true) {
		return errors.New("commit: input/output error")
	}
	return w.Writer.Commit(txn)
}

// TestFinalCommitFailsBetweenSubtasks: with checkpointing, a bounded
// job's only checkpoint is its final one; the last sink subtask's commit
// of it fails before it renames a file, while the others commit theirs:
// part of the output is visible when the job fails. The restart restores
// the final checkpoint, whose Recover commits every subtask's
// transaction: the output is then exactly the batch answer, with nothing
// in progress left.
func TestFinalCommitFailsBetweenSubtasks(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for par := 2; par <= 4; par++ {
		t.Run(fmt.Sprintf("p=%d", par), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			script := strings.Replace(endCommitScript(filepath.Join(dir, "ck"), out, n, par, "1 h"), "'connector' = 'filesystem', 'path'", "'connector' = 'fsfail', 'path'", 1)
			var failed atomic.Bool
			var stderr bytes.Buffer
			s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
			s.Connectors.RegisterSink("fsfail", func(tb *connector.Table, env connector.Env) (connector.Sink, error) {
				sk, err := filesystem.NewSink(tb, env)
				if err != nil {
					return nil, err
				}
				return commitFailSink{Sink: sk.(*filesystem.Sink), fail: par - 1, failed: &failed}, nil
			})
			if err := s.RunScript(context.Background(), script, RunOptions{JobName: "final", Exec: exec.Options{BatchSize: 128}}); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			if !failed.Load() || !strings.Contains(stderr.String(), "input/output error") || !strings.Contains(stderr.String(), "restarting") {
				t.Fatalf("the commit did not fail, or the job did not restart:\n%s", stderr.String())
			}
			lines, tmp := endOutput(t, out)
			if !slices.Equal(lines, want) || len(tmp) > 0 {
				t.Fatalf("%d rows visible (%d in-progress files), want the %d of the batch answer\n%s", len(lines), len(tmp), len(want), stderr.String())
			}
		})
	}
}

// TestCancelDuringEndCommit: a Cancel that comes once a job without
// checkpoints has begun to commit its sinks' output (every task ended
// well, every subtask prepared) is too late: the job must report success
// with the whole output visible, never a cancellation with the output
// committed, nor a half-committed output.
func TestCancelDuringEndCommit(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for par := 2; par <= 4; par++ {
		t.Run(fmt.Sprintf("p=%d", par), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var job atomic.Pointer[exec.Job]
			var cancels atomic.Int32
			fault := func(p string) error {
				if p == exec.FaultEndCommit && cancels.Add(1) == 1 {
					job.Load().Cancel()
				}
				return nil
			}
			var stderr bytes.Buffer
			s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
			err := s.RunScript(context.Background(), endCommitScript("", out, n, par, ""),
				RunOptions{JobName: "cancel", Exec: exec.Options{BatchSize: 128, Fault: fault, Built: func(j *exec.Job) { job.Store(j) }}})
			if err != nil {
				t.Fatalf("the job returned %v; the Cancel came after its commit began\n%s", err, stderr.String())
			}
			if cancels.Load() == 0 {
				t.Fatal("the commit never began")
			}
			lines, tmp := endOutput(t, out)
			if !slices.Equal(lines, want) || len(tmp) > 0 {
				t.Fatalf("%d rows visible (%d in-progress files), want the %d of the batch answer", len(lines), len(tmp), len(want))
			}
		})
	}
}
