package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/filesystem"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/types"
)

// closeCommitSink is a transactional sink that is not an
// connector.EndingWriter (as the Kafka sink): its Close commits the rows
// of a job without checkpoints, irrevocably; with fail set, the Close of
// subtask 0 fails instead, committing nothing.
type closeCommitSink struct {
	mu        sync.Mutex
	fail      bool
	committed []int64
}

func (s *closeCommitSink) AcceptsUpdates() bool { return false }
func (s *closeCommitSink) Parallelism() int     { return 0 }
func (s *closeCommitSink) Open(subtask, _ int) (connector.SinkWriter, error) {
	return &closeCommitWriter{s: s, subtask: subtask}, nil
}
func (s *closeCommitSink) Recover([][]byte) error { return nil }

type closeCommitWriter struct {
	s       *closeCommitSink
	subtask int
	buf     []int64
}

func (w *closeCommitWriter) Write(b *types.Batch) error {
	for i := range b.Len() {
		w.buf = append(w.buf, b.Row(i)[0].Int())
	}
	return nil
}
func (w *closeCommitWriter) Flush() error { return nil }
func (w *closeCommitWriter) PreCommit(int64) ([]byte, error) {
	return nil, errors.New("no checkpoints here")
}
func (w *closeCommitWriter) Commit([]byte) error { return nil }
func (w *closeCommitWriter) Abort() error        { w.buf = nil; return nil }
func (w *closeCommitWriter) Close() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.fail && w.subtask == 0 {
		return errors.New("commit at close: broker not available")
	}
	w.s.committed = append(w.s.committed, w.buf...)
	w.buf = nil
	return nil
}

// TestEndCommitMixedSinksCloseFails: a statement set without checkpoints
// writes a filesystem sink (an EndingWriter) and a sink whose Close
// commits (as Kafka's); every filesystem subtask commits, then a Close of
// the other sink fails. The job fails, so the filesystem output must be
// hidden again and its files discarded: no row visible, no in-progress
// file left behind. The rerun then writes exactly the batch answer.
func TestEndCommitMixedSinksCloseFails(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for par := 2; par <= 3; par++ {
		t.Run(fmt.Sprintf("p=%d", par), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			script := strings.Replace(endCommitScript("", out, n, par, ""), "INSERT INTO out", `CREATE TABLE k (id BIGINT) WITH ('connector' = 'closecommit');
EXECUTE STATEMENT SET BEGIN
INSERT INTO k SELECT id FROM ev;
INSERT INTO out`, 1) + "END;\n"
			run := func(fail bool) (*closeCommitSink, error, string) {
				sink := &closeCommitSink{fail: fail}
				var stderr bytes.Buffer
				s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
				s.Connectors.RegisterSink("closecommit", func(*connector.Table, connector.Env) (connector.Sink, error) { return sink, nil })
				err := s.RunScript(context.Background(), script, RunOptions{JobName: "mixed", Exec: exec.Options{BatchSize: 128}})
				return sink, err, stderr.String()
			}
			_, err, stderr := run(true)
			if err == nil || !strings.Contains(err.Error(), "broker not available") {
				t.Fatalf("the job returned %v, want the failed Close\n%s", err, stderr)
			}
			if lines, tmp := endOutput(t, out); len(lines) > 0 || len(tmp) > 0 {
				t.Fatalf("the failed job left %d rows visible and in-progress files %v", len(lines), tmp)
			}
			sink, err, stderr := run(false)
			if err != nil {
				t.Fatalf("rerun: %v\n%s", err, stderr)
			}
			lines, tmp := endOutput(t, out)
			if !slices.Equal(lines, want) || len(tmp) > 0 {
				t.Fatalf("after the rerun %d rows visible (%d in-progress files), want the %d of the batch answer", len(lines), len(tmp), len(want))
			}
			got := slices.Sorted(slices.Values(sink.committed))
			if len(got) != n || got[0] != 0 || got[n-1] != n-1 {
				t.Fatalf("the rerun committed %d rows into the other sink, want 0..%d", len(got), n-1)
			}
		})
	}
}

// cancelPrepareSink is a filesystem sink whose writers call cancel on
// their first PrepareEnd, once every task of the job has ended well.
type cancelPrepareSink struct {
	*filesystem.Sink
	cancel func()
	once   *sync.Once
}

func (s cancelPrepareSink) Open(subtask, par int) (connector.SinkWriter, error) {
	w, err := s.Sink.Open(subtask, par)
	if err != nil {
		return nil, err
	}
	return cancelPrepareWriter{Writer: w.(*filesystem.Writer), s: s}, nil
}

type cancelPrepareWriter struct {
	*filesystem.Writer
	s cancelPrepareSink
}

func (w cancelPrepareWriter) PrepareEnd() ([]byte, error) {
	w.s.once.Do(w.s.cancel)
	return w.Writer.PrepareEnd()
}

// TestCancelDuringEndPrepare: a Cancel that comes while the sink subtasks
// of a job without checkpoints prepare their end (every task ended well,
// nothing committed yet) is in time: the job must report the
// cancellation and leave nothing, visible or in progress; the rerun
// writes exactly the batch answer.
func TestCancelDuringEndPrepare(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for par := 1; par <= 3; par++ {
		t.Run(fmt.Sprintf("p=%d", par), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			script := strings.Replace(endCommitScript("", out, n, par, ""), "'connector' = 'filesystem', 'path'", "'connector' = 'fscancel', 'path'", 1)
			var job atomic.Pointer[exec.Job]
			var commits atomic.Int32
			fault := func(p string) error {
				if p == exec.FaultEndCommit {
					commits.Add(1)
				}
				return nil
			}
			var stderr bytes.Buffer
			s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
			s.Connectors.RegisterSink("fscancel", func(tb *connector.Table, env connector.Env) (connector.Sink, error) {
				sk, err := filesystem.NewSink(tb, env)
				if err != nil {
					return nil, err
				}
				return cancelPrepareSink{Sink: sk.(*filesystem.Sink), cancel: func() { job.Load().Cancel() }, once: &sync.Once{}}, nil
			})
			err := s.RunScript(context.Background(), script,
				RunOptions{JobName: "cancel", Exec: exec.Options{BatchSize: 128, Fault: fault, Built: func(j *exec.Job) { job.Store(j) }}})
			if !errors.Is(err, exec.ErrCancelled) {
				t.Fatalf("the job returned %v, want the cancellation (it came before any commit)\n%s", err, stderr.String())
			}
			if c := commits.Load(); c != 0 {
				t.Fatalf("%d subtasks began to commit after the Cancel", c)
			}
			if lines, tmp := endOutput(t, out); len(lines) > 0 || len(tmp) > 0 {
				t.Fatalf("the cancelled job left %d rows visible and %d in-progress files", len(lines), len(tmp))
			}
			s2 := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
			if err := s2.RunScript(context.Background(), endCommitScript("", out, n, par, ""), RunOptions{JobName: "cancel", Exec: exec.Options{BatchSize: 128}}); err != nil {
				t.Fatalf("rerun: %v", err)
			}
			lines, tmp := endOutput(t, out)
			if !slices.Equal(lines, want) || len(tmp) > 0 {
				t.Fatalf("after the rerun %d rows visible (%d in-progress files), want the %d of the batch answer", len(lines), len(tmp), len(want))
			}
		})
	}
}

// TestFinalCommitFailsRestoreOtherParallelism: with checkpointing and no
// restarts, a bounded job's final checkpoint completes, then the last sink
// subtask's commit of it fails while the others commit theirs: the job
// fails with part of the output visible. A new run restoring that
// checkpoint at another parallelism must commit every old subtask's
// transaction (Recover) and read nothing more: the output is then exactly
// the batch answer, nothing in progress.
func TestFinalCommitFailsRestoreOtherParallelism(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for _, tc := range []struct{ from, to int }{{3, 2}, {2, 4}, {4, 1}} {
		t.Run(fmt.Sprintf("p=%d->%d", tc.from, tc.to), func(t *testing.T) {
			dir := t.TempDir()
			out, ck := filepath.Join(dir, "out"), filepath.Join(dir, "ck")
			first := strings.Replace(endCommitScript(ck, out, n, tc.from, "1 h"), "'connector' = 'filesystem', 'path'", "'connector' = 'fsfail', 'path'", 1)
			first = strings.Replace(first, "'restart-strategy.type' = 'fixed-delay'", "'restart-strategy.type' = 'none'", 1)
			var failed atomic.Bool
			var stderr bytes.Buffer
			s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
			s.Connectors.RegisterSink("fsfail", func(tb *connector.Table, env connector.Env) (connector.Sink, error) {
				sk, err := filesystem.NewSink(tb, env)
				if err != nil {
					return nil, err
				}
				return commitFailSink{Sink: sk.(*filesystem.Sink), fail: tc.from - 1, failed: &failed}, nil
			})
			err := s.RunScript(context.Background(), first, RunOptions{JobName: "final", Exec: exec.Options{BatchSize: 128}})
			if err == nil || !failed.Load() {
				t.Fatalf("the first run returned %v (commit failed: %v), want the failed commit\n%s", err, failed.Load(), stderr.String())
			}
			lines, _ := endOutput(t, out)
			if len(lines) >= len(want) {
				t.Fatalf("the first run left %d of %d rows visible: its commit did not fail part way", len(lines), len(want))
			}
			t.Logf("the first run left %d of %d rows visible", len(lines), len(want))
			chks, _ := filepath.Glob(filepath.Join(ck, "final", "chk-*"))
			if len(chks) != 1 {
				t.Fatalf("checkpoint folders %v, want the final one", chks)
			}
			// No checkpoint interval: the restore alone commits (a run
			// that restores checkpoints its end into the folder given).
			second := endCommitScript("", out, n, tc.to, "")
			second = fmt.Sprintf("SET 'execution.savepoint.path' = '%s';\nSET 'state.checkpoints.dir' = '%s';\n", chks[0], filepath.Join(dir, "ck2")) + second
			var stderr2 bytes.Buffer
			s2 := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr2})
			if err := s2.RunScript(context.Background(), second, RunOptions{JobName: "final", Exec: exec.Options{BatchSize: 128}}); err != nil {
				t.Fatalf("restore at p=%d: %v\n%s", tc.to, err, stderr2.String())
			}
			lines, tmp := endOutput(t, out)
			if !slices.Equal(lines, want) || len(tmp) > 0 {
				t.Fatalf("after the restore %d rows visible (%d in-progress files), want the %d of the batch answer\n%s", len(lines), len(tmp), len(want), stderr2.String())
			}
		})
	}
}

// prepareFailSink is a filesystem sink whose writer of subtask fail
// fails its PrepareEnd: before it finishes anything, or (after) once the
// real PrepareEnd finished every file.
type prepareFailSink struct {
	*filesystem.Sink
	fail  int
	after bool
}

func (s prepareFailSink) Open(subtask, par int) (connector.SinkWriter, error) {
	w, err := s.Sink.Open(subtask, par)
	if err != nil || subtask != s.fail {
		return w, err
	}
	return prepareFailWriter{Writer: w.(*filesystem.Writer), after: s.after}, nil
}

type prepareFailWriter struct {
	*filesystem.Writer
	after bool
}

func (w prepareFailWriter) PrepareEnd() ([]byte, error) {
	if w.after {
		if _, err := w.Writer.PrepareEnd(); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("sync part file: input/output error")
}

// TestEndPrepareFails: in a job without checkpoints, one sink subtask's
// PrepareEnd fails (before or after it finished its files), the others
// having prepared theirs or not yet: the job fails naming the sink, no
// commit begins, and nothing is left, visible or in progress; the rerun
// writes exactly the batch answer.
func TestEndPrepareFails(t *testing.T) {
	const n = 20000
	want := endCommitAnswer(n)
	for par := 1; par <= 3; par++ {
		for fail := range par {
			for _, after := range []bool{false, true} {
				t.Run(fmt.Sprintf("p=%d/fail=%d/after=%v", par, fail, after), func(t *testing.T) {
					out := filepath.Join(t.TempDir(), "out")
					script := strings.Replace(endCommitScript("", out, n, par, ""), "'connector' = 'filesystem', 'path'", "'connector' = 'fsprep', 'path'", 1)
					var commits atomic.Int32
					fault := func(p string) error {
						if p == exec.FaultEndCommit {
							commits.Add(1)
						}
						return nil
					}
					var stderr bytes.Buffer
					s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
					s.Connectors.RegisterSink("fsprep", func(tb *connector.Table, env connector.Env) (connector.Sink, error) {
						sk, err := filesystem.NewSink(tb, env)
						if err != nil {
							return nil, err
						}
						return prepareFailSink{Sink: sk.(*filesystem.Sink), fail: fail, after: after}, nil
					})
					err := s.RunScript(context.Background(), script, RunOptions{JobName: "prep", Exec: exec.Options{BatchSize: 128, Fault: fault}})
					if err == nil || !strings.Contains(err.Error(), "input/output error") || !strings.Contains(err.Error(), "close sink out") {
						t.Fatalf("the job returned %v, want the failed prepare naming the sink\n%s", err, stderr.String())
					}
					if c := commits.Load(); c != 0 {
						t.Fatalf("%d subtasks began to commit after a PrepareEnd failed", c)
					}
					if lines, tmp := endOutput(t, out); len(lines) > 0 || len(tmp) > 0 {
						t.Fatalf("the failed job left %d rows visible and in-progress files %v", len(lines), tmp)
					}
					s2 := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
					if err := s2.RunScript(context.Background(), endCommitScript("", out, n, par, ""), RunOptions{JobName: "prep", Exec: exec.Options{BatchSize: 128}}); err != nil {
						t.Fatalf("rerun: %v", err)
					}
					lines, tmp := endOutput(t, out)
					if !slices.Equal(lines, want) || len(tmp) > 0 {
						t.Fatalf("after the rerun %d rows visible (%d in-progress files), want the %d of the batch answer", len(lines), len(tmp), len(want))
					}
				})
			}
		}
	}
}

// TestEndCommitMixedSinksCommitFails: a statement set without
// checkpoints writes a filesystem sink and a sink whose Close commits (as
// Kafka's); the commit of a filesystem subtask fails (E1). The other sink
// must not have closed (committed) anything, and the filesystem output
// must be hidden again with nothing left behind.
func TestEndCommitMixedSinksCommitFails(t *testing.T) {
	const n = 20000
	for par := 2; par <= 3; par++ {
		for k := 1; k <= par; k++ {
			t.Run(fmt.Sprintf("p=%d/fail=%d", par, k), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				script := strings.Replace(endCommitScript("", out, n, par, ""), "INSERT INTO out", `CREATE TABLE k (id BIGINT) WITH ('connector' = 'closecommit');
EXECUTE STATEMENT SET BEGIN
INSERT INTO k SELECT id FROM ev;
INSERT INTO out`, 1) + "END;\n"
				var passes atomic.Int32
				fault := func(p string) error {
					if p == exec.FaultEndCommit && passes.Add(1) == int32(k) {
						return fmt.Errorf("%w at %s", ErrInjected, p)
					}
					return nil
				}
				sink := &closeCommitSink{}
				var stderr bytes.Buffer
				s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
				s.Connectors.RegisterSink("closecommit", func(*connector.Table, connector.Env) (connector.Sink, error) { return sink, nil })
				err := s.RunScript(context.Background(), script, RunOptions{JobName: "mixed", Exec: exec.Options{BatchSize: 128, Fault: fault}})
				if !errors.Is(err, ErrInjected) {
					t.Fatalf("the job returned %v, want the injected commit failure\n%s", err, stderr.String())
				}
				if len(sink.committed) > 0 {
					t.Fatalf("the other sink committed %d rows of the failed job", len(sink.committed))
				}
				if lines, tmp := endOutput(t, out); len(lines) > 0 || len(tmp) > 0 {
					t.Fatalf("the failed job left %d rows visible and in-progress files %v", len(lines), tmp)
				}
			})
		}
	}
}
