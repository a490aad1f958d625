package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// This file tests join keys with many rows: a row is found in constant
// work whatever the number of rows of its key, a snapshot rewrites the
// changed rows' parts only, a spilled key of many rows is not loaded again
// with every batch, and random changelogs whose hot keys hold thousands of
// rows go through snapshot, restore at another parallelism and spills.

// genHotSteps generates n random steps of changes, a share of 99 in 100 on
// side many, with half the join keys drawn among 3 hot keys (thousands of
// rows each on side many) and the rest among 2,000 others.
func genHotSteps(r *rand.Rand, n, many int, left, right JoinSide) ([]joinStep, [2][][]types.Value) {
	return genSkewedSteps(r, n, many, 100, 2003, 3, left, right)
}

// genSkewedSteps generates n random steps of one to six changes of one
// side each, on side many but one step in oneIn, whose join keys are drawn
// among keys (half among the first hot, if hot > 0).
func genSkewedSteps(r *rand.Rand, n, many, oneIn, keys, hot int, left, right JoinSide) ([]joinStep, [2][][]types.Value) {
	gens := [2]*changelogGen{
		{r: r, keys: keys, hot: hot, unique: left.Layout != NoUniqueKey, keyUnique: left.Layout == JoinKeyContainsUniqueKey},
		{r: r, keys: keys, hot: hot, unique: right.Layout != NoUniqueKey, keyUnique: right.Layout == JoinKeyContainsUniqueKey},
	}
	steps := make([]joinStep, n)
	for i := range steps {
		side := 1 - many
		if r.IntN(oneIn) > 0 {
			side = many
		}
		b := types.NewBatch(3, 8)
		for range 1 + r.IntN(6) {
			gens[side].next(b)
		}
		steps[i] = joinStep{side: side, b: b}
	}
	return steps, [2][][]types.Value{gens[0].live, gens[1].live}
}

// skewedJoinSides returns the layouts of the skewed join tests' sides over
// rows (INT key, BIGINT, BIGINT): those of the side with many rows (none,
// a unique key) and those of the other (the join key unique, none).
func skewedJoinSides() (many, few []JoinSide) {
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindBigInt}
	return []JoinSide{
			{Keys: []int{0}, Kinds: kinds},
			{Keys: []int{0}, Kinds: kinds, Layout: HasUniqueKey, UniqueKey: []int{1}},
		}, []JoinSide{
			{Keys: []int{0}, Kinds: kinds, Layout: JoinKeyContainsUniqueKey},
			{Keys: []int{0}, Kinds: kinds},
		}
}

// TestJoinHotKeysRestoreRescaleSpill checks regular, semi and anti joins
// over random changelogs (duplicates, retractions, updates of a unique
// key) whose 3 hot keys hold thousands of rows on one side, through a
// snapshot and a restore at another parallelism, in memory and spilled (a
// 4 KiB budget), against the batch join of the applied inputs. The seed
// is the clock's or WEIR_TEST_SEED (testseed.Seed).
func TestJoinHotKeysRestoreRescaleSpill(t *testing.T) {
	seed := testseed.Seed(t)
	manyLayouts, fewLayouts := skewedJoinSides()
	residual := joinTestResidual(t)
	pairs := [][2]int{{1, 3}, {2, 1}}
	for ki, kind := range joinTestKinds {
		for bi, budget := range []int64{4 << 10, 1 << 30} {
			many := (ki + bi) % 2
			mi := ki / 2 % 2
			pp := pairs[bi]
			withResidual := (ki+bi)%3 == 0
			name := fmt.Sprintf("%s/many=%d/layout%d/budget%d/p%d-to-p%d/residual=%v", kind, many, mi, budget, pp[0], pp[1], withResidual)
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each case has its own stores and seed
				s := seed + uint64(ki*100+bi)
				r := rand.New(rand.NewPCG(s, 17))
				sides := [2]JoinSide{manyLayouts[mi], fewLayouts[(ki+bi)%2]}
				if many == 1 {
					sides[0], sides[1] = sides[1], sides[0]
				}
				steps, live := genHotSteps(r, 12000, many, sides[0], sides[1])
				perKey := map[int64]int{}
				for _, row := range live[many] {
					if !row[0].IsNull() {
						perKey[row[0].Int()]++
					}
				}
				if perKey[0] < 1000 {
					t.Fatalf("seed %d: hot key 0 has %d rows, want thousands", s, perKey[0])
				}
				checkJoinRestore(t, s, ki, kind, sides[0], sides[1], residual, withResidual, steps, live, pp, budget)
			})
		}
	}
}

// kindCounter counts the rows it is given by kind.
type kindCounter map[types.RowKind]int

func (c kindCounter) Emit(b *types.Batch) error {
	for i := range b.Len() {
		c[b.Kinds[i]]++
	}
	return nil
}

// TestJoinHugeKeyLinearWork checks that 100,000 rows of one join key are
// inserted, counted again (duplicates), updated by unique key and
// retracted with work linear in the rows: the rows examined to find a row
// (joinRows.probes) stay below a few per change, where a scan of the key's
// rows would examine billions. And that a snapshot after a change of one
// row encodes that row's part (and part 0), not the key's rows.
func TestJoinHugeKeyLinearWork(t *testing.T) {
	const n = 100_000
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindBigInt}
	for _, side := range []JoinSide{
		{Keys: []int{0}, Kinds: kinds},
		{Keys: []int{0}, Kinds: kinds, Layout: HasUniqueKey, UniqueKey: []int{1}},
	} {
		t.Run(side.Layout.String(), func(t *testing.T) {
			right := JoinSide{Keys: []int{0}, Kinds: kinds, Layout: JoinKeyContainsUniqueKey}
			c := newJoinCluster(t, NewJoin(JoinSpec{Type: LeftOuterJoin, Left: side, Right: right}), 1, 1<<30, nil)
			left := c.ops[0].(*joinOp).sides[0]
			out := kindCounter{}
			row := func(i int64, v int64) []types.Value {
				return []types.Value{types.BigIntValue(1), types.BigIntValue(i), types.BigIntValue(v)}
			}
			send := func(kind types.RowKind, from, to int64, v int64) {
				b := types.NewBatch(3, 1024)
				for i := from; i < to; i++ {
					b.Append(kind, row(i, v))
					if b.Len() == 1024 || i == to-1 {
						if err := c.process(joinStep{side: 0, b: b}, out); err != nil {
							t.Fatal(err)
						}
						b.Reset()
					}
				}
			}
			check := func(what string, changes int64) {
				t.Helper()
				if left.probes > 4*changes {
					t.Fatalf("%s: %d rows examined for %d changes of a key of up to %d rows, want at most %d", what, left.probes, changes, n, 4*changes)
				}
				t.Logf("%s: %d rows examined for %d changes", what, left.probes, changes)
				left.probes = 0
			}
			send(types.Insert, 0, n, 0)
			check("insert", n)
			if side.Layout == NoUniqueKey {
				send(types.Insert, 0, n, 0) // each row's count rises to 2
				check("duplicates", n)
				send(types.Delete, 0, n, 0)
				check("one copy retracted", n)
			} else {
				send(types.UpdateBefore, 0, n, 0)
				send(types.UpdateAfter, 0, n, 1)
				check("update by unique key", 2*n)
			}
			if err := c.ops[0].(StatefulOperator).PrepareSnapshot(); err != nil {
				t.Fatal(err)
			}
			left.encoded = 0
			send(types.Delete, 77_777, 77_778, left.list(0).row(0, 3)[2].Int())
			if err := c.ops[0].(StatefulOperator).PrepareSnapshot(); err != nil {
				t.Fatal(err)
			}
			// Part 0, the part of the row retracted and the last part
			// (whose last row took its place).
			if max := int64(3) << joinChunkShift; left.encoded > max {
				t.Fatalf("a snapshot after one retraction encoded %d rows of a key of %d rows, want at most %d", left.encoded, n, max)
			}
			t.Logf("a snapshot after one retraction encoded %d rows", left.encoded)
			kept := left.list(0).n()
			if kept != n-1 {
				t.Fatalf("%d rows kept, want %d", kept, n-1)
			}
			v := int64(0)
			if side.Layout == HasUniqueKey {
				v = 1
			}
			send(types.Delete, 0, 77_777, v)
			send(types.Delete, 77_778, n, v)
			check("retract all", n-1)
			if left.rows != 0 || left.keys.Len() != 0 {
				t.Fatalf("%d rows of %d keys left after retracting every row", left.rows, left.keys.Len())
			}
			// Every row went out NULL-padded once and came back once (and
			// for the unique key once more, updated).
			if out[types.Insert] != out[types.Delete] {
				t.Fatalf("output %v: inserts and deletes differ", out)
			}
		})
	}
}

// TestJoinHugeKeySpillNoThrash checks that a spilled key of many rows is
// not loaded again with every batch: the left side holds a hot key of
// 10,000 rows and 33,000 keys of one row under a 4 KiB budget (so it
// spills); 30 batches of right rows each touch the hot key and 1,100 cold
// keys (more keys than state.MinRecords: the side is over budget after
// each batch). Spilling after each batch would decode the hot key's rows
// 30 times (300,000 rows); the rows decoded must stay within twice the
// cold rows loaded and twice the hot key. Under -race there are 10
// batches and 11,000 cold keys (thrashing would still decode the hot key
// 10 times, past the limit); CI also runs it at full size without -race.
func TestJoinHugeKeySpillNoThrash(t *testing.T) {
	const hot, perBatch = 10_000, 1_100
	batches := 30
	if raceEnabled {
		batches = 10
	}
	cold := batches * perBatch
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindBigInt}
	left := JoinSide{Keys: []int{0}, Kinds: kinds}
	right := JoinSide{Keys: []int{0}, Kinds: kinds, Layout: JoinKeyContainsUniqueKey}
	c := newJoinCluster(t, NewJoin(JoinSpec{Type: InnerJoin, Left: left, Right: right}), 1, 4<<10, nil)
	out := kindCounter{}
	b := types.NewBatch(3, 1024)
	flush := func(side int) {
		if err := c.process(joinStep{side: side, b: b}, out); err != nil {
			t.Fatal(err)
		}
		b.Reset()
	}
	for i := range hot + cold {
		k := int64(0)
		if i >= hot {
			k = int64(i - hot + 1)
		}
		b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(int64(i)), {}})
		if b.Len() == 1024 {
			flush(0)
		}
	}
	flush(0)
	if !c.spilled() {
		t.Fatal("the left side did not spill")
	}
	ls := c.ops[0].(*joinOp).sides[0]
	ls.decoded = 0
	for bi := range batches {
		b.Append(types.Insert, []types.Value{types.BigIntValue(0), types.BigIntValue(-1), {}})
		for j := range perBatch {
			k := int64(1 + bi*perBatch + j)
			b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(-1), {}})
		}
		flush(1)
	}
	if want := batches * (hot + perBatch); out[types.Insert] != want {
		t.Fatalf("%d joined rows, want %d", out[types.Insert], want)
	}
	limit := int64(2*batches*perBatch + 2*hot)
	if ls.decoded > limit {
		t.Fatalf("%d left rows decoded for %d batches touching a key of %d rows and %d keys of one row, want at most %d", ls.decoded, batches, hot, perBatch, limit)
	}
	t.Logf("%d left rows decoded (limit %d)", ls.decoded, limit)
}
