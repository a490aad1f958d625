package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// memTxnSink is a transactional sink in memory: rows become committed
// when the checkpoint that pre-committed them completes. Its pre-commit
// fails once, at checkpoint failAt, as a full disk would fail it.
type memTxnSink struct {
	mu          sync.Mutex
	failAt      int64
	failed      bool
	failWriteAt int // the Write call that fails, once (0: none)
	writes      int
	updates     bool               // accepts updating input
	pending     map[string][]int64 // pre-committed, by transaction
	committed   map[string][]int64
	seq         int
}

func newMemTxnSink(failAt int64) *memTxnSink {
	return &memTxnSink{failAt: failAt, pending: map[string][]int64{}, committed: map[string][]int64{}}
}

func (s *memTxnSink) AcceptsUpdates() bool { return s.updates }
func (s *memTxnSink) Parallelism() int     { return 0 }
func (s *memTxnSink) Open(int, int) (connector.SinkWriter, error) {
	return &memTxnWriter{s: s}, nil
}

// Recover commits the restored checkpoint's transactions and drops the
// other pending ones.
func (s *memTxnSink) Recover(txns [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := map[string]bool{}
	for _, t := range txns {
		keep[string(t)] = true
		s.commitLocked(string(t))
	}
	for k := range s.pending {
		if !keep[k] {
			delete(s.pending, k)
		}
	}
	return nil
}

func (s *memTxnSink) commitLocked(k string) {
	if rows, ok := s.pending[k]; ok {
		s.committed[k] = rows
		delete(s.pending, k)
	}
}

// rows returns every committed row, sorted.
func (s *memTxnSink) rows() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []int64
	for _, r := range s.committed {
		all = append(all, r...)
	}
	slices.Sort(all)
	return all
}

type memTxnWriter struct {
	s   *memTxnSink
	buf []int64
}

func (w *memTxnWriter) Write(b *types.Batch) error {
	w.s.mu.Lock()
	w.s.writes++
	fail := w.s.writes == w.s.failWriteAt
	w.s.mu.Unlock()
	if fail {
		return fmt.Errorf("write part file: no space left on device")
	}
	for i := range b.Len() {
		v := b.Row(i)[0].Int()
		if b.Kinds[i] != types.Insert {
			v = -1 - v // a retraction or update, which the tests do not expect
		}
		w.buf = append(w.buf, v)
	}
	return nil
}
func (w *memTxnWriter) Flush() error { return nil }
func (w *memTxnWriter) Close() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.seq++
	w.s.committed[fmt.Sprintf("close-%d", w.s.seq)] = w.buf
	w.buf = nil
	return nil
}
func (w *memTxnWriter) PreCommit(id int64) ([]byte, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if id == w.s.failAt && !w.s.failed {
		w.s.failed = true
		return nil, fmt.Errorf("write part file: no space left on device")
	}
	w.s.seq++
	k := fmt.Sprintf("txn-%d-%d", id, w.s.seq)
	w.s.pending[k] = w.buf
	w.buf = nil
	return []byte(k), nil
}
func (w *memTxnWriter) Commit(txn []byte) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.commitLocked(string(txn))
	return nil
}
func (w *memTxnWriter) Abort() error { w.buf = nil; return nil }

// runIntoMemTxn runs n sequence rows through query (over table ev, into
// table out) into sink at parallelism 2 with checkpoints every 50 ms and
// quick restarts; it returns stderr and checks that the committed rows are
// 0..n-1, each exactly once.
func runIntoMemTxn(t *testing.T, sink *memTxnSink, n int, query string) string {
	t.Helper()
	var stderr bytes.Buffer
	s := New(connector.Env{Stdout: io.Discard, Stderr: &stderr})
	s.Connectors.RegisterSink("memtxn", func(*connector.Table, connector.Env) (connector.Sink, error) { return sink, nil })
	script := fmt.Sprintf(`SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '50ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.fixed-delay.delay' = '1 ms';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '40000');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'memtxn');
%s`, filepath.Join(t.TempDir(), "ckpts"), n-1, query)
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: "memtxn"}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	got := sink.rows()
	if len(got) != n {
		t.Fatalf("%d rows committed, want %d\n%s", len(got), n, stderr.String())
	}
	for i, v := range got {
		if v != int64(i) {
			t.Fatalf("committed rows are not 0..%d exactly once: at %d found %d\n%s", n-1, i, v, stderr.String())
		}
	}
	return stderr.String()
}

// TestSinkPreCommitFailureRestores: a sink whose pre-commit fails (a full
// disk) may have lost rows written since the last checkpoint, so the task
// fails and the job restores its latest checkpoint instead of going on
// without them; the committed output is every row exactly once.
func TestSinkPreCommitFailureRestores(t *testing.T) {
	sink := newMemTxnSink(3)
	log := runIntoMemTxn(t, sink, 20000, "INSERT INTO out SELECT id FROM ev;")
	if !strings.Contains(log, "pre-commit: write part file: no space left on device") || !strings.Contains(log, "restarting") {
		t.Fatalf("the failed pre-commit did not fail the job and restart it:\n%s", log)
	}
}

// failingSource emits rows 0..n-1 in one batch, then fails.
type failingSource struct{ n int }

func (f failingSource) Bounded() bool { return true }
func (f failingSource) Open(int, int) (connector.SourceReader, error) {
	return &failingReader{n: f.n}, nil
}

type failingReader struct {
	positionless
	n    int
	sent bool
}

func (r *failingReader) Next(_ context.Context, b *types.Batch, _ int) error {
	if r.sent {
		return fmt.Errorf("read input: connection reset")
	}
	r.sent = true
	for i := range r.n {
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i))})
	}
	return nil
}

// TestFailedJobCommitsNothing: a job without checkpointing that fails
// leaves nothing committed in its sink (it aborts, as with checkpoints),
// so no partial result looks like a finished one.
func TestFailedJobCommitsNothing(t *testing.T) {
	sink := newMemTxnSink(0)
	s := New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	s.Connectors.RegisterSource("failing", func(*connector.Table, connector.Env) (connector.Source, error) { return failingSource{n: 500}, nil })
	s.Connectors.RegisterSink("memtxn", func(*connector.Table, connector.Env) (connector.Sink, error) { return sink, nil })
	err := s.RunScript(context.Background(), `SET 'parallelism.default' = '1';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'failing');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'memtxn');
INSERT INTO out SELECT id FROM src;`, RunOptions{JobName: "failing"})
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("got %v, want the source's failure", err)
	}
	if rows := sink.rows(); len(rows) != 0 {
		t.Fatalf("the failed job committed %d rows", len(rows))
	}
}

// TestSinkWriteFailureRestores: a sink write that fails (while the task
// processes rows or flushes its held mini-batch output) fails the task and
// the job restores; every result row is committed exactly once. (Which of
// the two paths the failing write takes depends on timing; the barrier
// path is not forced here.)
func TestSinkWriteFailureRestores(t *testing.T) {
	sink := newMemTxnSink(0)
	sink.updates, sink.failWriteAt = true, 3
	log := runIntoMemTxn(t, sink, 20000, "INSERT INTO out SELECT id FROM ev GROUP BY id;")
	if !strings.Contains(log, "no space left on device") {
		t.Fatalf("the sink write did not fail:\n%s", log)
	}
}

// staggeredSource: subtask 0 emits rows 0..n-1 and ends; subtask 1 emits
// nothing and fails once subtask 0's reader has closed (after its task,
// source and sink chained, ended well).
type staggeredSource struct {
	n       int
	closed0 chan struct{}
}

func (s staggeredSource) Bounded() bool { return true }
func (s staggeredSource) Open(subtask, _ int) (connector.SourceReader, error) {
	return &staggeredReader{s: s, subtask: subtask}, nil
}

type staggeredReader struct {
	positionless
	s       staggeredSource
	subtask int
	sent    bool
}

func (r *staggeredReader) Next(ctx context.Context, b *types.Batch, _ int) error {
	if r.subtask == 1 {
		select {
		case <-r.s.closed0:
			return fmt.Errorf("read input: connection reset")
		case <-ctx.Done():
			return ctx.Err()
		default:
			return nil // nothing yet
		}
	}
	if !r.sent {
		r.sent = true
		for i := range r.s.n {
			b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i))})
		}
		return nil
	}
	return io.EOF
}
func (r *staggeredReader) Close() error {
	if r.subtask == 0 {
		close(r.s.closed0)
	}
	return nil
}

// TestLateFailureCommitsNothing: without checkpoints, a sink subtask whose
// part of the job ended well does not commit while another subtask can
// still fail: when one fails later, nothing of the job is committed.
func TestLateFailureCommitsNothing(t *testing.T) {
	sink := newMemTxnSink(0)
	s := New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	s.Connectors.RegisterSource("staggered", func(*connector.Table, connector.Env) (connector.Source, error) {
		return staggeredSource{n: 100, closed0: make(chan struct{})}, nil
	})
	s.Connectors.RegisterSink("memtxn", func(*connector.Table, connector.Env) (connector.Sink, error) { return sink, nil })
	err := s.RunScript(context.Background(), `SET 'parallelism.default' = '2';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'staggered');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'memtxn');
INSERT INTO out SELECT id FROM src;`, RunOptions{JobName: "late"})
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("got %v, want the late failure", err)
	}
	if rows := sink.rows(); len(rows) != 0 {
		t.Fatalf("the failed job committed %d rows", len(rows))
	}
}
