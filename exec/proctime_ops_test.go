package exec

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// proctimeBefore returns PROCTIME() < TIMESTAMP_LTZ of at: true by a task
// clock before at, false by time.Now (after it).
func proctimeBefore(t *testing.T, at time.Time) expr.Expr {
	t.Helper()
	pt, err := expr.NewTimeCall("PROCTIME", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ltz := types.Type{Kind: types.KindTimestampLTZ}
	e, err := expr.NewCompare("<", pt, expr.NewLiteral(types.TimestampLTZValue(at.UnixMilli()), ltz))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestProctimeOutsideCalcReadsTaskClock: the join operators evaluate a
// residual condition with PROCTIME() themselves (the planner keeps a
// condition over both sides there), and a lookup join the table's
// computed columns. PROCTIME() there must be the task's processing time
// (OpContext.Clock), read once per batch or timer as Calc reads it, never
// time.Now per row. The clock is in 2000 and the residual is PROCTIME() <
// 2001: by the task's clock every pair matches, by time.Now none.
func TestProctimeOutsideCalcReadsTaskClock(t *testing.T) {
	clk := &fakeClock{now: time.Date(2000, 6, 1, 12, 0, 0, 0, time.UTC)}
	residual := proctimeBefore(t, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}
	sides := JoinSpec{Type: InnerJoin, Left: JoinSide{Keys: []int{0}, Kinds: kinds}, Right: JoinSide{Keys: []int{0}, Kinds: kinds}, Residual: residual}
	const n = 40 // rows per side, all of key 1 and time 5000: n*n pairs
	batch := func(side int) *types.Batch {
		b := types.NewBatch(3, n)
		for i := range n {
			b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.TimestampValue(5000), types.BigIntValue(int64(side*1000 + i))})
		}
		return b
	}
	type run struct {
		name  string
		op    Operator
		keyed bool
		want  int // rows out
	}
	runs := []run{
		{name: "Join", op: NewJoin(sides)(), want: n * n},
		{name: "SemiJoin", op: NewSemiJoin(SemiJoinSpec{Left: sides.Left, Right: sides.Right, Residual: residual})(), want: n},
		{name: "IntervalJoin", op: NewIntervalJoin(IntervalJoinSpec{JoinSpec: sides, LeftTime: 1, RightTime: 1, Lower: -1000, Upper: 1000})(), want: n * n},
		{name: "WindowJoin", op: NewWindowJoin(WindowJoinSpec{JoinSpec: sides, LeftEnd: 1, RightEnd: 1})(), keyed: true, want: n * n},
		{name: "TemporalJoin", op: NewTemporalJoin(TemporalJoinSpec{JoinSpec: sides, LeftTime: 1, RightTime: 1})(), keyed: true, want: n},
	}
	for _, rn := range runs {
		t.Run(rn.name, func(t *testing.T) {
			clk.reads = 0
			if err := rn.op.Open(&OpContext{Name: rn.name, MaxParallelism: 128, Clock: clk.read}); err != nil {
				t.Fatal(err)
			}
			out := &rowsEmitter{}
			calls := 0
			var k *state.Keyed
			if rn.keyed {
				var err error
				if k, err = state.NewMemory(state.Options{}); err != nil {
					t.Fatal(err)
				}
				if err := rn.op.(KeyedOperator).OpenKeyed(k); err != nil {
					t.Fatal(err)
				}
			}
			// The right side first (a temporal join's versions), then the left.
			for _, side := range []int{1, 0} {
				b := batch(side)
				if rn.name == "TemporalJoin" && side == 1 {
					b = types.NewBatch(3, 1) // one version of key 1, at time 0
					b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.TimestampValue(0), types.BigIntValue(-1)})
				}
				calls++
				if err := rn.op.Process(side, b, out); err != nil {
					t.Fatal(err)
				}
				clk.now = clk.now.Add(time.Second)
			}
			if k != nil {
				err := k.AdvanceWatermark(10_000, func(tm state.Timer) error {
					calls++
					return rn.op.(KeyedOperator).OnTimer(tm, out)
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			calls++
			if err := rn.op.Finish(out); err != nil {
				t.Fatal(err)
			}
			if len(out.rows) != rn.want {
				t.Errorf("%d rows out, want %d: PROCTIME() in the condition did not read the task's clock", len(out.rows), rn.want)
			}
			if clk.reads == 0 || clk.reads > calls {
				t.Errorf("the task's clock was read %d times for %d batches and timers, want once for each at most (and some)", clk.reads, calls)
			}
		})
	}
	t.Run("LookupJoin", func(t *testing.T) {
		// The table (k, v) gets a computed column p AS PROCTIME(); the
		// residual is over left ++ (k, v, p).
		pt, err := expr.NewTimeCall("PROCTIME", "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		bigint := types.Type{Kind: types.KindBigInt}
		table := make([][]types.Value, n)
		for i := range table {
			table[i] = []types.Value{types.BigIntValue(1), types.BigIntValue(int64(i))}
		}
		spec := LookupJoinSpec{Type: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
			SourceWidth: 2, Computed: []expr.Expr{expr.NewColumn(0, bigint, "k"), expr.NewColumn(1, bigint, "v"), pt},
			Residual: residual, Table: "t",
			Open: func() (connector.Source, error) { return &sliceSource{width: 2, rows: table}, nil }}
		clk.reads = 0
		loadedAt := clk.now
		op := NewLookupJoin(spec)()
		if err := op.Open(&OpContext{Name: "LookupJoin", MaxParallelism: 128, Clock: clk.read}); err != nil {
			t.Fatal(err)
		}
		clk.now = clk.now.Add(time.Second)
		out := &rowsEmitter{}
		if err := op.Process(0, batch(0), out); err != nil {
			t.Fatal(err)
		}
		if len(out.rows) != n*n {
			t.Fatalf("%d rows out, want %d", len(out.rows), n*n)
		}
		want := types.TimestampLTZValue(loadedAt.UnixMilli())
		for _, r := range out.rows {
			if r[5] != want {
				t.Fatalf("row %v: the computed PROCTIME() column is %v, want the task clock's %v at the load", r, r[5], want)
			}
		}
		if clk.reads == 0 || clk.reads > 3 {
			t.Errorf("the task's clock was read %d times for a load and a batch", clk.reads)
		}
	})
}

// clockedSource's reader is a ClockReader: it emits one row, the time of
// the clock the task gave it (or NULL without one).
type clockedSource struct{}

func (clockedSource) Bounded() bool { return true }
func (clockedSource) Open(int, int) (connector.SourceReader, error) {
	return &clockedReader{}, nil
}

type clockedReader struct {
	clock func() time.Time
	done  bool
}

func (r *clockedReader) SetClock(clock func() time.Time) { r.clock = clock }
func (r *clockedReader) Next(_ context.Context, b *types.Batch, _ int) error {
	if !r.done {
		v := types.Value{}
		if r.clock != nil {
			v = types.TimestampLTZValue(r.clock().UnixMilli())
		}
		b.Append(types.Insert, []types.Value{v})
		r.done = true
	}
	return io.EOF
}
func (r *clockedReader) Position() ([]byte, error) { return nil, nil }
func (r *clockedReader) Seek([]byte) error         { return nil }
func (r *clockedReader) Close() error              { return nil }

// TestSourceReaderGetsTaskClock: a source reader that evaluates PROCTIME()
// itself (VALUES) is given the task's processing-time clock
// (Options.Clock) through ClockReader.
func TestSourceReaderGetsTaskClock(t *testing.T) {
	at := time.Date(2000, 6, 1, 12, 0, 0, 0, time.UTC)
	sink := &collectSink{}
	g := &JobGraph{Name: "clocked", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: clockedSource{}, SourceWidth: 1, SourceName: "s", Sink: sink, SinkName: "out"},
	}}
	runJob(t, g, Options{Clock: func() time.Time { return at }})
	want := []string{types.FormatRow(types.Insert, []types.Value{types.TimestampLTZValue(at.UnixMilli())})}
	if !slices.Equal(sink.rows, want) {
		t.Fatalf("rows %v, want %v: the reader did not get the task's clock", sink.rows, want)
	}
}
