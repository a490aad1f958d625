package exec

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// floodOp passes its input on and, once its input has ended, emits rows
// without end: downstream work that goes on after the sources finished.
type floodOp struct {
	finishing chan<- struct{}
}

func (o *floodOp) Open(*OpContext) error { return nil }

func (o *floodOp) Process(_ int, b *types.Batch, out Emitter) error { return out.Emit(b) }

func (o *floodOp) Finish(out Emitter) error {
	o.finishing <- struct{}{}
	b := types.NewBatch(2, 256)
	for i := range 256 {
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i)), types.BigIntValue(0)})
	}
	for {
		if err := out.Emit(b); err != nil {
			return err
		}
	}
}

func (o *floodOp) Close() error { return nil }

// countSink counts the rows written and keeps none; with reached set, it
// closes reached once at least want rows came.
type countSink struct {
	rows    atomic.Int64
	want    int64
	reached chan struct{}
	once    sync.Once
}

func (s *countSink) AcceptsUpdates() bool { return true }
func (s *countSink) Parallelism() int     { return 0 }
func (s *countSink) Open(int, int) (connector.SinkWriter, error) {
	return countWriter{s}, nil
}

type countWriter struct{ s *countSink }

func (w countWriter) Write(b *types.Batch) error {
	if n := w.s.rows.Add(int64(b.Len())); w.s.reached != nil && n >= w.s.want {
		w.s.once.Do(func() { close(w.s.reached) })
	}
	return nil
}
func (w countWriter) Flush() error { return nil }
func (w countWriter) Close() error { return nil }

// TestCancelAfterSourcesFinished cancels a job whose sources have read
// all their input while an operator still works: Stop has nothing left to
// stop, Cancel ends the job with ErrCancelled and leaves no goroutine.
func TestCancelAfterSourcesFinished(t *testing.T) {
	base := runtime.NumGoroutine()
	finishing := make(chan struct{}, 4)
	sink := &countSink{want: 5000, reached: make(chan struct{})}
	g := &JobGraph{Name: "cancel", Vertices: []*Vertex{
		{Name: "Source", Parallelism: 2, Source: &sliceSource{width: 2, rows: testRows(3, 5000, 50, 100)}, SourceWidth: 2},
		{Name: "Flood", Parallelism: 2, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Flood", OutWidth: 2, New: func() Operator { return &floodOp{finishing: finishing} }}}},
		{Name: "Sink", Parallelism: 1, Inputs: []Input{{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}}, Sink: sink},
	}}
	j, err := Start(context.Background(), g, Options{BatchSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	<-finishing // an operator's input ended: every source has finished
	if !j.SourcesFinished() || !j.Metrics().SourcesFinished {
		t.Fatalf("SourcesFinished is false after an operator's input ended")
	}
	if m := j.Metrics(); m.RowsRead != 5000 {
		t.Fatalf("read %d rows, want 5000", m.RowsRead)
	}
	select {
	case <-sink.reached: // the flood reaches the sink while the job runs on
	case <-j.Done():
		t.Fatalf("the job ended before the flood reached the sink: %v", j.Wait())
	}
	j.Stop() // nothing to stop: the sources have finished
	select {
	case <-j.Done():
		t.Fatal("the job ended on Stop while its operator floods")
	default:
	}
	j.Cancel()
	j.Cancel() // idempotent
	if err := j.Wait(); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Wait after Cancel: %v, want ErrCancelled", err)
	}
	if sink.rows.Load() < 5000 {
		t.Errorf("the sink got %d rows, want the flood's", sink.rows.Load())
	}
	checkNoLeak(t, base)
}

// TestCancelFloodIntoChainedSink cancels a job whose operator emits
// without end into a sink in its own chain, where no channel blocks: the
// sink's end of the chain notices the cancellation (an operator that emits
// at length in one call, as a join key of many rows, stopped only when it
// was done before).
func TestCancelFloodIntoChainedSink(t *testing.T) {
	base := runtime.NumGoroutine()
	finishing := make(chan struct{}, 4)
	sink := &countSink{want: 100_000, reached: make(chan struct{})}
	g := &JobGraph{Name: "cancel-chained", Vertices: []*Vertex{
		{Name: "Source", Parallelism: 1, Source: &sliceSource{width: 2, rows: testRows(3, 1000, 50, 100)}, SourceWidth: 2},
		{Name: "Flood -> Sink", Parallelism: 2, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Flood", OutWidth: 2, New: func() Operator { return &floodOp{finishing: finishing} }}},
			Sink:      sink},
	}}
	j, err := Start(context.Background(), g, Options{BatchSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sink.reached:
	case <-j.Done():
		t.Fatalf("the job ended before the flood reached the sink: %v", j.Wait())
	}
	j.Cancel()
	if err := j.Wait(); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Wait after Cancel: %v, want ErrCancelled", err)
	}
	checkNoLeak(t, base)
}

// TestSourcesFinishedWhileReading: SourcesFinished stays false while a
// source still reads, and is set when a bounded job ends.
func TestSourcesFinishedWhileReading(t *testing.T) {
	sink := &collectSink{firstWrite: make(chan struct{}), gate: make(chan struct{})}
	g := &JobGraph{Name: "reading", Vertices: []*Vertex{
		{Name: "Source", Parallelism: 1, Source: &sliceSource{width: 2, rows: testRows(4, 100_000, 50, 100)}, SourceWidth: 2},
		{Name: "Sink", Parallelism: 1, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}}, Sink: sink},
	}}
	j, err := Start(context.Background(), g, Options{BatchSize: 16, ChannelBuffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	<-sink.firstWrite // the sink blocks: the source cannot have read 100,000 rows
	if j.SourcesFinished() {
		t.Error("SourcesFinished while the source is blocked reading")
	}
	close(sink.gate)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if !j.SourcesFinished() {
		t.Error("SourcesFinished is false after the job ended")
	}
}
