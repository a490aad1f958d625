package state

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/cputime"
)

// BenchmarkPairTablePut puts 4M pairs (a few groups, random values) into a
// table that grows from empty, as a DISTINCT family's index does.
func BenchmarkPairTablePut(b *testing.B) {
	const n = 4 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	as, bs := make([]int32, n), make([]int64, n)
	for i := range n {
		as[i], bs[i] = int32(rng.IntN(10000)), rng.Int64()
	}
	b.ResetTimer()
	cpu0 := cputime.Process()
	for range b.N {
		var t PairTable
		for i := range n {
			t.Put(as[i], bs[i], int32(i))
		}
	}
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N*n), "cpu-ns/put")
}
