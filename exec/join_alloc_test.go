package exec

import (
	"runtime"
	"testing"

	"github.com/weir-sql/weir/state"
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

// TestIntervalJoinCleanupAllocs checks that the interval join's cleanup
// of a key's rows (the watermark passing their intervals) allocates
// nothing per removed row once its buffers have grown, and that it emits
// each unmatched row of a preserved side NULL-padded, once.
func TestIntervalJoinCleanupAllocs(t *testing.T) {
	const rows = 256
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindBigInt}
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: LeftOuterJoin,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: 0, Upper: 10}
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	k, err := state.NewMemory(state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.OpenKeyed(k); err != nil {
		t.Fatal(err)
	}
	padded := 0
	out := emitFunc(func(b *types.Batch) error {
		for i := range b.Len() {
			if b.Kinds[i] != types.Insert || !b.Row(i)[3].IsNull() {
				t.Fatalf("cleanup emitted %s, want NULL-padded inserts", types.FormatRow(b.Kinds[i], b.Row(i)))
			}
			padded++
		}
		return nil
	})
	// Fill key 1 with rows distinct left rows at times 0..rows-1, then
	// remove them all with one cleanup; measured on the second fill.
	b := types.NewBatch(3, rows)
	var mallocs uint64
	for round := range 2 {
		b.Reset()
		for i := range rows {
			b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.BigIntValue(int64(round*1000 + i)), types.BigIntValue(int64(i))})
		}
		if err := op.Process(0, b, emitFunc(func(*types.Batch) error { return nil })); err != nil {
			t.Fatal(err)
		}
		if err := op.rk[0].Set(k, b.Row(0)); err != nil {
			t.Fatal(err)
		}
		padded = 0
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := op.OnTimer(state.Timer{Domain: state.EventTime, Timestamp: int64(round*1000 + rows + 100), Namespace: []byte{0}}, out)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if padded != rows {
			t.Fatalf("round %d: cleanup emitted %d padded rows, want %d", round, padded, rows)
		}
		mallocs = after.Mallocs - before.Mallocs
	}
	// Before the arenas the cleanup allocated each removed row's key.
	if mallocs >= rows {
		t.Fatalf("cleanup of %d rows allocated %d times, want fewer than %d", rows, mallocs, rows)
	}
	t.Logf("cleanup of %d rows: %d allocations", rows, mallocs)
}
