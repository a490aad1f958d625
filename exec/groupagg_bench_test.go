package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/types"
)

// BenchmarkGroupAggManyKeys is the operator alone over 1M random keys with
// mini-batch emission (as W2 sees it, without checkpoints).
func BenchmarkGroupAggManyKeys(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	batches := make([]*types.Batch, 64)
	for i := range batches {
		bt := types.NewBatch(2, 1024)
		for range 1024 {
			bt.Append(types.Insert, []types.Value{types.BigIntValue(r.Int64N(1_000_000)), types.BigIntValue(1)})
		}
		batches[i] = bt
	}
	op := NewGroupAgg([]int{0}, []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})().(*groupAggOp)
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate"}); err != nil {
		b.Fatal(err)
	}
	op.miniBatch = true
	out := &discardEmitter2{}
	// Warm up: every key exists.
	for range 20 {
		for _, bt := range batches {
			_ = op.Process(0, bt, out)
		}
		_ = op.emitPending()
	}
	b.ResetTimer()
	for i := range b.N {
		if err := op.Process(0, batches[i%len(batches)], out); err != nil {
			b.Fatal(err)
		}
		if i%32 == 31 {
			if err := op.emitPending(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*1024)/b.Elapsed().Seconds(), "rows/s")
}
