package exec

import (
	"fmt"
	"math"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestIntervalJoinManyKeysRandom is TestIntervalJoinRandom with enough
// keys held at once that each subtask's slots run past several of the
// record slab's 4096-slot pages (state.Slab.One indexes array pages with
// no bounds check), and are freed and taken again by other keys at every
// watermark: rows (k, ts) (W10's layout, one value a row, kept inline) and
// (k, ts, v), out of order and late, an inner and a full outer join, in
// memory, over stores snapshotted and restored at another parallelism
// (the slots then numbered anew), and with a budget that spills now and
// then (keys loaded back into other slots; fewer keys in memory at once). Before every step it checks
// that each free slot has no queue time on either input (qat MaxInt64),
// which lets a sweep tell a freed slot's queue entry stale without a look
// at the index. The output must equal the answer computed in the test
// (runRandomIntervalJoinOpts). Randomized: prints its seed.
func TestIntervalJoinManyKeysRandom(t *testing.T) {
	seed := testseed.Seed(t)
	modes := []struct {
		name      string
		par, par2 int
		store     bool
		budget    int64
	}{
		{name: "memory-p2", par: 2, par2: 2},
		{name: "store-p2-to-p3", par: 2, par2: 3, store: true, budget: 1 << 30},
		{name: "spill-p3-to-p2", par: 3, par2: 2, store: true, budget: 1 << 20},
	}
	for wi, width := range []int{2, 3} {
		kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}[:width]
		for ti, typ := range []JoinType{InnerJoin, FullOuterJoin} {
			for mi, m := range modes {
				if !raceRuns(3, wi, ti, mi) {
					continue
				}
				t.Run(fmt.Sprintf("w%d/type%d/%s", width, typ, m.name), func(t *testing.T) {
					s := seed + uint64(wi*100+ti*10+mi)
					spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
						Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
						Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
						LeftTime: 1, RightTime: 1, Lower: -5, Upper: 20}
					dir := ""
					if m.store {
						dir = t.TempDir()
					}
					out := &ijCollect{rows: map[string]int{}}
					h := newIJHarness(t, spec, m.par, m.budget, dir, nil, out)
					maxCap, spilled := int32(0), false
					const steps = 300
					runRandomIntervalJoinOpts(t, s, h, func(step int) {
						for sub, op := range h.ops {
							maxCap = max(maxCap, op.keys.Cap())
							spilled = spilled || (m.budget > 0 && m.budget < 1<<30 && op.st.Backed())
							for sl := range op.keys.Cap() {
								if op.keys.Used(sl) {
									continue
								}
								if k := op.rec(sl); k.qat != [2]int64{math.MaxInt64, math.MaxInt64} {
									t.Fatalf("seed %d step %d: subtask %d's free slot %d has queue times %v", s, step, sub, sl, k.qat)
								}
							}
						}
						if m.store && step == steps/2 {
							h.snapshotRestore(m.par2)
						}
					}, ijRandOpts{keys: 60_000, maxBatch: 1800, steps: steps})
					if !spilled && maxCap <= 4096+512 { // a spill keeps fewer keys in memory
						t.Fatalf("seed %d: at most %d slots in a subtask: the slab's pages were not crossed", s, maxCap)
					}
					if m.budget > 0 && m.budget < 1<<30 && !spilled {
						t.Fatalf("seed %d: no subtask spilled", s)
					}
					t.Logf("seed %d: up to %d slots in a subtask, %d output rows", s, maxCap, ijTotal(out.rows))
				})
			}
		}
	}
}
