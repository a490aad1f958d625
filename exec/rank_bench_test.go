package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// benchOperator runs op (opened in memory, keyed state if it is a
// KeyedOperator) over batches of rows (k BIGINT, v BIGINT) with k among
// nkeys keys and v random, and reports rows/s.
func benchOperator(b *testing.B, op Operator, nkeys int) {
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([]*types.Batch, 64)
	for i := range batches {
		bt := types.NewBatch(2, 1024)
		for range 1024 {
			bt.Append(types.Insert, []types.Value{types.BigIntValue(rng.Int64N(int64(nkeys))), types.BigIntValue(rng.Int64N(1e9))})
		}
		batches[i] = bt
	}
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "op"}); err != nil {
		b.Fatal(err)
	}
	if ko, ok := op.(KeyedOperator); ok {
		k, err := state.NewMemory(state.Options{MaxParallelism: 128})
		if err != nil {
			b.Fatal(err)
		}
		if err := ko.OpenKeyed(k); err != nil {
			b.Fatal(err)
		}
	}
	out := &discardEmitter2{}
	// Warm up: every key seen many times (a Top-N's ranges full).
	for i := range 2 * nkeys / 1024 * 16 {
		if err := op.Process(0, batches[i%len(batches)], out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := op.Process(0, batches[i%len(batches)], out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1024)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRankAppendFast is W12's operator: Top-10 by v DESC per key
// over 10,000 keys, append-only input.
func BenchmarkRankAppendFast(b *testing.B) {
	spec := RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 1, Desc: true, NullsLast: true}}, Func: RowNumber,
		Start: 1, End: 10, OutputRank: true, Strategy: AppendFast, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}}
	benchOperator(b, NewRank(spec)(), 10_000)
}

// BenchmarkDedupKeepLast is W13's operator: keep-last deduplication on
// processing time over 1,000,000 keys.
func BenchmarkDedupKeepLast(b *testing.B) {
	spec := DedupSpec{Keys: []int{0}, TimeCol: 1, KeepLast: true, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}}
	benchOperator(b, NewDedup(spec)(), 1_000_000)
}
