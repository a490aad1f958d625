package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// testRows returns n rows (k BIGINT, v BIGINT) with nkeys keys; every 7th v is NULL.
func testRows(seed uint64, n, nkeys, maxV int) [][]types.Value {
	r := rand.New(rand.NewPCG(seed, 1))
	rows := make([][]types.Value, n)
	for i := range rows {
		v := types.BigIntValue(int64(r.IntN(maxV)))
		if i%7 == 3 {
			v = types.NullValue()
		}
		rows[i] = []types.Value{types.BigIntValue(int64(r.IntN(nkeys))), v}
	}
	return rows
}

func runJob(t *testing.T, g *JobGraph, opts Options) {
	t.Helper()
	base := runtime.NumGoroutine()
	j, err := Start(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	checkNoLeak(t, base)
}

func TestPipelineGroupAgg(t *testing.T) {
	rows := testRows(42, 20000, 300, 50)
	// Batch answer of SELECT k, COUNT(*), SUM(v), MIN(v), MAX(v), AVG(v),
	// COUNT(DISTINCT v) FROM t WHERE v > 3 OR v IS NULL... the filter is
	// v > 3, so NULL rows are dropped.
	type acc struct {
		n, sum, mn, mx int64
		distinct       map[int64]bool
	}
	groups := map[int64]*acc{}
	for _, r := range rows {
		if r[1].IsNull() || r[1].Int() <= 3 {
			continue
		}
		k, v := r[0].Int(), r[1].Int()
		a := groups[k]
		if a == nil {
			a = &acc{mn: v, mx: v, distinct: map[int64]bool{}}
			groups[k] = a
		}
		a.n++
		a.sum += v
		a.mn, a.mx = min(a.mn, v), max(a.mx, v)
		a.distinct[v] = true
	}
	var want [][]types.Value
	for k, a := range groups {
		want = append(want, []types.Value{types.BigIntValue(k), types.BigIntValue(a.n), types.BigIntValue(a.sum),
			types.BigIntValue(a.mn), types.BigIntValue(a.mx), types.BigIntValue(a.sum / a.n), types.BigIntValue(int64(len(a.distinct)))})
	}
	aggs := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
		{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
		{Func: AggMin, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
		{Func: AggMax, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
		{Func: AggAvg, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
		{Func: AggCount, Distinct: true, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
	}
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("parallelism ", par), func(t *testing.T) {
			sink := &collectSink{}
			filter := greater{colRef{1, types.BigInt}, constant{types.BigIntValue(3)}}
			g := &JobGraph{Name: "agg", Vertices: []*Vertex{
				{Name: "Source -> Calc", Parallelism: par, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2, SourceName: "t",
					Operators: []OperatorSpec{{Name: "Calc", OutWidth: 2, New: NewCalc(filter, []expr.Expr{colRef{0, types.BigInt}, colRef{1, types.BigInt}})}}},
				{Name: "GroupAggregate -> Sink", Parallelism: par,
					Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
					Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: 7, New: NewGroupAgg([]int{0}, aggs)}},
					Sink:      sink, SinkName: "out"},
			}}
			runJob(t, g, Options{BatchSize: 64, ChannelBuffer: 2})
			got := applyChangelog(t, sink.rows)
			if w := sortedRows(want); !slices.Equal(got, w) {
				t.Fatalf("final result differs: got %d rows, want %d\n got %.300v\nwant %.300v", len(got), len(w), got, w)
			}
			if sink.flushed != par || sink.closed != par {
				t.Errorf("flushed %d, closed %d, want %d each", sink.flushed, sink.closed, par)
			}
		})
	}
}

func TestPipelineUnion(t *testing.T) {
	a, b := testRows(1, 5000, 50, 100), testRows(2, 3000, 80, 100)
	want := sumsByKey(slices.Concat(a, b))
	sink := &collectSink{}
	g := &JobGraph{Name: "union", Vertices: []*Vertex{
		{Name: "A", Parallelism: 2, Source: &sliceSource{width: 2, rows: a}, SourceWidth: 2},
		{Name: "B", Parallelism: 3, Source: &sliceSource{width: 2, rows: b}, SourceWidth: 2},
		{Name: "Sum", Parallelism: 2,
			Inputs: []Input{
				{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}},
				{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{0}}},
			},
			Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: 2, New: NewGroupAgg([]int{0},
				[]AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})}}},
		{Name: "Sink", Parallelism: 1, Inputs: []Input{{From: 2, Partition: Partitioning{Kind: Global}}}, Sink: sink},
	}}
	runJob(t, g, Options{BatchSize: 100})
	// All keys have at least one non-NULL value with this seed.
	if got, w := applyChangelog(t, sink.rows), sortedRows(want); !slices.Equal(got, w) {
		t.Fatalf("got %v\nwant %v", got, w)
	}
}

// TestPipelineAggOverAgg counts the keys per sum: an aggregate over the
// changelog of another aggregate.
func TestPipelineAggOverAgg(t *testing.T) {
	rows := testRows(7, 4000, 400, 4)
	sums := map[int64]int64{}
	for _, r := range rows {
		if _, ok := sums[r[0].Int()]; !ok {
			sums[r[0].Int()] = 0
		}
		if !r[1].IsNull() {
			sums[r[0].Int()] += r[1].Int()
		}
	}
	perSum := map[int64]int64{}
	for _, s := range sums {
		perSum[s]++
	}
	var want [][]types.Value
	for s, n := range perSum {
		want = append(want, []types.Value{types.BigIntValue(s), types.BigIntValue(n)})
	}
	for _, par := range []int{1, 3} {
		t.Run(fmt.Sprint("parallelism ", par), func(t *testing.T) {
			sink := &collectSink{}
			g := &JobGraph{Name: "agg-agg", Vertices: []*Vertex{
				{Name: "Source", Parallelism: par, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2},
				{Name: "SumByKey", Parallelism: par,
					Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
					Operators: []OperatorSpec{{Name: "GroupAggregate(k)", OutWidth: 2, New: NewGroupAgg([]int{0},
						[]AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})}}},
				{Name: "CountBySum", Parallelism: par,
					Inputs: []Input{{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{1}}}},
					Operators: []OperatorSpec{
						// Keys whose sum is NULL count under NULL; the batch
						// answer has 0 there, so map NULL sums through a filter-free path:
						{Name: "GroupAggregate(s)", OutWidth: 2, New: NewGroupAgg([]int{1},
							[]AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}})}},
					Sink: sink},
			}}
			runJob(t, g, Options{BatchSize: 32})
			got := applyChangelog(t, sink.rows)
			// A key with only NULL values has SUM NULL, the batch answer 0:
			// fold the NULL bucket into 0 before comparing.
			got = foldNullBucket(t, got)
			if w := sortedRows(want); !slices.Equal(got, w) {
				t.Fatalf("got %v\nwant %v", got, w)
			}
		})
	}
}

// foldNullBucket merges a "[<NULL>, n]" row into "[0, m]".
func foldNullBucket(t *testing.T, rows []string) []string {
	var nulls int
	out := rows[:0:0]
	for _, r := range rows {
		if strings.HasPrefix(r, "[<NULL>, ") {
			fmt.Sscanf(strings.TrimPrefix(r, "[<NULL>, "), "%d]", &nulls)
			continue
		}
		out = append(out, r)
	}
	if nulls == 0 {
		return out
	}
	for i, r := range out {
		if strings.HasPrefix(r, "[0, ") {
			var n int
			fmt.Sscanf(strings.TrimPrefix(r, "[0, "), "%d]", &n)
			out[i] = fmt.Sprintf("[0, %d]", n+nulls)
			return out
		}
	}
	out = append(out, fmt.Sprintf("[0, %d]", nulls))
	slices.Sort(out)
	return out
}

// failingCalcJob is a source of rows whose row 2500 has -1 in column 1,
// a Calc that evaluates bad over column 1 (named name), a GroupAggregate
// and sink.
func failingCalcJob(name string, bad expr.Expr, sink *collectSink) *JobGraph {
	rows := testRows(3, 5000, 10, 1000)
	rows[2500][1] = types.BigIntValue(-1)
	return &JobGraph{Name: "fail", Vertices: []*Vertex{
		{Name: "Source", Parallelism: 2, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2},
		{Name: "Calc -> GroupAggregate", Parallelism: 2,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}},
			Operators: []OperatorSpec{
				{Name: name, OutWidth: 2, New: NewCalc(nil, []expr.Expr{colRef{0, types.BigInt}, bad})},
				{Name: "GroupAggregate", OutWidth: 2, New: NewGroupAgg([]int{0}, []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})},
			}},
		{Name: "Sink", Parallelism: 2, Inputs: []Input{{From: 1, Partition: Partitioning{Kind: Forward}}}, Sink: sink},
	}}
}

func TestOperatorErrorFailsJob(t *testing.T) {
	base := runtime.NumGoroutine()
	sink := &collectSink{}
	g := failingCalcJob("Calc(fail)", failAt{1, -1}, sink)
	j, err := Start(context.Background(), g, Options{BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Wait()
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want boom", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "Calc -> GroupAggregate (") || !strings.Contains(msg, "/2): operator Calc(fail): ") {
		t.Errorf("error does not name the vertex, subtask and operator: %v", err)
	}
	if sink.closed != 2 {
		t.Errorf("sink writers closed %d, want 2", sink.closed)
	}
	checkNoLeak(t, base)
}

func TestStopUnboundedSource(t *testing.T) {
	for _, viaCtx := range []bool{false, true} {
		t.Run(fmt.Sprint("via context ", viaCtx), func(t *testing.T) {
			base := runtime.NumGoroutine()
			sink := &collectSink{firstWrite: make(chan struct{})}
			g := &JobGraph{Name: "stop", Vertices: []*Vertex{
				{Name: "Source", Parallelism: 2, Source: counterSource{}, SourceWidth: 2},
				{Name: "Sink", Parallelism: 3, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{1}}}}, Sink: sink},
			}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			j, err := Start(ctx, g, Options{BatchSize: 128})
			if err != nil {
				t.Fatal(err)
			}
			<-sink.firstWrite
			if viaCtx {
				cancel()
			} else {
				j.Stop()
				j.Stop() // idempotent
			}
			if err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			m := j.Metrics()
			if m.RowsRead == 0 || m.RowsRead != m.RowsWritten || int64(len(sink.rows)) != m.RowsRead {
				t.Errorf("read %d, written %d, collected %d: want all equal", m.RowsRead, m.RowsWritten, len(sink.rows))
			}
			if m.Vertices[0].RowsOut != m.RowsRead || m.Vertices[1].RowsIn != m.RowsRead {
				t.Errorf("vertex metrics %+v", m.Vertices)
			}
			if m.Skipped == 0 || m.Skipped*128 != m.RowsRead {
				t.Errorf("skipped %d for %d rows", m.Skipped, m.RowsRead)
			}
			if sink.flushed != 3 || sink.closed != 3 {
				t.Errorf("flushed %d, closed %d, want 3 each", sink.flushed, sink.closed)
			}
			checkNoLeak(t, base)
		})
	}
}

// TestBackpressure blocks the sink and checks that the sources stop once
// the channels' credits are used up: batches in flight stay bounded.
func TestBackpressure(t *testing.T) {
	const batch, buffer, srcPar, sinkPar = 10, 2, 2, 2
	waiting := make(chan struct{}, 100)
	sink := &collectSink{gate: make(chan struct{})}
	rows := testRows(5, 100_000, 100, 100)
	g := &JobGraph{Name: "bp", Vertices: []*Vertex{
		{Name: "Source", Parallelism: srcPar, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2},
		{Name: "Sink", Parallelism: sinkPar, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}}, Sink: sink},
	}}
	opts := Options{BatchSize: batch, ChannelBuffer: buffer}
	opts.creditWaitHook = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	j, err := Start(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until both sources block on a credit.
	<-waiting
	<-waiting
	const channels = srcPar * sinkPar
	if n := j.maxInFlight.Load(); n > channels*buffer {
		t.Errorf("%d batches in flight, want at most %d", n, channels*buffer)
	}
	// Each sink task holds one batch in Write; each source holds at most a
	// pending batch per channel and one read batch.
	bound := int64((channels*buffer + srcPar*(sinkPar+1)) * batch)
	if read := j.Metrics().RowsRead; read > bound {
		t.Errorf("sources read %d rows while the sink was blocked, want at most %d", read, bound)
	}
	close(sink.gate)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := j.maxInFlight.Load(); n > channels*buffer {
		t.Errorf("%d batches in flight, want at most %d", n, channels*buffer)
	}
	if len(sink.rows) != len(rows) {
		t.Errorf("sink got %d rows, want %d", len(sink.rows), len(rows))
	}
}

func TestStartRejectsInvalidGraphs(t *testing.T) {
	src := &sliceSource{width: 2}
	agg := OperatorSpec{Name: "Agg", OutWidth: 1, New: NewGroupAgg(nil, []AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}})}
	tests := []struct {
		name string
		g    *JobGraph
		want string
	}{
		{"empty", &JobGraph{}, "no vertices"},
		{"zero parallelism", &JobGraph{Vertices: []*Vertex{{Name: "S", Source: src, SourceWidth: 2}}}, "parallelism 0"},
		{"no source or inputs", &JobGraph{Vertices: []*Vertex{{Name: "X", Parallelism: 1}}}, "neither a source nor inputs"},
		{"forward input", &JobGraph{Vertices: []*Vertex{
			{Name: "S", Parallelism: 1, Inputs: []Input{{From: 1}}},
			{Name: "T", Parallelism: 1, Source: src, SourceWidth: 2},
		}}, "not an earlier one"},
		{"forward parallelism", &JobGraph{Vertices: []*Vertex{
			{Name: "S", Parallelism: 2, Source: src, SourceWidth: 2},
			{Name: "T", Parallelism: 3, Inputs: []Input{{From: 0}}},
		}}, "FORWARD between parallelism 2 and 3"},
		{"operators without input", &JobGraph{Vertices: []*Vertex{
			{Name: "S", Parallelism: 1, Source: src, SourceWidth: 2},
			{Name: "T", Parallelism: 1, Operators: []OperatorSpec{agg}},
			{Name: "U", Parallelism: 1, Inputs: []Input{{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{1}}}}},
		}}, "neither a source nor inputs"},
		{"hash key beyond width", &JobGraph{Vertices: []*Vertex{
			{Name: "S", Parallelism: 1, Source: src, SourceWidth: 2, Operators: []OperatorSpec{agg}},
			{Name: "U", Parallelism: 1, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{1}}}}},
		}}, "hash key column 1 out of range (width 1)"},
		{"union widths", &JobGraph{Vertices: []*Vertex{
			{Name: "S", Parallelism: 1, Source: src, SourceWidth: 2},
			{Name: "T", Parallelism: 1, Source: src, SourceWidth: 3},
			{Name: "U", Parallelism: 1, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}, {From: 1, Partition: Partitioning{Kind: Rebalance}}}},
		}}, "width 3"},
		{"sink feeding", &JobGraph{Vertices: []*Vertex{
			{Name: "S", Parallelism: 1, Source: src, SourceWidth: 2, Sink: &collectSink{}},
			{Name: "U", Parallelism: 1, Inputs: []Input{{From: 0}}},
		}}, "ends in a sink but feeds"},
		{"parallelism above max", &JobGraph{MaxParallelism: 2, Vertices: []*Vertex{
			{Name: "S", Parallelism: 3, Source: src, SourceWidth: 2},
		}}, "exceeds max parallelism"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Start(context.Background(), tc.g, Options{})
			if !errors.Is(err, ErrInvalidGraph) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrInvalidGraph containing %q", err, tc.want)
			}
		})
	}
}

func TestPipelineBroadcastAndForward(t *testing.T) {
	rows := testRows(9, 1000, 10, 10)
	sink := &collectSink{}
	g := &JobGraph{Name: "bc", Vertices: []*Vertex{
		{Name: "Source", Parallelism: 2, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2},
		{Name: "Pass", Parallelism: 2, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Forward}}}},
		{Name: "Sink", Parallelism: 3, Inputs: []Input{{From: 1, Partition: Partitioning{Kind: Broadcast}}}, Sink: sink},
	}}
	runJob(t, g, Options{BatchSize: 50})
	var want [][]types.Value
	for range 3 {
		want = append(want, rows...)
	}
	if got, w := applyChangelog(t, sink.rows), sortedRows(want); !slices.Equal(got, w) {
		t.Fatalf("got %d rows, want %d", len(got), len(w))
	}
}

func TestConnectorErrorsFailJob(t *testing.T) {
	rows := testRows(4, 1000, 10, 10)
	tests := []struct {
		name   string
		source *Vertex
		sink   *collectSink
		want   string
	}{
		{"source open", &Vertex{Name: "Src", Parallelism: 2, Source: failingSource{}, SourceWidth: 2, SourceName: "t"},
			&collectSink{}, "Src (1/2): open source t: boom"},
		{"sink write", &Vertex{Name: "Src", Parallelism: 2, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2},
			&collectSink{failWrite: true}, "Out (1/1): sink out: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			g := &JobGraph{Name: "err", Vertices: []*Vertex{tc.source,
				{Name: "Out", Parallelism: 1, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}}, Sink: tc.sink, SinkName: "out"}}}
			j, err := Start(context.Background(), g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = j.Wait()
			if !errors.Is(err, errBoom) || (!strings.HasPrefix(err.Error(), tc.want) && !strings.HasPrefix(err.Error(), strings.Replace(tc.want, "(1/2)", "(2/2)", 1))) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if tc.sink.closed != 1 {
				t.Errorf("sink closed %d times, want 1", tc.sink.closed)
			}
			checkNoLeak(t, base)
		})
	}
}

// TestPartialBatchesAreFlushed checks that rows do not wait for a full
// batch: an idle source flushes at once, a busy one after FlushInterval.
func TestPartialBatchesAreFlushed(t *testing.T) {
	for _, idle := range []bool{true, false} {
		t.Run(fmt.Sprint("idle ", idle), func(t *testing.T) {
			src := &trickleSource{idle: idle, done: make(chan struct{})}
			sink := &collectSink{firstWrite: make(chan struct{})}
			g := &JobGraph{Name: "flush", Vertices: []*Vertex{
				{Name: "Source", Parallelism: 1, Source: src, SourceWidth: 2},
				{Name: "Sink", Parallelism: 1, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}}, Sink: sink},
			}}
			const batch = 1000
			j, err := Start(context.Background(), g, Options{BatchSize: batch})
			if err != nil {
				t.Fatal(err)
			}
			<-sink.firstWrite
			if sink.firstLen >= batch {
				t.Errorf("first batch has %d rows: not a partial batch", sink.firstLen)
			}
			close(src.done)
			if err := j.Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWrongOperatorWidthFailsJob(t *testing.T) {
	g := &JobGraph{Name: "width", Vertices: []*Vertex{
		{Name: "Source -> Calc", Parallelism: 1, Source: &sliceSource{width: 2, rows: testRows(1, 10, 2, 2)}, SourceWidth: 2,
			Operators: []OperatorSpec{{Name: "Calc", OutWidth: 3, New: NewCalc(nil, nil)}}},
		{Name: "Sink", Parallelism: 1, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Forward}}}, Sink: &collectSink{}},
	}}
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err == nil || !strings.Contains(err.Error(), "operator Calc: rows of width 2 emitted where the plan declares width 3") {
		t.Fatalf("got %v", err)
	}
}

// panicAt panics when column i equals v.
type panicAt struct {
	i int
	v int64
}

func (p panicAt) Type() types.Type { return types.BigInt }
func (p panicAt) Eval(row []types.Value) (types.Value, error) {
	if row[p.i].Int() == p.v {
		panic(fmt.Sprintf("operator bug at %d", p.v))
	}
	return row[p.i], nil
}
func (p panicAt) String() string { return "panic($" + fmt.Sprint(p.i) + ")" }

// TestOperatorPanicFailsJob: a panic inside an operator fails its job
// with the panic's value and stack, like an error, and leaves the process
// (and its goroutines) as they were.
func TestOperatorPanicFailsJob(t *testing.T) {
	base := runtime.NumGoroutine()
	sink := &collectSink{}
	g := failingCalcJob("Calc(panic)", panicAt{1, -1}, sink)
	j, err := Start(context.Background(), g, Options{BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Wait()
	if !errors.Is(err, ErrPanic) {
		t.Fatalf("got %v, want a panic error", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "Calc -> GroupAggregate (") || !strings.Contains(msg, "panic: operator bug at -1") ||
		!strings.Contains(msg, "panicAt.Eval") {
		t.Errorf("error does not name the vertex, the panic and where it happened: %v", err)
	}
	if sink.closed != 2 {
		t.Errorf("sink writers closed %d, want 2", sink.closed)
	}
	checkNoLeak(t, base)
}
