package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// This file checks that the rows a window aggregate emits when the
// watermark passes a window's end are never late for the window operators
// below it (the planner's window-attached aggregate and window join over a
// window aggregate): each operator emits what a watermark fires before it
// passes the watermark on, and a row of window end E arrives while the
// next operator's watermark is still below E - 1. The watermark advances
// one millisecond at a time, so it stops at E - 2 and at E - 1 exactly.

// teeEmitter passes batches and watermarks to each of its outputs.
type teeEmitter []WatermarkEmitter

func (t teeEmitter) Emit(b *types.Batch) error {
	for _, o := range t {
		if err := o.Emit(b); err != nil {
			return err
		}
	}
	return nil
}

func (t teeEmitter) EmitWatermark(wm int64) error {
	for _, o := range t {
		if err := o.EmitWatermark(wm); err != nil {
			return err
		}
	}
	return nil
}

func TestWindowRowsAreNotLateDownstream(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 13))
	call := func(name string, star bool, arg int) AggCall {
		f, err := aggfunc.Builtins().Lookup(name, star)
		if err != nil {
			t.Fatal(err)
		}
		typ := types.Type{Kind: types.KindBigInt, NotNull: name == "COUNT"}
		return AggCallOf(aggfunc.Call{Func: f, Arg: arg, ArgType: types.Type{Kind: types.KindBigInt}, Type: typ, Name: name})
	}
	// Upstream: COUNT(*) per k in HOP windows (20 ms every 10 ms), two
	// phases: rows (k, ts) → (k, window_start, window_end, window_time, n).
	hop := WindowSpec{Kind: WindowHop, Size: 20, Slide: 10, TimeCol: 1}
	counts := []AggCall{call("COUNT", true, -1)}
	// Window-attached: MAX(n) per window_start in a TUMBLE of the slide
	// over window_time → (window_start, step start, window_end, window_time, max).
	step := WindowSpec{Kind: WindowTumble, Size: 10, TimeCol: 3}
	maxes := []AggCall{call("MAX", false, 4)}
	var late [5]atomic.Int64
	ops := []Operator{
		NewLocalWindowAgg([]int{0}, hop, counts)(), NewGlobalWindowAgg(1, hop, counts)(),
		NewLocalWindowAgg([]int{1}, step, maxes)(), NewGlobalWindowAgg(1, step, maxes)(),
	}
	// A window join of the upstream's rows (left) on their window, outer:
	// with no right rows each left row comes out padded, once.
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindTimestamp, types.KindTimestamp, types.KindBigInt}
	join := NewWindowJoin(WindowJoinSpec{JoinSpec: JoinSpec{Type: LeftOuterJoin,
		Left:  JoinSide{Keys: []int{1, 2}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0, 2}, Kinds: kinds}}, LeftEnd: 2, RightEnd: 2})()
	ops = append(ops, join)
	for i, op := range ops {
		if err := op.Open(&OpContext{MaxParallelism: 128, Name: fmt.Sprint("op", i), Late: &late[i]}); err != nil {
			t.Fatal(err)
		}
	}
	k, err := state.NewMemory(state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := join.(KeyedOperator).OpenKeyed(k); err != nil {
		t.Fatal(err)
	}
	attached, joined := &rowCollector{}, &rowCollector{}
	toAttached := &opEmitter{op: ops[2], name: "local2", next: &opEmitter{op: ops[3], name: "global2", next: attached}}
	toJoin := &opEmitter{op: join, name: "join", keyed: k, next: joined}
	head := &opEmitter{op: ops[1], name: "global1", next: teeEmitter{toAttached, toJoin}}

	// Rows at every millisecond 0..999, the watermark 1 ms behind them.
	type win struct{ k, end int64 }
	n := map[win]int64{}
	b := types.NewBatch(2, 8)
	for ts := range int64(1000) {
		b.Reset()
		for range 1 + r.IntN(4) {
			key := int64(r.IntN(5))
			b.Append(types.Insert, []types.Value{types.BigIntValue(key), types.TimestampValue(ts)})
			for _, w := range refWindows(hop, ts) {
				n[win{key, w[1]}]++
			}
		}
		if err := ops[0].Process(0, b, head); err != nil {
			t.Fatal(err)
		}
		if err := processWatermark(ops[0], nil, ts-1, head); err != nil {
			t.Fatal(err)
		}
	}
	if err := processWatermark(ops[0], nil, math.MaxInt64, head); err != nil {
		t.Fatal(err)
	}
	for i := range late {
		if l := late[i].Load(); l != 0 {
			t.Fatalf("operator %d dropped %d late rows", i, l)
		}
	}
	ts := func(ms int64) string { return types.TimestampValue(ms).String() }
	var wantAttached, wantJoined []string
	mx := map[int64]int64{}
	for w, c := range n {
		mx[w.end] = max(mx[w.end], c)
		wantJoined = append(wantJoined, fmt.Sprint([]string{fmt.Sprint(w.k), ts(w.end - 20), ts(w.end), ts(w.end - 1), fmt.Sprint(c), "<NULL>", "<NULL>", "<NULL>", "<NULL>", "<NULL>"}))
	}
	for end, m := range mx {
		wantAttached = append(wantAttached, fmt.Sprint([]string{ts(end - 20), ts(end - 10), ts(end), ts(end - 1), fmt.Sprint(m)}))
	}
	text := func(rows []string) []string {
		out := slices.Clone(rows)
		slices.Sort(out)
		return out
	}
	if got, want := text(attached.rows), text(wantAttached); !slices.Equal(got, want) {
		t.Fatalf("seed %d: window-attached rows:\n got %d %v\nwant %d %v", seed, len(got), head3(got), len(want), head3(want))
	}
	if got, want := text(joined.rows), text(wantJoined); !slices.Equal(got, want) {
		t.Fatalf("seed %d: window join rows:\n got %d %v\nwant %d %v", seed, len(got), head3(got), len(want), head3(want))
	}
}

func head3(rows []string) []string { return rows[:min(3, len(rows))] }
