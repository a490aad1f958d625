package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// alignReader reads rows (src, ts) with ts = i*step for i in [0, n), up to
// max rows a call, and publishes the largest ts it returned. Before it
// returns a row past holdAt it waits (returning no rows) until hold is
// closed; check, if set, is called at each call with the largest ts
// returned so far.
type alignReader struct {
	src, step, n, i int64
	maxTS           *atomic.Int64
	holdAt          int64
	hold            chan struct{}
	check           func(maxTS int64)
	calls           atomic.Int64
	done            atomic.Bool // returned its last row
}

func (r *alignReader) Next(ctx context.Context, b *types.Batch, max int) error {
	r.calls.Add(1)
	if r.check != nil && r.i > 0 {
		r.check((r.i - 1) * r.step)
	}
	if r.i >= r.n {
		return io.EOF
	}
	for range max {
		if r.i >= r.n {
			break
		}
		ts := r.i * r.step
		if r.hold != nil && ts > r.holdAt {
			select {
			case <-r.hold:
				r.hold = nil
			default:
				// Not released: no rows now (the task asks again).
				select {
				case <-r.hold:
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Millisecond):
				}
				return nil
			}
		}
		b.Append(types.Insert, []types.Value{types.BigIntValue(r.src), types.TimestampValue(ts)})
		r.maxTS.Store(ts)
		r.i++
	}
	if r.i >= r.n {
		r.done.Store(true)
	}
	return nil
}

func (r *alignReader) Position() ([]byte, error) { return binary.AppendVarint(nil, r.i), nil }
func (r *alignReader) Seek(p []byte) error {
	v, n := binary.Varint(p)
	if n <= 0 {
		return errors.New("bad position")
	}
	r.i = v
	return nil
}
func (r *alignReader) Close() error { return nil }

type alignSource struct{ r *alignReader }

func (s alignSource) Bounded() bool                                 { return true }
func (s alignSource) Open(int, int) (connector.SourceReader, error) { return s.r, nil }

// alignJob builds a job of two sources in one alignment group (max drift
// drift ms; WATERMARK FOR ts AS ts) unioned into a collecting sink, with
// checkpointing (no interval: savepoints only), batches of 16 rows.
func alignJob(t *testing.T, fast, slow *alignReader, drift int64) (*Job, []*task, *collectSink) {
	t.Helper()
	return alignJobFrom(t, fast, slow, drift, nil)
}

// alignJobFrom is alignJob restoring restore (nil: none).
func alignJobFrom(t *testing.T, fast, slow *alignReader, drift int64, restore *checkpoint.Checkpoint) (*Job, []*task, *collectSink) {
	t.Helper()
	ts := expr.NewColumn(1, types.Timestamp, "ts")
	al := &WatermarkAlignment{Group: "g", MaxDrift: time.Duration(drift) * time.Millisecond, UpdateInterval: 50 * time.Millisecond}
	spec := &WatermarkSpec{Column: 1, Expr: ts, Align: al}
	sink := &collectSink{}
	src := func(i int, r *alignReader) *Vertex {
		return &Vertex{ID: fmt.Sprintf("s%d", i), Name: fmt.Sprintf("S%d", i), Parallelism: 1,
			Source: alignSource{r}, SourceWidth: 2, SourceName: fmt.Sprintf("s%d", i), Watermark: spec}
	}
	g := &JobGraph{Name: "align", Vertices: []*Vertex{
		src(0, fast), src(1, slow),
		{Name: "U", Parallelism: 1,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}, {From: 1, Partition: Partitioning{Kind: Rebalance}}},
			Sink:   sink, SinkName: "out"},
	}}
	dir := t.TempDir()
	opts := Options{BatchSize: 16, ChannelBuffer: 4,
		Checkpoint: testCheckpointing(t, dir, "align", restore, statestore.DefaultCacheBytes)}
	j, tasks, err := newJob(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	return j, tasks, sink
}

// sourceTask returns the task of source vertex vi.
func sourceTask(t *testing.T, tasks []*task, vi int) *task {
	for _, tk := range tasks {
		if tk.vi == vi {
			if tk.align == nil {
				t.Fatalf("source %d has no aligner", vi)
			}
			return tk
		}
	}
	t.Fatalf("no task of vertex %d", vi)
	return nil
}

// heldAt returns a check for r (set as r.check) and a channel closed once
// r has returned its row of ts at (then, held there, it returns no more).
func heldAt(at int64) (func(int64), chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return func(maxTS int64) {
		if maxTS >= at {
			once.Do(func() { close(ch) })
		}
	}, ch
}

// checkAlignSavepoint loads the savepoint at path and checks the source
// positions in it: fastRows rows read by the fast source s0 and 11 by the
// slow one s1 (held at ts 10). It then restores it with fresh readers,
// the fast one ending after 20 more rows and the slow one at 100 rows, and
// checks that the restored job emits exactly the rows after the
// positions, each once: (0, i*100) for i in [fastRows, fastRows+20) and
// (1, i) for i in [11, 100).
func checkAlignSavepoint(t *testing.T, path string, fastRows int64) {
	t.Helper()
	sp, err := checkpoint.Load(checkpoint.OSFS{}, path)
	if err != nil {
		t.Fatalf("load savepoint %s: %v", path, err)
	}
	want := map[string]int64{"s0": fastRows, "s1": 11}
	got := map[string]int64{}
	for _, p := range sp.Meta.Sources {
		v, n := binary.Varint(p.Position)
		if n <= 0 || p.Subtask != 0 || p.Ended {
			t.Fatalf("savepoint %s: source %s[%d] position %x (ended %v)", path, p.Source, p.Subtask, p.Position, p.Ended)
		}
		got[p.Source] = v
	}
	if len(got) != 2 || got["s0"] != want["s0"] || got["s1"] != want["s1"] {
		t.Fatalf("savepoint %s: source positions %v, want the rows each source read: %v", path, got, want)
	}
	var fastMax, slowMax atomic.Int64
	fast := &alignReader{src: 0, step: 100, n: fastRows + 20, maxTS: &fastMax}
	slow := &alignReader{src: 1, step: 1, n: 100, maxTS: &slowMax}
	j, tasks, sink := alignJobFrom(t, fast, slow, 500, sp)
	j.launch(context.Background(), tasks)
	if err := j.Wait(); err != nil {
		t.Fatalf("restore %s: %v", path, err)
	}
	var wantRows []string
	row := func(src, ts int64) {
		wantRows = append(wantRows, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(src), types.TimestampValue(ts)}))
	}
	for i := fastRows; i < fastRows+20; i++ {
		row(0, i*100)
	}
	for i := int64(11); i < 100; i++ {
		row(1, i)
	}
	gotRows := slices.Clone(sink.rows)
	slices.Sort(gotRows)
	slices.Sort(wantRows)
	if !slices.Equal(gotRows, wantRows) {
		t.Fatalf("restored from %s: %d rows, want %d (each row after the positions once)\ngot  %v\nwant %v", path, len(gotRows), len(wantRows), gotRows, wantRows)
	}
}

// TestAlignmentBoundsDrift runs a source whose event time advances 100
// times faster per row than the other's, in one group with a max drift of
// 500 ms: at every read the fast source's largest event time is at most
// the drift ahead of what the slow one has read (the watermarks are the
// event times), and once the slow one finishes the fast one runs free. No
// row is lost.
func TestAlignmentBoundsDrift(t *testing.T) {
	const drift = 500
	var fastMax, slowMax atomic.Int64
	var worst atomic.Int64
	var mu sync.Mutex
	var errs []string
	slow := &alignReader{src: 1, step: 1, n: 20000, maxTS: &slowMax}
	fast := &alignReader{src: 0, step: 100, n: 400, maxTS: &fastMax}
	fast.check = func(maxTS int64) {
		if slow.done.Load() {
			return // the slow source finished: no bound
		}
		lead := maxTS - slowMax.Load()
		if lead > worst.Load() {
			worst.Store(lead)
		}
		if lead > drift {
			mu.Lock()
			errs = append(errs, fmt.Sprintf("fast source read up to %d ms with the slow one at %d ms: %d ms ahead, max drift %d", maxTS, slowMax.Load(), lead, drift))
			mu.Unlock()
		}
	}
	j, tasks, sink := alignJob(t, fast, slow, drift)
	pauses := 0
	sourceTask(t, tasks, 0).align.onPause = func() { pauses++ }
	j.launch(context.Background(), tasks)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatalf("%d reads past the drift, first: %s", len(errs), errs[0])
	}
	if pauses == 0 {
		t.Fatal("the fast source never paused")
	}
	if got := len(sink.rows); got != 20400 {
		t.Fatalf("sink got %d rows, want 20400", got)
	}
	t.Logf("fast source paused %d times; its largest lead %d ms (max drift %d)", pauses, worst.Load(), drift)
}

// TestAlignmentWithoutGroupRunsAhead is the control of
// TestAlignmentBoundsDrift: without alignment, with the slow source held
// at 10 ms, the fast source reads all its rows, far past the drift.
func TestAlignmentWithoutGroupRunsAhead(t *testing.T) {
	var fastMax, slowMax atomic.Int64
	hold := make(chan struct{})
	slow := &alignReader{src: 1, step: 1, n: 100, maxTS: &slowMax, holdAt: 10, hold: hold}
	fast := &alignReader{src: 0, step: 100, n: 400, maxTS: &fastMax}
	j, tasks, _ := alignJob(t, fast, slow, 500)
	for _, tk := range tasks {
		tk.align = nil
	}
	fastDone := make(chan struct{})
	fast.check = func(int64) {
		if fast.done.Load() {
			select {
			case <-fastDone:
			default:
				close(fastDone)
			}
		}
	}
	j.launch(context.Background(), tasks)
	<-fastDone
	if lead := fastMax.Load() - slowMax.Load(); lead <= 500 {
		t.Fatalf("the fast source is %d ms ahead, want more than the drift without alignment", lead)
	}
	close(hold)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
}

// startPausedAlignJob launches alignJob with the slow source held at 10 ms
// and returns once the fast source has paused (500 ms ahead): the job,
// the fast reader and its largest time read, the channel that releases the
// slow source (the caller closes it), and the job's cancel.
func startPausedAlignJob(t *testing.T) (*Job, *alignReader, *atomic.Int64, chan struct{}, context.CancelFunc) {
	t.Helper()
	var fastMax, slowMax atomic.Int64
	hold := make(chan struct{})
	slow := &alignReader{src: 1, step: 1, n: 100, maxTS: &slowMax, holdAt: 10, hold: hold}
	check, held := heldAt(10)
	slow.check = check
	fast := &alignReader{src: 0, step: 100, n: 1 << 40, maxTS: &fastMax}
	j, tasks, _ := alignJob(t, fast, slow, 500)
	paused := make(chan struct{})
	var once sync.Once
	sourceTask(t, tasks, 0).align.onPause = func() { once.Do(func() { close(paused) }) }
	ctx, cancel := context.WithCancel(context.Background())
	j.launch(ctx, tasks)
	<-paused
	<-held
	return j, fast, &fastMax, hold, cancel
}

// TestAlignmentPausedCheckpointsAndCancel holds the slow source at 10 ms
// so that the fast one pauses: savepoints complete while it is paused, it
// reads nothing more, and cancelling the job ends it (no hang). Each
// savepoint holds the positions of the rows the sources read, and
// restoring one emits exactly the rows after them.
func TestAlignmentPausedCheckpointsAndCancel(t *testing.T) {
	j, fast, fastMax, hold, cancel := startPausedAlignJob(t)
	defer cancel()
	calls := fast.calls.Load()
	var sps []string
	for i := range 3 {
		sp, err := j.Savepoint(context.Background(), t.TempDir(), false)
		if err != nil {
			t.Fatalf("savepoint %d while paused: %v", i, err)
		}
		sps = append(sps, sp)
	}
	if got := fast.calls.Load(); got != calls {
		t.Fatalf("the paused source read %d more times", got-calls)
	}
	if m := fastMax.Load(); m > 10+500+15*100 {
		t.Fatalf("the fast source read up to %d ms with the slow one held at 10 ms", m)
	}
	fastRows := fastMax.Load()/100 + 1
	cancel()
	<-j.Done()
	close(hold)
	for _, sp := range sps {
		checkAlignSavepoint(t, sp, fastRows)
	}
}

// TestAlignmentStopWithSavepointWhilePaused stops the job with a
// savepoint while a source is paused; the savepoint holds the positions of
// the rows the sources read, and restoring it emits exactly the rows after
// them.
func TestAlignmentStopWithSavepointWhilePaused(t *testing.T) {
	var fastMax, slowMax atomic.Int64
	hold := make(chan struct{})
	defer close(hold)
	slow := &alignReader{src: 1, step: 1, n: 100, maxTS: &slowMax, holdAt: 10, hold: hold}
	check, held := heldAt(10)
	slow.check = check
	fast := &alignReader{src: 0, step: 100, n: 1 << 40, maxTS: &fastMax}
	j, tasks, _ := alignJob(t, fast, slow, 500)
	paused := make(chan struct{})
	var once sync.Once
	sourceTask(t, tasks, 0).align.onPause = func() { once.Do(func() { close(paused) }) }
	j.launch(context.Background(), tasks)
	<-paused
	<-held
	sp, err := j.Savepoint(context.Background(), t.TempDir(), true)
	if err != nil {
		t.Fatalf("stop with savepoint while paused: %v", err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	checkAlignSavepoint(t, sp, fastMax.Load()/100+1)
}

// TestAlignGroupMin checks the group's smallest watermark and its wake-up.
func TestAlignGroupMin(t *testing.T) {
	g := newAlignGroup()
	a, b := g.join(), g.join()
	if mn, _ := g.report(a, 100); mn != NoWatermark {
		t.Fatalf("min %d with b unreported, want none", mn)
	}
	mn, wake := g.report(b, 50)
	if mn != 50 {
		t.Fatalf("min %d, want 50", mn)
	}
	if mn, _ := g.report(a, 200); mn != 50 {
		t.Fatalf("min %d, want 50", mn)
	}
	select {
	case <-wake:
		t.Fatal("woken without the min advancing")
	default:
	}
	if mn, _ := g.report(b, MaxWatermark); mn != 200 {
		t.Fatalf("min %d after b finished, want 200", mn)
	}
	<-wake
	al := &aligner{drift: 10}
	if !al.ahead(211, 200) || al.ahead(210, 200) || al.ahead(NoWatermark, 0) {
		t.Fatal("ahead is wrong")
	}
}

// noSplitReader is a SplitLister assigned no split: it never returns a
// row and never ends.
type noSplitReader struct{}

func (noSplitReader) Next(ctx context.Context, _ *types.Batch, _ int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Millisecond):
	}
	return nil
}
func (noSplitReader) LastSplit() (string, []string)        { return "", nil }
func (noSplitReader) SplitCount() int                      { return 0 }
func (noSplitReader) AssignedSplits(dst []string) []string { return dst }
func (noSplitReader) Position() ([]byte, error)            { return nil, nil }
func (noSplitReader) Seek([]byte) error                    { return nil }
func (noSplitReader) Close() error                         { return nil }

type noSplitSource struct{}

func (noSplitSource) Bounded() bool                                 { return false }
func (noSplitSource) Open(int, int) (connector.SourceReader, error) { return noSplitReader{}, nil }

var _ connector.SplitLister = noSplitReader{}

// TestAlignmentSkipsSubtaskWithoutSplits puts a source whose subtask has
// no split assigned (as one of a Kafka source with fewer partitions than
// subtasks) in a group with a source that has rows: that one reads all
// its rows (it is not held back by the empty one's missing watermark).
func TestAlignmentSkipsSubtaskWithoutSplits(t *testing.T) {
	var maxTS atomic.Int64
	rows := &alignReader{src: 0, step: 100, n: 400, maxTS: &maxTS}
	done := make(chan struct{})
	rows.check = func(int64) {
		if rows.done.Load() {
			select {
			case <-done:
			default:
				close(done)
			}
		}
	}
	ts := expr.NewColumn(1, types.Timestamp, "ts")
	spec := &WatermarkSpec{Column: 1, Expr: ts, Align: &WatermarkAlignment{Group: "g", MaxDrift: 500 * time.Millisecond, UpdateInterval: 50 * time.Millisecond}}
	g := &JobGraph{Name: "align-nosplit", Vertices: []*Vertex{
		{ID: "s0", Name: "S0", Parallelism: 1, Source: alignSource{rows}, SourceWidth: 2, SourceName: "s0", Watermark: spec},
		{ID: "s1", Name: "S1", Parallelism: 1, Source: noSplitSource{}, SourceWidth: 2, SourceName: "s1", Watermark: spec},
		{Name: "U", Parallelism: 1,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}, {From: 1, Partition: Partitioning{Kind: Rebalance}}},
			Sink:   &collectSink{}, SinkName: "out"},
	}}
	j, err := Start(context.Background(), g, Options{BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	select {
	case <-done:
	case <-guard.C:
		t.Error("the source with rows was held back by the one without splits")
	}
	j.Stop()
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestJobCheckpointNow takes checkpoints on demand (Job.Checkpoint, with no
// interval set) while a source is held: each is a complete checkpoint of
// the job's storage, not a savepoint, holds the positions of the rows the
// sources read, and restoring it emits exactly the rows after them.
func TestJobCheckpointNow(t *testing.T) {
	j, _, fastMax, hold, cancel := startPausedAlignJob(t)
	defer cancel()
	var paths []string
	for i := range 2 {
		p, err := j.Checkpoint(context.Background())
		if err != nil {
			t.Fatalf("checkpoint %d: %v", i, err)
		}
		if strings.Contains(filepath.Base(p), "savepoint") || slices.Contains(paths, p) {
			t.Fatalf("checkpoint %d: folder %s (before: %v)", i, p, paths)
		}
		paths = append(paths, p)
	}
	fastRows := fastMax.Load()/100 + 1
	cancel()
	<-j.Done()
	close(hold)
	if _, err := j.Checkpoint(context.Background()); err == nil {
		t.Fatal("a checkpoint of an ended job: no error")
	}
	// Retention keeps the last one at least.
	checkAlignSavepoint(t, paths[len(paths)-1], fastRows)
}
