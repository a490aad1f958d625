package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// fakeClock is a processing-time clock the test moves; reads counts the
// times it was read.
type fakeClock struct {
	now   time.Time
	reads int
}

func (c *fakeClock) read() time.Time { c.reads++; return c.now }

// rowsEmitter keeps copies of the rows it is given.
type rowsEmitter struct{ rows [][]types.Value }

func (e *rowsEmitter) Emit(b *types.Batch) error {
	for i := range b.Len() {
		e.rows = append(e.rows, slices.Clone(b.Row(i)))
	}
	return nil
}

// TestProctimeCalcReadsClockOncePerBatch: a Calc projecting PROCTIME()
// (and filtering on it) reads the task's clock (OpContext.Clock) once per
// batch, and every row of the batch has that time.
func TestProctimeCalcReadsClockOncePerBatch(t *testing.T) {
	pt := func() expr.Expr {
		e, err := expr.NewTimeCall("PROCTIME", "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// WHERE PROCTIME() IS NOT NULL: the filter's call is bound too.
	filter := &expr.IsNull{X: pt(), Not: true}
	proj := []expr.Expr{&expr.Column{Index: 0, T: types.Type{Kind: types.KindBigInt}}, pt()}
	op := NewCalc(filter, proj)()
	clk := &fakeClock{now: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)}
	if err := op.Open(&OpContext{Name: "Calc", Clock: clk.read}); err != nil {
		t.Fatal(err)
	}
	out := &rowsEmitter{}
	const n = 300
	for batch := range 3 {
		b := types.NewBatch(1, n)
		for i := range n {
			b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i))})
		}
		out.rows = nil
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		if clk.reads != batch+1 {
			t.Fatalf("batch %d: the clock was read %d times in all, want once per batch", batch, clk.reads)
		}
		if len(out.rows) != n {
			t.Fatalf("batch %d: %d rows, want %d", batch, len(out.rows), n)
		}
		want := types.TimestampLTZValue(clk.now.UnixMilli())
		for i, r := range out.rows {
			if r[0].Int() != int64(i) || r[1] != want {
				t.Fatalf("batch %d row %d: %v, want [%d %v]", batch, i, r, i, want)
			}
		}
		clk.now = clk.now.Add(1500 * time.Millisecond)
	}
}

// TestProctimeBindLeavesSource: BindProctime binds a copy; the expression
// it was given still reads the real clock.
func TestProctimeBindLeavesSource(t *testing.T) {
	e, err := expr.NewTimeCall("PROCTIME", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(42)
	b, ok := expr.BindProctime(e, &ms)
	if !ok {
		t.Fatal("BindProctime found no PROCTIME()")
	}
	if v, _ := b.Eval(nil); v.Int() != 42 {
		t.Fatalf("bound PROCTIME() = %d, want 42", v.Int())
	}
	before := time.Now().UnixMilli()
	if v, _ := e.Eval(nil); v.Int() < before {
		t.Fatalf("the source PROCTIME() = %d, before the clock's %d: it was bound", v.Int(), before)
	}
	now, _ := expr.NewTimeCall("NOW", "", nil, nil)
	if _, ok := expr.BindProctime(now, &ms); ok {
		t.Fatal("BindProctime bound NOW()")
	}
}

// TestProctimeWindowFollowsTaskClock: a processing-time TUMBLE window
// aggregate (COUNT(*), SUM(v) per k) assigns rows by the job's clock
// (Options.Clock) and fires by it, with the test moving the clock (no
// sleeping); half-way it checkpoints, with windows open, and the job goes
// on restored at another parallelism. Each window's row is the Go
// answer's: the rows that came while the clock was in it.
func TestProctimeWindowFollowsTaskClock(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 13))
	count, err := aggfunc.Builtins().Lookup("COUNT", true)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := aggfunc.Builtins().Lookup("SUM", false)
	if err != nil {
		t.Fatal(err)
	}
	calls := []AggCall{
		AggCallOf(aggfunc.Call{Func: count, Arg: -1, Type: types.Type{Kind: types.KindBigInt, NotNull: true}, Name: "COUNT(*)"}),
		AggCallOf(aggfunc.Call{Func: sum, Arg: 1, ArgType: types.Type{Kind: types.KindBigInt}, Type: types.Type{Kind: types.KindBigInt}, Name: "SUM(v)"}),
	}
	const size = 1000
	spec := WindowSpec{Kind: WindowTumble, Size: size, Proctime: true}
	clk := &fakeClock{now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	start := func(par int, ck *CheckpointOptions) *ttlHarness {
		h := &ttlHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
		g := &JobGraph{Name: "proc", Vertices: []*Vertex{
			{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s"},
			{Name: "Win", Parallelism: par,
				Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
				Operators: []OperatorSpec{{Name: "WindowAggregate", ID: "w", OutWidth: 6, New: NewWindowAgg([]int{0}, spec, calls)}},
				Sink:      h.sink, SinkName: "out"},
		}}
		h.start(g, Options{BatchSize: 16, ChannelBuffer: 64, Checkpoint: ck, Clock: clk.read}, par)
		return h
	}
	type win struct{ k, end int64 }
	type agg struct{ n, sum int64 }
	model := map[win]agg{}
	steps := func(h *ttlHarness, n int) {
		for range n {
			clk.now = clk.now.Add(time.Duration(50+r.IntN(400)) * time.Millisecond)
			ms := clk.now.UnixMilli()
			var rows [][]types.Value
			for range 1 + r.IntN(20) {
				k, v := int64(r.IntN(7)), int64(r.IntN(1000)-300)
				rows = append(rows, []types.Value{types.BigIntValue(k), types.BigIntValue(v)})
				w := win{k, ms - ms%size + size}
				a := model[w]
				model[w] = agg{a.n + 1, a.sum + v}
			}
			h.emit(clk.now, rows)
		}
	}
	for _, pp := range [][2]int{{2, 3}, {3, 1}} {
		t.Run(fmt.Sprintf("p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			clear(model)
			dir := t.TempDir()
			h := start(pp[0], testCheckpointing(t, dir, "proc", nil, 1<<12))
			steps(h, 30)
			c := h.checkpoint()
			fired := len(h.sink.rows)
			open := 0
			for w := range model {
				if w.end > clk.now.UnixMilli() {
					open++
				}
			}
			if fired == 0 || open == 0 {
				t.Fatalf("seed %d: %d windows fired and %d open at the checkpoint: the test proves nothing", seed, fired, open)
			}
			h2 := start(pp[1], testCheckpointing(t, t.TempDir(), "proc", c, 1<<12))
			steps(h2, 30)
			// Past the last window: every window fires.
			clk.now = clk.now.Add(2 * size * time.Millisecond)
			h2.advance(clk.now)
			for _, tk := range h2.keyed {
				drainInbox(t, tk)
			}
			var want []string
			for w, a := range model {
				want = append(want, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(w.k),
					types.TimestampValue(w.end - size), types.TimestampValue(w.end), types.TimestampLTZValue(w.end - 1),
					types.BigIntValue(a.n), types.BigIntValue(a.sum)}))
			}
			got := append(slices.Clone(h.sink.rows), h2.sink.rows...)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d: windows differ:\n got  %v\n want %v", seed, head(got), head(want))
			}
		})
	}
}
