package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// BenchmarkJoinOperator measures the regular join's operator alone on
// W9's shape: a dimension of 100,000 keys (one row per key,
// JoinKeyContainsUniqueKey) joined with fact rows (k, v) of random keys
// (NoUniqueKey, each kept with a count), in batches of 1024, state in
// memory. It reports ns per fact row.
func BenchmarkJoinOperator(b *testing.B) {
	const keys = 100_000
	facts := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}}
	dim := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindVarchar}, Layout: JoinKeyContainsUniqueKey}
	op := NewJoin(JoinSpec{Type: InnerJoin, Left: facts, Right: dim})().(*joinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		b.Fatal(err)
	}
	discard := emitFunc(func(*types.Batch) error { return nil })
	batch := types.NewBatch(2, 1024)
	for i := range keys {
		batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(i)), types.StringValue("name0000")})
		if batch.Len() == 1024 || i == keys-1 {
			if err := op.Process(1, batch, discard); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for done := 0; done < b.N; {
		batch.Reset()
		for range min(1024, b.N-done) {
			batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.BigIntValue(int64(r.IntN(100)))})
		}
		if err := op.Process(0, batch, discard); err != nil {
			b.Fatal(err)
		}
		done += batch.Len()
	}
}

// BenchmarkIntervalJoinOperator measures the interval join's operator
// alone on W10's shape: rows (k, ts, v) on both inputs, 100,000 keys, times
// advancing 1 ms every 10 rows, joined within 10 s, the watermark 1 s
// behind after every batch of 1024 (firing the cleanup timers), state in
// memory. It reports ns per input row.
func BenchmarkIntervalJoinOperator(b *testing.B) {
	const keys = 100_000
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: InnerJoin,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: -10_000, Upper: 10_000}
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		b.Fatal(err)
	}
	k, err := state.NewMemory(state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := op.OpenKeyed(k); err != nil {
		b.Fatal(err)
	}
	discard := emitFunc(func(*types.Batch) error { return nil })
	batch := types.NewBatch(3, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	var n int64
	b.ResetTimer()
	for done := 0; done < b.N; {
		batch.Reset()
		for range min(1024, b.N-done) {
			batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.TimestampValue(n / 10), types.BigIntValue(n)})
			n++
		}
		if err := op.Process(int(n/1024)%2, batch, discard); err != nil {
			b.Fatal(err)
		}
		if err := k.AdvanceWatermark(n/10-1000, func(tm state.Timer) error { return op.OnTimer(tm, discard) }); err != nil {
			b.Fatal(err)
		}
		done += batch.Len()
	}
}
