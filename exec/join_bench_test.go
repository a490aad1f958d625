package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// BenchmarkJoinOperator measures the regular join's operator alone on
// W9's shape: a dimension of 100,000 keys (one row per key,
// JoinKeyContainsUniqueKey) joined with fact rows (k, v) of random keys
// (NoUniqueKey, each kept with a count), in batches of 1024, state in
// memory. It reports ns per fact row.
func BenchmarkJoinOperator(b *testing.B) { benchJoinOperator(b, false) }

// BenchmarkJoinOperatorDimEnded is BenchmarkJoinOperator once the
// dimension input has ended (EndInput): the facts are matched and never
// kept, W9's steady state.
func BenchmarkJoinOperatorDimEnded(b *testing.B) { benchJoinOperator(b, true) }

// benchJoinOperator is BenchmarkJoinOperator, the dimension input ended
// before the facts come if ended.
func benchJoinOperator(b *testing.B, ended bool) {
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
	if ended {
		if err := op.EndInput(1, discard); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	cpu0 := cputime.Process()
	b.ResetTimer()
	defer func() {
		b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/row")
	}()
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

// BenchmarkJoinOperatorCheckpoints is BenchmarkJoinOperator with a store
// and a checkpoint's write-back (PrepareSnapshot, then the store's commit)
// every 500,000 fact rows, after 3,000,000 rows of warm-up (about 30 rows
// a key): the cost of the join's state at checkpoints included.
func BenchmarkJoinOperatorCheckpoints(b *testing.B) {
	const keys, every, warm = 100_000, 500_000, 3_000_000
	facts := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}}
	dim := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindVarchar}, Layout: JoinKeyContainsUniqueKey}
	op := NewJoin(JoinSpec{Type: InnerJoin, Left: facts, Right: dim})().(*joinOp)
	if err := op.Open(&OpContext{ID: "join", Parallelism: 1, MaxParallelism: 128, StateBudget: 4 << 30}); err != nil {
		b.Fatal(err)
	}
	st, err := statestore.Open(b.TempDir(), statestore.Options{MaxParallelism: 128})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := op.InitState(st, false); err != nil {
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
	since := 0
	run := func(n int) {
		for done := 0; done < n; {
			batch.Reset()
			for range min(1024, n-done) {
				batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.BigIntValue(int64(r.IntN(100)))})
			}
			if err := op.Process(0, batch, discard); err != nil {
				b.Fatal(err)
			}
			done += batch.Len()
			if since += batch.Len(); since >= every {
				since = 0
				if err := op.PrepareSnapshot(); err != nil {
					b.Fatal(err)
				}
				if err := st.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	run(warm)
	cpu0 := cputime.Process()
	b.ResetTimer()
	run(b.N)
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/row")
}

// BenchmarkJoinLongLists measures a join side whose keys gather many
// distinct rows (Nexmark q9's bids per auction): each iteration feeds a
// fresh operator 512,000 fact rows of distinct values over 1,000 keys
// (512 rows a key, in memory), no dimension row matching, and reports ns
// per fact row: the cost of keeping rows, the lists' growth included.
func BenchmarkJoinLongLists(b *testing.B) {
	const keys, rows = 1000, 512_000
	facts := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt, types.KindVarchar}}
	dim := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindVarchar}, Layout: JoinKeyContainsUniqueKey}
	discard := emitFunc(func(*types.Batch) error { return nil })
	batch := types.NewBatch(3, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	cpu0 := cputime.Process()
	for b.Loop() {
		op := NewJoin(JoinSpec{Type: InnerJoin, Left: facts, Right: dim})().(*joinOp)
		if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < rows; {
			batch.Reset()
			for ; batch.Len() < 1024; i++ {
				batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.BigIntValue(int64(i)), types.StringValue("channel-1")})
			}
			if err := op.Process(0, batch, discard); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N*rows), "cpu-ns/row")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkJoinSnapshot measures a checkpoint's write-back
// (PrepareSnapshot) of one join side holding 200,000 rows in memory, all
// changed, as keys of 1, 20 or 300 rows (a person, an auction's bids, a
// hot auction's): the encoding of the rows into the store's sstable.
func BenchmarkJoinSnapshot(b *testing.B) {
	for _, per := range []int{1, 20, 300} {
		b.Run(fmt.Sprint("rows", per), func(b *testing.B) {
			keys := 200_000 / per
			facts := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt, types.KindVarchar}}
			dim := JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindBigInt, types.KindVarchar}, Layout: JoinKeyContainsUniqueKey}
			discard := emitFunc(func(*types.Batch) error { return nil })
			for b.Loop() {
				b.StopTimer()
				op := NewJoin(JoinSpec{Type: InnerJoin, Left: facts, Right: dim})().(*joinOp)
				if err := op.Open(&OpContext{ID: "join", Parallelism: 1, MaxParallelism: 128, StateBudget: 4 << 30}); err != nil {
					b.Fatal(err)
				}
				st, err := statestore.Open(b.TempDir(), statestore.Options{MaxParallelism: 128})
				if err != nil {
					b.Fatal(err)
				}
				if err := op.InitState(st, false); err != nil {
					b.Fatal(err)
				}
				batch := types.NewBatch(3, 1024)
				for i := range keys * per {
					batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(i % keys)), types.BigIntValue(int64(i)), types.StringValue("https://www.nexmark.com/abc/def/item.htm?query=1&channel_id=12345")})
					if batch.Len() == 1024 || i == keys*per-1 {
						if err := op.Process(0, batch, discard); err != nil {
							b.Fatal(err)
						}
						batch.Reset()
					}
				}
				b.StartTimer()
				if err := op.PrepareSnapshot(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				st.Close()
				b.StartTimer()
			}
		})
	}
}
