package exec

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestJoinOuterTrackingAllocs checks that a row matching kept rows of an
// outer join's preserved side (whose match counts the join updates during
// the scan) allocates nothing per match once the join's buffers have
// grown: right rows come and go for a key with 64 left rows, each arrival
// and departure updating every left row's match count, and the output must
// be right too (the NULL-padded left rows retracted on arrival and emitted
// again on departure).
func TestJoinOuterTrackingAllocs(t *testing.T) {
	const lefts = 64
	left := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}, Layout: HasUniqueKey, UniqueKey: []int{1}}
	right := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}, Layout: JoinKeyContainsUniqueKey}
	op := NewJoin(JoinSpec{Type: LeftOuterJoin, Left: left, Right: right})().(*joinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	var counts map[types.RowKind]int
	out := emitFunc(func(b *types.Batch) error {
		for i := range b.Len() {
			counts[b.Kinds[i]]++
		}
		return nil
	})
	lb := types.NewBatch(2, lefts)
	for i := range lefts {
		lb.Append(types.Insert, []types.Value{types.BigIntValue(1), types.BigIntValue(int64(i))})
	}
	counts = map[types.RowKind]int{}
	if err := op.Process(0, lb, out); err != nil {
		t.Fatal(err)
	}
	if counts[types.Insert] != lefts {
		t.Fatalf("left rows alone: %v, want %d NULL-padded inserts", counts, lefts)
	}
	rb := types.NewBatch(2, 2)
	rb.Append(types.Insert, []types.Value{types.BigIntValue(1), types.BigIntValue(7)})
	rb.Append(types.Delete, []types.Value{types.BigIntValue(1), types.BigIntValue(7)})
	round := func() {
		counts = map[types.RowKind]int{}
		if err := op.Process(1, rb, out); err != nil {
			t.Fatal(err)
		}
	}
	round() // grows the buffers
	// Arrival: lefts -D (padded) and lefts +I (joined); departure: lefts
	// -D (joined) and lefts +I (padded).
	if counts[types.Delete] != 2*lefts || counts[types.Insert] != 2*lefts || len(counts) != 2 {
		t.Fatalf("one arrival and departure: %v, want %d -D and %d +I", counts, 2*lefts, 2*lefts)
	}
	out = emitFunc(func(*types.Batch) error { return nil })
	allocs := testing.AllocsPerRun(50, func() {
		if err := op.Process(1, rb, out); err != nil {
			t.Fatal(err)
		}
	})
	// Before the arenas every tracked match allocated its key and row
	// (2*lefts per arrival and per departure).
	if allocs >= lefts {
		t.Fatalf("%v allocations per arrival and departure of a row matching %d rows, want fewer than %d", allocs, lefts, lefts)
	}
	t.Logf("%v allocations per arrival and departure of a row matching %d rows", allocs, lefts)
}
