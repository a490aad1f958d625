package exec

import (
	"context"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// proctimeIn returns PROCTIME() > from AND PROCTIME() < to (TIMESTAMP_LTZ
// literals): true by a task clock between them, false by time.Now (after
// them) or a time never set (0).
func proctimeIn(t *testing.T, from, to time.Time) expr.Expr {
	t.Helper()
	cmp := func(op string, at time.Time) expr.Expr {
		pt, err := expr.NewTimeCall("PROCTIME", "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ltz := types.Type{Kind: types.KindTimestampLTZ}
		e, err := expr.NewCompare(op, pt, expr.NewLiteral(types.TimestampLTZValue(at.UnixMilli()), ltz))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e, err := expr.NewAnd(cmp(">", from), cmp("<", to))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// runResidualJoins runs each two-input join operator with residual on n
// rows per side, all of key 1 and time 5000 (every pair joins but for the
// residual; a temporal join gets one version), then the watermark 10000
// (timers), and fails unless every pair (semi and temporal join: every
// left row) comes out. It calls reset before each operator, and check
// after, with the number of Process, timer and Finish calls made.
func runResidualJoins(t *testing.T, residual expr.Expr, n int, octx OpContext, reset func(), check func(t *testing.T, calls int)) {
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}
	sides := JoinSpec{Type: InnerJoin, Left: JoinSide{Keys: []int{0}, Kinds: kinds}, Right: JoinSide{Keys: []int{0}, Kinds: kinds}, Residual: residual}
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
			reset()
			ctx := octx
			ctx.Name = rn.name
			if err := rn.op.Open(&ctx); err != nil {
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
				t.Errorf("%d rows out, want %d: the residual %s did not read what its operator gives it", len(out.rows), rn.want, residual)
			}
			check(t, calls)
		})
	}
}

// TestProctimeOutsideCalcReadsTaskClock: the join operators evaluate a
// residual condition with PROCTIME() themselves (the planner keeps a
// condition over both sides there), and a lookup join the table's
// computed columns. PROCTIME() there must be the task's processing time
// (OpContext.Clock), read once per batch or timer as Calc reads it, never
// time.Now per row. The clock is in 2000 and the residual is PROCTIME()
// in 2000: by the task's clock every pair matches, by time.Now none.
func TestProctimeOutsideCalcReadsTaskClock(t *testing.T) {
	clk := &fakeClock{now: time.Date(2000, 6, 1, 12, 0, 0, 0, time.UTC)}
	residual := proctimeIn(t, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	const n = 40
	runResidualJoins(t, residual, n, OpContext{MaxParallelism: 128, Clock: clk.read},
		func() { clk.reads = 0 },
		func(t *testing.T, calls int) {
			clk.now = clk.now.Add(time.Second)
			if clk.reads == 0 || clk.reads > calls {
				t.Errorf("the task's clock was read %d times for %d batches and timers, want once for each at most (and some)", clk.reads, calls)
			}
		})
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
		b := types.NewBatch(3, n)
		for i := range n {
			b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.TimestampValue(5000), types.BigIntValue(int64(i))})
		}
		if err := op.Process(0, b, out); err != nil {
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

// TestCurrentWatermarkInJoinResiduals: CURRENT_WATERMARK in a join's
// residual (the planner keeps one over both sides there, such as
// a.ts > CURRENT_WATERMARK(b.ts) in an interval join) reads the task's
// watermark (OpContext.Watermark), as in Calc, Join and SemiJoin; unbound
// it is always NULL, and a residual comparing with it drops every row.
func TestCurrentWatermarkInJoinResiduals(t *testing.T) {
	col := expr.NewColumn(1, types.Type{Kind: types.KindTimestamp, Attr: types.Rowtime}, "ts")
	cw, err := expr.NewTimeCall("CURRENT_WATERMARK", "", []expr.Expr{col}, nil)
	if err != nil {
		t.Fatal(err)
	}
	residual := expr.NewIsNull(cw, true)
	var wm atomic.Int64
	wm.Store(3000)
	runResidualJoins(t, residual, 20, OpContext{MaxParallelism: 128, Watermark: &wm}, func() {}, func(*testing.T, int) {})
	t.Run("LookupJoin", func(t *testing.T) {
		table := [][]types.Value{{types.BigIntValue(1), types.BigIntValue(7)}}
		spec := LookupJoinSpec{Type: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 2,
			SourceWidth: 2, Residual: residual, Table: "t",
			Open: func() (connector.Source, error) { return &sliceSource{width: 2, rows: table}, nil }}
		op := NewLookupJoin(spec)()
		if err := op.Open(&OpContext{Name: "LookupJoin", MaxParallelism: 128, Watermark: &wm}); err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(3, 1)
		b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.TimestampValue(5000), types.BigIntValue(0)})
		out := &rowsEmitter{}
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		if len(out.rows) != 1 {
			t.Errorf("%d rows out, want 1: CURRENT_WATERMARK in the residual did not read the task's watermark", len(out.rows))
		}
	})
}
