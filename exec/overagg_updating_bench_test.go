package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// BenchmarkOverUpdatingTopOne is Nexmark q6's OVER: AVG(price) OVER
// (PARTITION BY seller ORDER BY time ROWS BETWEEN 10 PRECEDING AND CURRENT
// ROW) over the changelog of a Top-1 per auction: an auction's first bid
// comes as +I, each higher bid as -U of the auction's previous row and +U
// of the new one (a later time). 100,000 auctions of 10,000 sellers.
// Reports input rows/s.
func BenchmarkOverUpdatingTopOne(b *testing.B) {
	avg, err := aggfunc.Builtins().Lookup("AVG", false)
	if err != nil {
		b.Fatal(err)
	}
	bigint := types.Type{Kind: types.KindBigInt}
	spec := OverSpec{Partition: []int{1}, Frame: OverFrame{IsRows: true, Rows: 10},
		Calls: []aggfunc.Call{{Func: avg, Arg: 2, ArgType: bigint, Type: bigint, Name: "AVG(price)"}},
		Kinds: []types.Kind{types.KindBigInt, types.KindBigInt, types.KindBigInt, types.KindBigInt},
		Order: []SortKey{{Col: 3}}}
	const auctions, sellers = 100_000, 10_000
	rng := rand.New(rand.NewPCG(6, 6))
	type top struct{ price, time int64 }
	cur := make([]top, auctions)
	row := func(a int64, t top) []types.Value {
		return []types.Value{types.BigIntValue(a), types.BigIntValue(a % sellers), types.BigIntValue(t.price), types.BigIntValue(t.time)}
	}
	var batches []*types.Batch
	bt := types.NewBatch(4, 1024)
	for now := int64(1); len(batches) < 1024; now++ {
		a := rng.Int64N(auctions)
		next := top{price: cur[a].price + 1 + rng.Int64N(100), time: now}
		if cur[a].time == 0 {
			bt.Append(types.Insert, row(a, next))
		} else {
			bt.Append(types.UpdateBefore, row(a, cur[a]))
			bt.Append(types.UpdateAfter, row(a, next))
		}
		cur[a] = next
		if bt.Len() >= 1023 {
			batches = append(batches, bt)
			bt = types.NewBatch(4, 1024)
		}
	}
	op, _ := openOverUpdMemory(b, spec)
	out := &discardEmitter2{}
	// Warm up: the first half of the changes.
	for _, bt := range batches[:len(batches)/2] {
		if err := op.Process(0, bt, out); err != nil {
			b.Fatal(err)
		}
	}
	rest := batches[len(batches)/2:]
	rows := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		bt := rest[i%len(rest)]
		rows += bt.Len()
		if err := op.Process(0, bt, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}
