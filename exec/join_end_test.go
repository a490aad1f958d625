package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// This file tests the end of an input (EndInput) of the regular, semi and
// anti joins: the other side's rows are dropped, in memory and in the
// store, and its rows that come after are matched but never kept. Random
// changelogs of both inputs go through the join, then one input ends and
// only the other one goes on, with updates and deletions of rows kept
// before the end and of rows that came after it; the applied output must
// equal the batch join of the live rows computed in Go (batchJoin,
// batchSemi), for every join type, with the state in memory and spilled,
// and through a checkpoint and a restore at another parallelism (before
// or after the end, which comes again after the restore, as a finished
// source's does).

// genEndSteps returns n1 steps of random changes on both inputs, then n2
// on input 1-endPort only (endPort has ended), with the live rows of each
// side at the end.
func genEndSteps(r *rand.Rand, n1, n2, keys int, left, right JoinSide, endPort int) ([]joinStep, [2][][]types.Value) {
	return genEndStepsScaled(r, n1, n2, keys, 1, left, right, endPort)
}

// genEndStepsScaled is genEndSteps with the keys drawn multiplied by
// scale.
func genEndStepsScaled(r *rand.Rand, n1, n2, keys int, scale int64, left, right JoinSide, endPort int) ([]joinStep, [2][][]types.Value) {
	gens := [2]*changelogGen{
		{r: r, keys: keys, scale: scale, unique: left.Layout != NoUniqueKey, keyUnique: left.Layout == JoinKeyContainsUniqueKey},
		{r: r, keys: keys, scale: scale, unique: right.Layout != NoUniqueKey, keyUnique: right.Layout == JoinKeyContainsUniqueKey},
	}
	steps := make([]joinStep, n1+n2)
	for i := range steps {
		side := 1 - endPort
		if i < n1 {
			side = r.IntN(2)
		}
		b := types.NewBatch(3, 8)
		for range 1 + r.IntN(6) {
			gens[side].next(b)
		}
		steps[i] = joinStep{side: side, b: b}
	}
	return steps, [2][][]types.Value{gens[0].live, gens[1].live}
}

// endInput calls EndInput(port) on every subtask.
func (c *joinCluster) endInput(port int, out Emitter) {
	for i, op := range c.ops {
		if err := op.(InputEndOperator).EndInput(port, out); err != nil {
			c.t.Fatalf("subtask %d: end of input %d: %v", i, port, err)
		}
	}
}

// sideRows returns the rows side keeps in memory over the subtasks, its
// keys in memory, and its keys in the stores (every stored key of its
// space: records, parts, deltas, marks).
func (c *joinCluster) sideRows(side int) (rows int64, keys, stored int) {
	for i, op := range c.ops {
		var s *joinRows
		switch o := op.(type) {
		case *joinOp:
			s = o.sides[side]
		case *semiJoinOp:
			s = o.sides[side]
		}
		rows += s.rows
		keys += s.st.Len()
		sp, err := c.stores[i].Space("join" + joinSpaceSuffix(side))
		if err != nil {
			c.t.Fatal(err)
		}
		for kg := range joinTestMaxPar {
			err := sp.Scan(kg, nil, nil, false, func(_, _ []byte) (bool, error) {
				stored++
				return true, nil
			})
			if err != nil {
				c.t.Fatal(err)
			}
		}
	}
	return rows, keys, stored
}

// checkSideEmpty fails unless side keeps no row, in memory or stored.
func (c *joinCluster) checkSideEmpty(seed uint64, side int, when string) {
	c.t.Helper()
	if rows, keys, stored := c.sideRows(side); rows != 0 || keys != 0 || stored != 0 {
		c.t.Fatalf("seed %d: %s: side %d keeps %d rows of %d keys in memory and %d stored keys", seed, when, side, rows, keys, stored)
	}
}

// joinEndLayouts are side pairs of the end-of-input tests: W9's shape
// (the right side's unique key is the join key), and a left side with a
// unique key that is not the join key against duplicates.
func joinEndLayouts() []struct{ left, right JoinSide } {
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindBigInt}
	return []struct{ left, right JoinSide }{
		{JoinSide{Keys: []int{0}, Kinds: kinds}, JoinSide{Keys: []int{0}, Kinds: kinds, Layout: JoinKeyContainsUniqueKey}},
		{JoinSide{Keys: []int{0}, Kinds: kinds, Layout: HasUniqueKey, UniqueKey: []int{1}}, JoinSide{Keys: []int{0}, Kinds: kinds}},
	}
}

// TestJoinEndInput checks every join type, semi and anti joins included
// (joinTestKinds), either input ending, with the
// state in memory and spilled (4 KiB): after EndInput the other side
// keeps nothing, in memory or stored, all along the rest of its
// changelog, and the output equals the batch join.
func TestJoinEndInput(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	residual := joinTestResidual(t)
	for typ := InnerJoin; typ <= FullOuterJoin+2; typ++ { // then semi and anti
		for endPort := range 2 {
			for bi, budget := range []int64{4 << 10, 1 << 30} {
				li := (int(typ) + endPort + bi) % 2
				sd := joinEndLayouts()[li]
				withResidual := (int(typ)+bi)%2 == 1
				name := fmt.Sprintf("type%d/end%d/budget%d/sides%d/residual=%v", typ, endPort, budget, li, withResidual)
				t.Run(name, func(t *testing.T) {
					t.Parallel() // each case has its own stores and seed
					s := seed + uint64(int(typ)*100+endPort*10+bi)
					r := rand.New(rand.NewPCG(s, 9))
					const n1 = 5000
					steps, live := genEndSteps(r, n1, 3000, 4000, sd.left, sd.right, endPort)
					newOp, want := newTestJoin(int(typ), joinTestKinds[typ], sd.left, sd.right, residual, withResidual, live)
					out := &collectEmitter{t: t, rows: map[string]int{}}
					c := newJoinCluster(t, newOp, 1, budget, nil)
					for i, st := range steps {
						if i == n1 {
							if small := budget < 1<<20; small != c.spilled() {
								t.Fatalf("seed %d: budget %d: spilled %v", s, budget, c.spilled())
							}
							if rows, _, _ := c.sideRows(1 - endPort); rows == 0 {
								t.Fatalf("seed %d: side %d keeps nothing before the end", s, 1-endPort)
							}
							c.endInput(endPort, out)
							c.checkSideEmpty(s, 1-endPort, "at the end")
							c.checkProbeTable(s, endPort, probeExpected(typ, endPort, budget), "at the end")
						}
						if err := c.process(st, out); err != nil {
							t.Fatalf("seed %d: step %d: %v", s, i, err)
						}
						if i >= n1 && i%500 == 0 {
							c.checkSideEmpty(s, 1-endPort, fmt.Sprint("step ", i))
						}
					}
					// Checkpoints keep nothing of the side either.
					c.snapshot()
					c.checkSideEmpty(s, 1-endPort, "after a snapshot")
					c.checkProbeTable(s, endPort, probeExpected(typ, endPort, budget), "after a snapshot")
					if rows, _, _ := c.sideRows(endPort); rows == 0 && len(live[endPort]) > 0 {
						t.Fatalf("seed %d: the ended side %d keeps nothing", s, endPort)
					}
					if !equalMultiset(out.rows, want) {
						t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", s, len(out.rows), len(want),
							head(keysOf(out.rows)), head(keysOf(want)))
					}
				})
			}
		}
	}
}

// TestJoinEndInputRestore checks the end of an input through a checkpoint
// and a restore at another parallelism (1 to 3, 3 to 1), the checkpoint
// taken before the end or after it: the restored join keeps the rows of
// the side that goes on until the end comes again (a few steps after the
// restore, as a restarted finished source ends again), then drops them;
// the output before the checkpoint and after the restore (what the steps
// between the two gave is lost with the crash), applied, equals the batch
// join, exactly once.
func TestJoinEndInputRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	residual := joinTestResidual(t)
	const n1, n2 = 5000, 3000
	for typ := InnerJoin; typ <= FullOuterJoin+2; typ++ { // then semi and anti
		for ci, after := range []bool{false, true} {
			for bi, budget := range []int64{4 << 10, 1 << 30} {
				endPort := (int(typ) + ci) % 2
				li := (int(typ) + bi) % 2
				sd := joinEndLayouts()[li]
				withResidual := bi == 1
				pp := [][2]int{{1, 3}, {3, 1}}[(ci+bi)%2]
				name := fmt.Sprintf("type%d/end%d/after=%v/budget%d/sides%d/p%d-to-p%d", typ, endPort, after, budget, li, pp[0], pp[1])
				t.Run(name, func(t *testing.T) {
					t.Parallel() // each case has its own stores and seed
					s := seed + uint64(int(typ)*100+ci*10+bi)
					r := rand.New(rand.NewPCG(s, 10))
					steps, live := genEndSteps(r, n1, n2, 4000, sd.left, sd.right, endPort)
					newOp, want := newTestJoin(int(typ), joinTestKinds[typ], sd.left, sd.right, residual, withResidual, live)
					cut := n1 * 4 / 5
					if after {
						cut = n1 + n2/3
					}
					reEnd := max(cut, n1) + r.IntN(50) // the end comes again this step after the restore
					out := &collectEmitter{t: t, rows: map[string]int{}}
					a := newJoinCluster(t, newOp, pp[0], budget, nil)
					for i, st := range steps[:cut] {
						if i == n1 {
							a.endInput(endPort, out)
						}
						if err := a.process(st, out); err != nil {
							t.Fatalf("seed %d: step %d: %v", s, i, err)
						}
					}
					spilled := a.spilled()
					snaps := a.snapshot()
					if after {
						a.checkSideEmpty(s, 1-endPort, "at the checkpoint")
					}
					lost := &collectEmitter{t: t, rows: maps2(out.rows)}
					for i, st := range steps[cut : cut+20] {
						if err := a.process(st, lost); err != nil {
							t.Fatalf("seed %d: step %d after the checkpoint: %v", s, cut+i, err)
						}
					}
					b := newJoinCluster(t, newOp, pp[1], budget, snaps)
					kept := false
					for i := cut; i < len(steps); i++ {
						if i == reEnd {
							spilled = spilled || b.spilled()
							// Kept in memory or, past the budget, spilled.
							if rows, _, stored := b.sideRows(1 - endPort); rows > 0 || stored > 0 {
								kept = true
							}
							b.endInput(endPort, out)
							b.checkSideEmpty(s, 1-endPort, "at the end after the restore")
							b.checkProbeTable(s, endPort, probeExpected(typ, endPort, budget), "at the end after the restore")
						}
						if err := b.process(steps[i], out); err != nil {
							t.Fatalf("seed %d: step %d after the restore: %v", s, i, err)
						}
					}
					b.checkSideEmpty(s, 1-endPort, "at the end of the run")
					if small := budget < 1<<20; small != spilled {
						t.Fatalf("seed %d: budget %d: spilled %v", s, budget, !small)
					}
					// With the checkpoint after the end, the side kept only what
					// came between the restore and the end again: sure to be
					// something when those steps add more rows than they take
					// out (one lone -D kept nothing: seed 1796140564385219251).
					adds := 0
					for _, st := range steps[cut:reEnd] {
						for _, k := range st.b.Kinds {
							if k.IsRetraction() {
								adds--
							} else {
								adds++
							}
						}
					}
					if !kept && (!after || adds > 0) {
						t.Fatalf("seed %d: side %d kept no row before the end came again", s, 1-endPort)
					}
					if !equalMultiset(out.rows, want) {
						t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", s, len(out.rows), len(want),
							head(keysOf(out.rows)), head(keysOf(want)))
					}
				})
			}
		}
	}
}
