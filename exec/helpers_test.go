package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// Test-only expressions: the real ones come from package expr.

type colRef struct {
	i int
	t types.Type
}

func (c colRef) Type() types.Type                            { return c.t }
func (c colRef) Eval(row []types.Value) (types.Value, error) { return row[c.i], nil }
func (c colRef) String() string                              { return fmt.Sprintf("$%d", c.i) }

type constant struct{ v types.Value }

func (c constant) Type() types.Type                        { return types.Type{Kind: c.v.Kind()} }
func (c constant) Eval([]types.Value) (types.Value, error) { return c.v, nil }
func (c constant) String() string                          { return c.v.String() }

// greater is a > b with SQL NULL semantics.
type greater struct{ a, b expr.Expr }

func (g greater) Type() types.Type { return types.Boolean }
func (g greater) Eval(row []types.Value) (types.Value, error) {
	a, err := g.a.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	b, err := g.b.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	if a.IsNull() || b.IsNull() {
		return types.NullValue(), nil
	}
	return types.BoolValue(types.Compare(a, b) > 0), nil
}
func (g greater) String() string { return g.a.String() + " > " + g.b.String() }

var errBoom = errors.New("boom")

// failAt fails when column i equals v.
type failAt struct {
	i int
	v int64
}

func (f failAt) Type() types.Type { return types.BigInt }
func (f failAt) Eval(row []types.Value) (types.Value, error) {
	if row[f.i].Int() == f.v {
		return types.Value{}, errBoom
	}
	return row[f.i], nil
}
func (f failAt) String() string { return "fail($" + fmt.Sprint(f.i) + ")" }

// sliceSource is a bounded source over rows; subtask s of p reads rows i
// with i % p == s.
type sliceSource struct {
	width int
	rows  [][]types.Value
}

func (s *sliceSource) Bounded() bool { return true }
func (s *sliceSource) Open(subtask, parallelism int) (connector.SourceReader, error) {
	return &sliceReader{src: s, next: subtask, step: parallelism}, nil
}

type sliceReader struct {
	src        *sliceSource
	next, step int
}

func (r *sliceReader) Next(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for n := 0; n < max && r.next < len(r.src.rows); n++ {
		b.Append(types.Insert, r.src.rows[r.next])
		r.next += r.step
	}
	if r.next >= len(r.src.rows) {
		return io.EOF
	}
	return nil
}
func (r *sliceReader) Position() ([]byte, error) { return nil, nil }
func (r *sliceReader) Seek([]byte) error         { return nil }
func (r *sliceReader) Close() error              { return nil }

// counterSource is an unbounded source of rows (n, n % 10), n = 0, 1, ...
// per subtask; it counts one skipped record per Next call.
type counterSource struct{}

func (counterSource) Bounded() bool { return false }
func (counterSource) Open(int, int) (connector.SourceReader, error) {
	return &counterReader{}, nil
}

type counterReader struct{ n, calls int64 }

func (r *counterReader) Next(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.calls++
	for range max {
		b.Append(types.Insert, []types.Value{types.BigIntValue(r.n), types.BigIntValue(r.n % 10)})
		r.n++
	}
	return nil
}
func (r *counterReader) Skipped() int64            { return r.calls }
func (r *counterReader) Position() ([]byte, error) { return nil, nil }
func (r *counterReader) Seek([]byte) error         { return nil }
func (r *counterReader) Close() error              { return nil }

// collectSink keeps every row written, in order per subtask.
type collectSink struct {
	mu      sync.Mutex
	rows    []string // FormatRow of every row, kind included
	flushed int
	closed  int
	opened  int
	// firstWrite, if set, is closed at the first Write.
	firstWrite chan struct{}
	once       sync.Once
	// gate, if set, blocks every Write until it is closed.
	gate chan struct{}
	// failWrite makes Write fail.
	failWrite bool
	// firstLen is the size of the first batch written.
	firstLen int
}

func (s *collectSink) AcceptsUpdates() bool { return true }
func (s *collectSink) Parallelism() int     { return 0 }
func (s *collectSink) Open(int, int) (connector.SinkWriter, error) {
	s.mu.Lock()
	s.opened++
	s.mu.Unlock()
	return &collectWriter{s: s}, nil
}

type collectWriter struct {
	s   *collectSink
	buf []string
}

func (w *collectWriter) Write(b *types.Batch) error {
	if w.s.firstWrite != nil {
		w.s.once.Do(func() { w.s.firstLen = b.Len(); close(w.s.firstWrite) })
	}
	if w.s.gate != nil {
		<-w.s.gate
	}
	if w.s.failWrite {
		return errBoom
	}
	for i := range b.Len() {
		w.buf = append(w.buf, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	return nil
}

func (w *collectWriter) Flush() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.rows = append(w.s.rows, w.buf...)
	w.buf = w.buf[:0]
	w.s.flushed++
	return nil
}

func (w *collectWriter) Close() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.closed++
	return nil
}

// applyChangelog applies rows ("+I[...]", "-U[...]", ...) and returns the
// resulting rows as "[...]", sorted. A retraction of a missing row is an error.
func applyChangelog(t *testing.T, rows []string) []string {
	t.Helper()
	count := map[string]int{}
	for _, r := range rows {
		kind, body := r[:2], r[2:]
		switch kind {
		case "+I", "+U":
			count[body]++
		case "-U", "-D":
			if count[body] == 0 {
				t.Fatalf("retraction of a row not present: %s", r)
			}
			count[body]--
		default:
			t.Fatalf("bad row %q", r)
		}
	}
	var out []string
	for body, n := range count {
		for range n {
			out = append(out, body)
		}
	}
	slices.Sort(out)
	return out
}

// sortedRows renders rows as "[...]" sorted.
func sortedRows(rows [][]types.Value) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.TrimPrefix(types.FormatRow(types.Insert, r), "+I")
	}
	slices.Sort(out)
	return out
}

// checkNoLeak fails t if goroutines started since base are still running
// shortly after. Goroutines that called wg.Done may take a moment to exit,
// so it yields until they are gone or a generous deadline passes.
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines leaked: %d > %d\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		runtime.Gosched()
	}
}

func bigints(vs ...any) []types.Value {
	row := make([]types.Value, len(vs))
	for i, v := range vs {
		switch v := v.(type) {
		case nil:
		case int:
			row[i] = types.BigIntValue(int64(v))
		case string:
			row[i] = types.StringValue(v)
		case float64:
			row[i] = types.DoubleValue(v)
		default:
			panic(fmt.Sprintf("bigints: %T", v))
		}
	}
	return row
}

// failingSource fails to open.
type failingSource struct{}

func (failingSource) Bounded() bool { return true }
func (failingSource) Open(int, int) (connector.SourceReader, error) {
	return nil, errBoom
}

// trickleSource emits one row per Next call (or, with idle, one row and then
// nothing) until done is closed, then ends. Each call waits 100µs first, so
// that a busy trickle stays far from a full batch within FlushInterval.
type trickleSource struct {
	idle bool
	done chan struct{}
}

func (s *trickleSource) Bounded() bool { return true }
func (s *trickleSource) Open(int, int) (connector.SourceReader, error) {
	return &trickleReader{s: s}, nil
}

type trickleReader struct {
	s *trickleSource
	n int64
}

func (r *trickleReader) Next(ctx context.Context, b *types.Batch, max int) error {
	// Wait a little for data, as a reader of a slow input would.
	select {
	case <-r.s.done:
		return io.EOF
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(100 * time.Microsecond):
	}
	if r.s.idle && r.n > 0 {
		return nil
	}
	b.Append(types.Insert, []types.Value{types.BigIntValue(r.n), types.BigIntValue(0)})
	r.n++
	return nil
}
func (r *trickleReader) Position() ([]byte, error) { return nil, nil }
func (r *trickleReader) Seek([]byte) error         { return nil }
func (r *trickleReader) Close() error              { return nil }

// testCheckpointing returns checkpoint options for job under dir: its
// storage, its working folder, three checkpoints retained, restoring
// restore (may be nil) with a state cache of cache bytes. job must be the
// graph's Name: a job started with another one fails (ErrInvalidGraph).
func testCheckpointing(t *testing.T, dir, job string, restore *checkpoint.Checkpoint, cache int64) *CheckpointOptions {
	t.Helper()
	st, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, job)
	if err != nil {
		t.Fatal(err)
	}
	return &CheckpointOptions{Storage: st, Retain: 3, WorkDir: filepath.Join(dir, job, "_work"), Restore: restore, StateCacheBytes: cache}
}

// sumsByKey is the batch answer of SELECT k, SUM(v) GROUP BY k over rows
// (k, v) with BIGINT columns: a row per key seen, NULL values skipped.
func sumsByKey(rows [][]types.Value) [][]types.Value {
	sums, seen := map[int64]int64{}, map[int64]bool{}
	for _, r := range rows {
		seen[r[0].Int()] = true
		if !r[1].IsNull() {
			sums[r[0].Int()] += r[1].Int()
		}
	}
	var want [][]types.Value
	for k := range seen {
		want = append(want, []types.Value{types.BigIntValue(k), types.BigIntValue(sums[k])})
	}
	return want
}
