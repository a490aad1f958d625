package exec

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// randomKeyBatches returns n batches of 1,024 rows (k BIGINT, v BIGINT)
// whose keys are uniformly random in [0, keys).
func randomKeyBatches(n, keys int) []*types.Batch {
	r := rand.New(rand.NewPCG(1, 2))
	batches := make([]*types.Batch, n)
	for i := range batches {
		bt := types.NewBatch(2, 1024)
		for range 1024 {
			bt.Append(types.Insert, []types.Value{types.BigIntValue(r.Int64N(int64(keys))), types.BigIntValue(1)})
		}
		batches[i] = bt
	}
	return batches
}

func newBenchSum(b *testing.B) *groupAggOp {
	op := NewGroupAgg([]int{0}, []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})().(*groupAggOp)
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate", ID: "bench", StateBudget: 1 << 30}); err != nil {
		b.Fatal(err)
	}
	op.miniBatch = true
	return op
}

// BenchmarkGroupAggManyKeys is the operator alone over 500k random keys
// (one W2 subtask's share) with mini-batch emission, without checkpoints.
// The input cycles through 1M rows, so group accesses miss the CPU caches
// as they do in W2.
func BenchmarkGroupAggManyKeys(b *testing.B) {
	batches := randomKeyBatches(1024, 500_000)
	op := newBenchSum(b)
	out := &discardEmitter2{}
	for _, bt := range batches { // warm up: every key exists
		_ = op.Process(0, bt, out)
	}
	_ = op.emitPending()
	b.ResetTimer()
	for i := range b.N {
		if err := op.Process(0, batches[i%len(batches)], out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1024)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGroupAggCheckpoint is one W2 subtask's checkpoint cycle: 500k
// keys in state; per cycle 1M rows of random keys (about 430k groups
// change), then PrepareSnapshot and the store's Snapshot, as a task does at
// a barrier. It reports the CPU of the whole process per cycle (Pebble's
// flushes and compactions included) and the time the task spends in the
// snapshot.
func BenchmarkGroupAggCheckpoint(b *testing.B) {
	batches := randomKeyBatches(1024, 500_000)
	op := newBenchSum(b)
	dir := b.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "work"), statestore.Options{MaxParallelism: 128})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := op.InitState(st, false); err != nil {
		b.Fatal(err)
	}
	out := &discardEmitter2{}
	cycle := func(n int) time.Duration {
		for _, bt := range batches {
			if err := op.Process(0, bt, out); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if err := op.PrepareSnapshot(); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Snapshot(filepath.Join(dir, fmt.Sprintf("ck%d", n))); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	cycle(-1) // every key exists
	cpu0 := cputime.Process()
	var snap time.Duration
	b.ResetTimer()
	for i := range b.N {
		snap += cycle(i)
	}
	b.StopTimer()
	b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/cycle")
	b.ReportMetric(float64(snap.Milliseconds())/float64(b.N), "snapshot-ms/cycle")
}
