package exec

import (
	"math/rand/v2"
	"testing"

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
