package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestMinMaxInsertOnlyKeepsExtreme checks that an insert-only MIN/MAX (a
// window aggregate's) keeps one value per group, not a sorted set of every
// distinct value (a shifting insert per row, quadratic: Nexmark q7 ran at
// 0 rows/s), and that its results, merged and reloaded, are the extremes
// computed here.
func TestMinMaxInsertOnlyKeepsExtreme(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for _, isMax := range []bool{false, true} {
		acc, err := newAccumulator(AggCall{Func: map[bool]AggFunc{false: AggMin, true: AggMax}[isMax], Arg: 0, ArgType: types.Type{Kind: types.KindBigInt}, Type: types.Type{Kind: types.KindBigInt}, Name: "m"})
		if err != nil {
			t.Fatal(err)
		}
		setInsertOnly(acc)
		a := acc.(*minMaxAcc)
		for range 3 {
			a.grow()
		}
		var want [2]int64
		for g := range 2 {
			for i := range 5000 {
				v := r.Int64N(1_000_000) - 500_000
				if i == 0 || (isMax && v > want[g]) || (!isMax && v < want[g]) {
					want[g] = v
				}
				a.add(int32(g), types.BigIntValue(v))
			}
			a.add(int32(g), types.NullValue())
			if n := len(a.vals[g]); n != 1 {
				t.Fatalf("max=%v: group %d keeps %d values after 5000 inserts, want 1", isMax, g, n)
			}
			if got := a.result(int32(g)).Int(); got != want[g] {
				t.Fatalf("max=%v seed %d: group %d result %d, want %d", isMax, seed, g, got, want[g])
			}
		}
		a.merge(2, 0)
		a.merge(2, 1)
		both := want[0]
		if (isMax && want[1] > both) || (!isMax && want[1] < both) {
			both = want[1]
		}
		if got := a.result(2).Int(); got != both || len(a.vals[2]) != 1 {
			t.Fatalf("max=%v seed %d: merged result %d (%d values), want %d (1 value)", isMax, seed, got, len(a.vals[2]), both)
		}
		buf := a.save(2, nil)
		a.reset(2)
		if _, err := a.load(2, buf); err != nil {
			t.Fatal(err)
		}
		if got := a.result(2).Int(); got != both {
			t.Fatalf("max=%v: reloaded result %d, want %d", isMax, got, both)
		}
	}
}
