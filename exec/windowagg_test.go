package exec

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// countEmitter counts the rows it is given.
type countEmitter struct{ rows int }

func (c *countEmitter) Emit(b *types.Batch) error { c.rows += b.Len(); return nil }

// TestWindowStateReturnsToZero feeds a long stream of (k, v, ts) through
// each window kind with a watermark that follows the data, and checks that
// the operator's state (entries and bytes) stays bounded by the open
// windows, not the input seen, and is empty once every window fired.
func TestWindowStateReturnsToZero(t *testing.T) {
	onOneGoroutine(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
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
	specs := []WindowSpec{
		{Kind: WindowTumble, Size: 100, TimeCol: 2},
		{Kind: WindowHop, Size: 300, Slide: 100, TimeCol: 2},
		{Kind: WindowCumulate, Size: 400, Slide: 100, TimeCol: 2},
		{Kind: WindowSession, Gap: 20, TimeCol: 2},
	}
	const keys, perStep, steps, delay = 200, 500, 400, 50
	for _, spec := range specs {
		t.Run(spec.Kind.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(spec.Kind)))
			op := NewWindowAgg([]int{0}, spec, calls)().(*windowAggOp)
			if err := op.Open(&OpContext{MaxParallelism: 128, Name: "w"}); err != nil {
				t.Fatal(err)
			}
			k, err := state.NewMemory(state.Options{OperatorID: "w", MaxParallelism: 128, Parallelism: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := op.OpenKeyed(k); err != nil {
				t.Fatal(err)
			}
			out := &countEmitter{}
			fire := func(wm int64) {
				if err := k.AdvanceWatermark(wm, func(tm state.Timer) error { return op.OnTimer(tm, out) }); err != nil {
					t.Fatal(err)
				}
			}
			b := types.NewBatch(3, perStep)
			maxEntries, maxBytes := 0, int64(0)
			var early int
			for step := range steps {
				b.Reset()
				now := int64(step * 10) // 10 ms of event time per step
				for range perStep {
					ts := now + int64(r.IntN(10))
					b.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.BigIntValue(int64(r.IntN(100))), types.TimestampValue(ts)})
				}
				if err := op.Process(0, b, out); err != nil {
					t.Fatal(err)
				}
				fire(now - delay)
				entries, bytes, _ := k.MemoryStats()
				maxEntries, maxBytes = max(maxEntries, entries), max(maxBytes, bytes)
				if step == steps/10 {
					early = maxEntries
				}
			}
			// The state at any time holds the windows open at that time:
			// after 10% of the input it has reached its size.
			if maxEntries > early*3/2 {
				t.Errorf("state grew with the input: %d entries after 10%% of it, %d at most later", early, maxEntries)
			}
			if out.rows == 0 {
				t.Fatal("no window fired")
			}
			fire(math.MaxInt64)
			entries, bytes, ok := k.MemoryStats()
			if !ok || entries != 0 || bytes != 0 {
				t.Fatalf("after every window fired: %d entries, %d bytes (at most %d entries, %d bytes while running)", entries, bytes, maxEntries, maxBytes)
			}
			t.Logf("%s: at most %d entries (%d bytes) over %d rows; %d windows emitted", spec.Kind, maxEntries, maxBytes, perStep*steps, out.rows)
		})
	}
}
