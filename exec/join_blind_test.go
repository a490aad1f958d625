package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// blindWrites returns the writes the cluster's join sides took blind (a
// key not in memory written without a lookup, state.DeltaSource).
func (c *joinCluster) blindWrites() int64 {
	var n int64
	for _, op := range c.ops {
		var js *joinState
		switch o := op.(type) {
		case *joinOp:
			js = &o.joinState
		case *semiJoinOp:
			js = &o.joinState
		}
		n += js.sides[0].blind + js.sides[1].blind
	}
	return n
}

// TestJoinBlindWritesRestoreRescaleSpill checks regular, semi and anti
// joins whose sides spill (a 4 KiB budget), so that rows arriving for keys
// not in memory are kept blind (deltas) and merged when the other side's
// rows of the key come: random changelogs, mostly on one side (as a fact
// stream against a dimension), with and without hot keys, go through two checkpoints
// (the store snapshotted at each); the run goes on past the second,
// then the join is restored from it at another parallelism and the rest
// replayed. The applied output must be the batch join of the applied
// inputs, computed in Go.
//
// Subtest i runs with seed+i (the seed is the clock's, or WEIR_TEST_SEED
// to repeat a run) and with the seeds pinned for it, regressions found
// before.
func TestJoinBlindWritesRestoreRescaleSpill(t *testing.T) {
	seed := testseed.Seed(t)
	// pinned holds per subtest the seeds (as its messages give them) it
	// runs besides its random one.
	pinned := map[string][]uint64{
		// No write blind before the restore: the 7,000 keys drawn then
		// left each subtask at parallelism 3 with at most
		// state.MinRecords keys of a side, which does not spill.
		"right/many=0/layouts0/p3-to-p2/residual=false": {1796108372956998278},
	}
	manyLayouts, fewLayouts := skewedJoinSides()
	residual := joinTestResidual(t)
	pairs := [][2]int{{1, 3}, {2, 1}, {3, 2}}
	for ki, kind := range joinTestKinds {
		for li := range 2 {
			many := (ki + li) % 2
			pp := pairs[(ki+li)%3]
			withResidual := (ki+li)%3 == 1
			name := fmt.Sprintf("%s/many=%d/layouts%d/p%d-to-p%d/residual=%v", kind, many, li, pp[0], pp[1], withResidual)
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each case has its own stores and seed
				for _, s := range append([]uint64{seed + uint64(ki*10+li)}, pinned[name]...) {
					t.Run(fmt.Sprint("seed=", s), func(t *testing.T) {
						r := rand.New(rand.NewPCG(s, 23))
						sides := [2]JoinSide{manyLayouts[li], fewLayouts[(ki+li)%2]}
						if many == 1 {
							sides[0], sides[1] = sides[1], sides[0]
						}
						steps, live := genBlindSteps(r, 8000, many, 3*li, sides[0], sides[1])
						newOp, want := newTestJoin(ki, kind, sides[0], sides[1], residual, withResidual, live)
						got, blindA, blindB := runJoinTwoCheckpoints(t, newOp, steps, pp[0], pp[1], 4<<10)
						if !equalMultiset(got, want) {
							t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", s, len(got), len(want),
								head(keysOf(got)), head(keysOf(want)))
						}
						// Hot keys of thousands of rows keep a side from
						// spilling (joinState.spillIfOver) at times.
						if blindB == 0 || (li == 0 && blindA == 0) {
							t.Fatalf("seed %d: %d writes blind before the restore, %d after: want some", s, blindA, blindB)
						}
						t.Logf("%d writes blind before the restore, %d after", blindA, blindB)
					})
				}
			})
		}
	}
}

// blindKeys is how many keys genBlindSteps draws from. A side spills only
// with more than state.MinRecords keys in memory, so the side with many
// changes must hold more in a subtask at parallelism 3 before the second
// checkpoint for the writes blind before the restore that the test wants:
// with 7,000 keys a subtask held about 1,000 by then, and about one run in
// eight of those subtests took no write blind; with 10,000, 80 runs took
// 960 to 2,100 each.
const blindKeys = 10000

// genBlindSteps generates n random steps of changes, 19 in 20 on side
// many, whose keys are drawn among blindKeys (half among the first hot, if
// hot > 0).
func genBlindSteps(r *rand.Rand, n, many, hot int, left, right JoinSide) ([]joinStep, [2][][]types.Value) {
	return genSkewedSteps(r, n, many, 20, blindKeys, hot, left, right)
}

// runJoinTwoCheckpoints runs steps through a join of newOp at parallelism
// from with checkpoints (PrepareSnapshot and store snapshots) after a
// third and two thirds of them, goes on a little past the second (output a
// crash loses), restores it at parallelism to and replays the rest. It
// returns the applied output and the writes taken blind before and after
// the restore.
func runJoinTwoCheckpoints(t *testing.T, newOp func() Operator, steps []joinStep, from, to int, budget int64) (map[string]int, int64, int64) {
	out, a, b := runJoinCheckpoints(t, newOp, steps, []int{len(steps) / 3, 2 * len(steps) / 3}, 50, from, to, budget)
	return out, a.blindWrites(), b.blindWrites()
}
