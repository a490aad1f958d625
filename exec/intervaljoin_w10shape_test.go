package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// BenchmarkIntervalJoinW10Shape measures the interval join's operator over
// a state store on the rows one subtask of W10 sees at full speed: both
// inputs carry the same rows (W10's two datagen tables share their seed,
// so a's row i and b's row i have one key and one time), keys drawn from
// 50,000, times advancing 2 ms a row (the subtask sees half of each
// input), batches of 1024 taking turns with b one batch behind, and a
// watermark (1 s behind the slower input) only every 16 batches of each
// input, as W10's 20-ms watermark interval spans about 28 s of event
// time at its rate; the changed keys are written every 1,000,000 rows. It
// reports ns per input row.
func BenchmarkIntervalJoinW10Shape(b *testing.B) {
	const keys, snapEvery, wmEvery = 50_000, 1_000_000, 16
	spec := openKeyTimeIntervalJoin(b, -10_000).spec
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{ID: "ij", MaxParallelism: ijMaxPar, Parallelism: 1}); err != nil {
		b.Fatal(err)
	}
	st, err := statestore.Open(b.TempDir(), statestore.Options{MaxParallelism: ijMaxPar})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := op.InitState(st, false); err != nil {
		b.Fatal(err)
	}
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	r := rand.New(rand.NewPCG(1, 2))
	var ks []int64 // a's keys not yet sent on b
	var n [2]int64
	batch := types.NewBatch(2, 1024)
	sinceSnap, batches := 0, 0
	b.ResetTimer()
	cpu0 := cputime.Process()
	for done := 0; done < b.N; batches++ {
		for side := range 2 {
			if side == 1 && batches == 0 {
				continue // b starts a batch behind
			}
			batch.Reset()
			for range 1024 {
				var k int64
				if side == 0 {
					k = int64(r.IntN(keys))
					ks = append(ks, k)
				} else {
					k, ks = ks[0], ks[1:]
				}
				batch.Append(types.Insert, []types.Value{types.BigIntValue(k), types.TimestampValue(n[side])})
				n[side] += 2
			}
			if err := op.Process(side, batch, discard); err != nil {
				b.Fatal(err)
			}
			done += batch.Len()
			sinceSnap += batch.Len()
		}
		if len(ks) > 4096 {
			ks = append(ks[:0], ks...)
		}
		if batches%wmEvery == 0 {
			if err := op.ProcessWatermark(min(n[0], n[1])-1000, discard); err != nil {
				b.Fatal(err)
			}
		}
		if sinceSnap >= snapEvery {
			sinceSnap = 0
			if err := op.PrepareSnapshot(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/row")
}
