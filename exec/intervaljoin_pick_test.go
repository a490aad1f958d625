package exec

import (
	"fmt"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestIntervalJoinPickedRandom is TestIntervalJoinRandom with the join's
// output picked (pickOutput, as fuseCalcs makes it for a Calc after the
// join that only picks columns, W10's SELECT a.k, a.ts, b.ts): some
// columns, repeated, reordered, from either input and from the NULL
// padding of the outer types. Rows of (k, ts, v) and of (k, ts) only (a
// layout that stores the meta value alone, whose key and time the join
// makes again), with and without a residual condition, in memory and over
// stores snapshotted and restored at another parallelism (once spilling
// every batch). The output must equal those columns of the answer
// computed in the test. Randomized: prints its seed.
func TestIntervalJoinPickedRandom(t *testing.T) {
	seed := testseed.Seed(t)
	modes := []struct {
		name      string
		par, par2 int
		store     bool
		budget    int64
	}{
		{name: "memory-p1", par: 1, par2: 1},
		{name: "store-p2-to-p3", par: 2, par2: 3, store: true, budget: 64 << 20},
		{name: "spill-p3-to-p1", par: 3, par2: 1, store: true, budget: 1},
	}
	for wi, width := range []int{3, 2} {
		kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}[:width]
		picks := [][]int{{0, 1, width + 1}, {width + 1, 0, width, 1, width + 1}}
		if width == 3 {
			picks = append(picks, []int{5, 2})
		}
		rts, err := expr.NewCompare("<>", expr.NewColumn(1, types.Timestamp, "lts"), expr.NewColumn(width+1, types.Timestamp, "rts"))
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []JoinType{InnerJoin, LeftOuterJoin, RightOuterJoin, FullOuterJoin} {
			for pi, pick := range picks {
				for mi, m := range modes {
					for ri, residual := range []bool{false, true} {
						name := fmt.Sprintf("w%d/type%d/pick%v/%s/residual%v", width, typ, pick, m.name, residual)
						t.Run(name, func(t *testing.T) {
							t.Parallel() // each case has its own stores and seed
							s := seed + uint64(wi*10000+int(typ)*1000+pi*100+mi*10+ri)
							spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
								Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
								Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
								LeftTime: 1, RightTime: 1, Lower: -10, Upper: 5}
							opts := ijRandOpts{keys: 40, maxBatch: 40, steps: 400}
							if residual {
								spec.Residual = rts
								opts.residual = func(l, r []types.Value) bool { return l[1].Int() != r[1].Int() }
							}
							dir := ""
							if m.store {
								dir = t.TempDir()
							}
							out := &ijCollect{rows: map[string]int{}}
							h := newPickedIJHarness(t, spec, m.par, m.budget, dir, out, pick)
							runRandomIntervalJoinOpts(t, s, h, func(step int) {
								if m.store && step == 200 {
									h.snapshotRestore(m.par2)
								}
							}, opts)
						})
					}
				}
			}
		}
	}
	// A pick out of range is refused, and leaves the output whole.
	op := NewIntervalJoin(IntervalJoinSpec{JoinSpec: JoinSpec{
		Left:  JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindInt, types.KindTimestamp}},
		Right: JoinSide{Keys: []int{0}, Kinds: []types.Kind{types.KindInt, types.KindTimestamp}}},
		LeftTime: 1, RightTime: 1})().(*intervalJoinOp)
	if err := op.Open(&OpContext{ID: "ij", Parallelism: 1, MaxParallelism: ijMaxPar}); err != nil {
		t.Fatal(err)
	}
	if op.pickOutput([]int{0, 4}) || op.pick != nil || op.out.Width != 4 {
		t.Errorf("the join picked column 4 of 4 (pick %v, width %d)", op.pick, op.out.Width)
	}
}
