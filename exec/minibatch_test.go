package exec

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestGroupAggMiniBatch feeds batches to a GroupAgg with mini-batch on and
// checks that changes are held until emitPending (or Finish, or
// PrepareSnapshot), then emitted once per group with the net change.
func TestGroupAggMiniBatch(t *testing.T) {
	sum := AggCall{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}
	type step struct {
		in    string // batch, or "" for the flush action
		flush string // "emit", "finish", "snapshot"
		want  string // output after the step
	}
	tests := []struct {
		name  string
		keys  []int
		steps []step
	}{
		{"int key: updates fold", []int{0}, []step{
			{in: "+I 1 1"}, {in: "+I 1 2; +I 2 5"},
			{flush: "emit", want: "+I[1, 3] +I[2, 5]"},
			{in: "+I 1 1"}, {in: "-D 2 5"}, {in: "+I 3 7; -D 3 7"},
			{flush: "emit", want: "-U[1, 3] +U[1, 4] -D[2, 5]"},
			{flush: "emit", want: ""},
			{in: "+I 2 1; +I 1 -4"},
			{flush: "finish", want: "+I[2, 1] -U[1, 4] +U[1, 0]"},
		}},
		{"string key and null key", []int{0}, []step{
			{in: "+I a 1; +I null 2"}, {in: "+I a 2"},
			{flush: "emit", want: "+I[a, 3] +I[<NULL>, 2]"},
			{in: "-D a 1; -D a 2"}, {in: "+I a 9"},
			{flush: "snapshot", want: "-U[a, 3] +U[a, 9]"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := newGroupAggOp(tc.keys, []AggCall{sum})
			if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			st, err := statestore.Open(t.TempDir(), statestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := op.InitState(st, false); err != nil {
				t.Fatal(err)
			}
			op.enableMiniBatch(0)
			rec := &recorder{}
			for i, s := range tc.steps {
				rec.rows = nil
				switch {
				case s.in != "":
					if err := op.Process(0, parseRows(t, 2, s.in), rec); err != nil {
						t.Fatal(err)
					}
				case s.flush == "emit":
					if err := op.emitPending(); err != nil {
						t.Fatal(err)
					}
				case s.flush == "finish":
					if err := op.Finish(rec); err != nil {
						t.Fatal(err)
					}
				case s.flush == "snapshot":
					if err := op.PrepareSnapshot(); err != nil {
						t.Fatal(err)
					}
				}
				if got := strings.Join(rec.rows, " "); got != s.want {
					t.Errorf("step %d: got %q, want %q", i, got, s.want)
				}
				if op.hasPending() != (s.in != "") {
					t.Errorf("step %d: hasPending = %v", i, op.hasPending())
				}
			}
		})
	}
}

// TestGroupAggMiniBatchRowCap checks that a mini-batch is emitted without a
// flush once miniBatchRows rows are pending.
func TestGroupAggMiniBatchRowCap(t *testing.T) {
	op := newGroupAggOp([]int{0}, []AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}})
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	op.enableMiniBatch(0)
	rec := &recorder{}
	b := types.NewBatch(1, 1024)
	for range 1024 {
		b.Append(types.Insert, []types.Value{types.BigIntValue(7)})
	}
	for range miniBatchRows/1024 - 1 {
		if err := op.Process(0, b, rec); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.rows) != 0 {
		t.Fatalf("emitted %v before the row cap", rec.rows)
	}
	if err := op.Process(0, b, rec); err != nil {
		t.Fatal(err)
	}
	if want := []string{"+I[7, 32768]"}; !slices.Equal(rec.rows, want) {
		t.Fatalf("got %v, want %v", rec.rows, want)
	}
}

// TestGroupAggMiniBatchGroupCap checks when a mini-batch is emitted for
// its touched groups (emitDue): at miniBatchGroups when keys do not repeat;
// held past it while a quarter of the rows fell on touched groups, until
// miniBatchMaxGroups; and that every emit carries each group's net count,
// as a map of the rows counts them.
func TestGroupAggMiniBatchGroupCap(t *testing.T) {
	type input struct {
		name string
		key  func(i int) int64 // the key of the i-th row
		// emitted after how many rows: the batches are of 64 rows
		wantFirst int
	}
	for _, tc := range []input{
		{"distinct keys", func(i int) int64 { return int64(i) }, miniBatchGroups},
		// Every third row falls on key 0: a third of the rows repeat, so
		// the batch is held until it has miniBatchMaxGroups groups, at
		// the batch that brings the 16384th other key (24576 rows).
		{"a hot key", func(i int) int64 {
			if i%3 == 0 {
				return 0
			}
			return int64(i)
		}, 24576},
		// One row in eight repeats: fewer than a quarter, so it is
		// emitted at the batch that passes miniBatchGroups groups
		// (2073 groups after 2368 rows).
		{"few repeats", func(i int) int64 {
			if i%8 == 0 {
				return 0
			}
			return int64(i)
		}, 2368},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := newGroupAggOp([]int{0}, []AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}})
			if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
				t.Fatal(err)
			}
			op.enableMiniBatch(0)
			rec := &recorder{}
			counts := map[int64]int64{}
			emittedAt := -1
			for i := 0; i < miniBatchRows && emittedAt < 0; i += 64 {
				b := types.NewBatch(1, 64)
				for j := i; j < i+64; j++ {
					k := tc.key(j)
					counts[k]++
					b.Append(types.Insert, []types.Value{types.BigIntValue(k)})
				}
				if err := op.Process(0, b, rec); err != nil {
					t.Fatal(err)
				}
				if len(rec.rows) > 0 {
					emittedAt = i + 64
				}
			}
			if emittedAt != tc.wantFirst {
				t.Fatalf("first emitted after %d rows, want %d", emittedAt, tc.wantFirst)
			}
			if len(rec.rows) != len(counts) {
				t.Fatalf("emitted %d rows for %d groups", len(rec.rows), len(counts))
			}
			for k, n := range counts {
				want := "+I[" + strconv.FormatInt(k, 10) + ", " + strconv.FormatInt(n, 10) + "]"
				if !slices.Contains(rec.rows, want) {
					t.Fatalf("no %s among the emitted rows", want)
				}
			}
		})
	}
}

// TestPipelineMiniBatch runs a job with and without mini-batch and checks
// that both end with the batch answer.
func TestPipelineMiniBatch(t *testing.T) {
	rows := testRows(3, 20000, 300, 1000)
	want := sumsByKey(rows)
	for _, mini := range []bool{false, true} {
		sink := &collectSink{}
		g := &JobGraph{Name: "mini", Vertices: []*Vertex{
			{Name: "Source", Parallelism: 2, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2},
			{Name: "Sum -> Sink", Parallelism: 2,
				Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
				Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: 2, New: NewGroupAgg([]int{0},
					[]AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})}},
				Sink: sink},
		}}
		runJob(t, g, Options{BatchSize: 128, MiniBatch: mini})
		if got, w := applyChangelog(t, sink.rows), sortedRows(want); !slices.Equal(got, w) {
			t.Fatalf("mini-batch %v: final result differs: got %d rows, want %d", mini, len(got), len(w))
		}
	}
}

// TestCalcColumnProjection checks the fast paths of a Calc whose
// projections are plain columns: a reordering copy and an identity pass.
func TestCalcColumnProjection(t *testing.T) {
	col := func(i int) expr.Expr { return expr.NewColumn(i, types.BigInt, "") }
	tests := []struct {
		name string
		proj []expr.Expr
		want string
	}{
		{"identity", []expr.Expr{col(0), col(1)}, "+I[1, 2] -U[3, 4]"},
		{"swap", []expr.Expr{col(1), col(0)}, "+I[2, 1] -U[4, 3]"},
		{"subset twice", []expr.Expr{col(1), col(1)}, "+I[2, 2] -U[4, 4]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := NewCalc(nil, tc.proj)()
			if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			if err := op.Process(0, parseRows(t, 2, "+I 1 2; -U 3 4"), rec); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rec.rows, " "); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMiniBatchAllowLatency checks Options.MiniBatchLatency and
// MiniBatchSize ('table.exec.mini-batch.allow-latency', '.size'): with a
// latency longer than the run, the aggregate holds every change to the end
// of input (one insert per key, no update, though its input goes idle
// between batches); with a size, it emits each time that many rows are
// held; and a held change comes out once the latency passed while the
// input is idle and has not ended (the task's timer, not new input).
func TestMiniBatchAllowLatency(t *testing.T) {
	rows := testRows(7, 20000, 300, 1000)
	want := sumsByKey(rows)
	sum := []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}}
	for _, tc := range []struct {
		name    string
		size    int
		updates bool
	}{{"held to the end", 0, false}, {"size 1000", 1000, true}} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &collectSink{}
			g := &JobGraph{Name: "latency", Vertices: []*Vertex{
				{Name: "Source", Parallelism: 2, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2},
				{Name: "Sum -> Sink", Parallelism: 2,
					Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
					Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: 2, New: NewGroupAgg([]int{0}, sum)}},
					Sink:      sink},
			}}
			runJob(t, g, Options{BatchSize: 64, ChannelBuffer: 1, MiniBatch: true, MiniBatchLatency: time.Hour, MiniBatchSize: tc.size})
			if got, w := applyChangelog(t, sink.rows), sortedRows(want); !slices.Equal(got, w) {
				t.Fatalf("final result differs: got %d rows, want %d", len(got), len(w))
			}
			updates := 0
			for _, r := range sink.rows {
				if !strings.HasPrefix(r, "+I") {
					updates++
				}
			}
			if tc.updates != (updates > 0) || !tc.updates && len(sink.rows) != len(want) {
				t.Fatalf("%d rows, %d of them updates (want %d keys, updates %v)", len(sink.rows), updates, len(want), tc.updates)
			}
		})
	}

	t.Run("due while idle", func(t *testing.T) {
		first := make(chan struct{})
		sink := &collectSink{firstWrite: first}
		keys := [][]types.Value{bigints(1, 10), bigints(2, 20), bigints(1, 5), bigints(3, 7)}
		g := &JobGraph{Name: "idle", Vertices: []*Vertex{
			{Name: "Source", Parallelism: 1, Source: &idleSource{rows: keys}, SourceWidth: 2},
			{Name: "Sum -> Sink", Parallelism: 1,
				Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
				Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: 2, New: NewGroupAgg([]int{0}, sum)}},
				Sink:      sink},
		}}
		runUntil(t, g, Options{MiniBatch: true, MiniBatchLatency: 20 * time.Millisecond}, first,
			"the held changes never came out while the input was idle")
		if sink.firstLen != 3 {
			t.Errorf("first write of %d rows, want the 3 keys' sums at once", sink.firstLen)
		}
	})
}

// TestMiniBatchLatencyWatermark checks that with a latency longer than the
// run, the aggregate's held changes still go out before a watermark that
// follows them (as Flink finishes a mini-batch at a watermark): the
// operator after it sees the sums, then the watermark.
func TestMiniBatchLatencyWatermark(t *testing.T) {
	var seq []string
	var mu sync.Mutex
	sawWM := make(chan struct{})
	var once sync.Once
	rows := [][]types.Value{
		{types.BigIntValue(1), types.TimestampValue(1000)}, {types.BigIntValue(2), types.TimestampValue(2000)},
		{types.BigIntValue(1), types.TimestampValue(3000)},
	}
	rec := func() Operator {
		return &seqRecorder{seq: &seq, mu: &mu, wm: func() { once.Do(func() { close(sawWM) }) }}
	}
	count := []AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}}
	ts := expr.NewColumn(1, types.Timestamp, "ts")
	g := &JobGraph{Name: "wm", Vertices: []*Vertex{
		{Name: "Source", Parallelism: 1, Source: &idleSource{rows: rows}, SourceWidth: 2,
			Watermark: &WatermarkSpec{Column: 1, Expr: ts}},
		{Name: "Count -> Recorder -> Sink", Parallelism: 1,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: 2, New: NewGroupAgg([]int{0}, count)},
				{Name: "Recorder", OutWidth: 2, New: rec}},
			Sink: &collectSink{}},
	}}
	runUntil(t, g, Options{MiniBatch: true, MiniBatchLatency: time.Hour, AutoWatermarkInterval: time.Millisecond}, sawWM,
		"no watermark of the last row reached the operator after the aggregate")
	mu.Lock()
	defer mu.Unlock()
	// The first watermark at the last row's time must come after both sums.
	rowsBefore := 0
	for _, e := range seq {
		if strings.HasPrefix(e, "wm") {
			break
		}
		rowsBefore++
	}
	if rowsBefore != 2 {
		t.Errorf("%d rows before the watermark of the last row, want the 2 keys' counts: %v", rowsBefore, seq)
	}
}

// seqRecorder passes rows on and records rows and the watermarks at or past
// 3 s (the last row's time) in their order; wm is called at the first such.
type seqRecorder struct {
	seq *[]string
	mu  *sync.Mutex
	wm  func()
}

func (r *seqRecorder) Open(*OpContext) error { return nil }
func (r *seqRecorder) Process(_ int, b *types.Batch, out Emitter) error {
	r.mu.Lock()
	for i := range b.Len() {
		*r.seq = append(*r.seq, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	r.mu.Unlock()
	return out.Emit(b)
}
func (r *seqRecorder) Finish(Emitter) error { return nil }
func (r *seqRecorder) Close() error         { return nil }
func (r *seqRecorder) ProcessWatermark(wm int64, out Emitter) error {
	if wm >= 3000 {
		r.mu.Lock()
		*r.seq = append(*r.seq, "wm "+fmtWM(wm))
		r.mu.Unlock()
		r.wm()
	}
	return ForwardWatermark(out, wm)
}

// runUntil runs g until event happens (failing with what if it has not
// within a minute), then cancels it: the job must end cancelled, not
// failed.
func runUntil(t *testing.T, g *JobGraph, opts Options, event <-chan struct{}, what string) {
	t.Helper()
	j, err := Start(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-event:
	case <-time.After(time.Minute):
		t.Error(what)
	}
	j.Cancel()
	if err := j.Wait(); !errors.Is(err, ErrCancelled) {
		t.Errorf("job ended with %v, want cancelled", err)
	}
}

// idleSource emits its rows in one batch, then finds nothing (a poll of a
// millisecond each) until cancelled: an input that goes idle without ending.
type idleSource struct{ rows [][]types.Value }

func (s *idleSource) Bounded() bool { return false }
func (s *idleSource) Open(int, int) (connector.SourceReader, error) {
	return &idleReader{rows: s.rows}, nil
}

type idleReader struct{ rows [][]types.Value }

func (r *idleReader) Next(ctx context.Context, b *types.Batch, _ int) error {
	if len(r.rows) == 0 {
		// A poll that finds nothing, as a broker's does after its timeout.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
			return nil
		}
	}
	for _, row := range r.rows {
		b.Append(types.Insert, row)
	}
	r.rows = nil
	return nil
}
func (r *idleReader) Position() ([]byte, error) { return nil, nil }
func (r *idleReader) Seek([]byte) error         { return nil }
func (r *idleReader) Close() error              { return nil }
