package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// This file tests the probe table of an ended join side (probeTable):
// the join's output with it equals the batch join computed in Go, with
// and without it, over dense and sparse keys, unique and duplicate rows,
// every regular join type and either input ending; it is not built when
// it may not stand for the rows (an outer side's match counts, a budget
// it does not fit in), and a spill after it was built drops it. The
// end-of-input tests (join_end_test.go) check that it is built, also
// after a restore, where it should be.

// probeWant is what a test expects of the ended side's probe table.
type probeWant int

const (
	probeEither probeWant = iota // the budget decides
	probeMust                    // built on every subtask with rows
	probeNever                   // built nowhere
)

// probeExpected returns what a join of type typ (semi and anti past
// FullOuterJoin), whose input side ended, with state budget budget,
// should do: a side whose match counts the join tracks has none; a side
// in a budget of 1 MiB or more has one.
func probeExpected(typ JoinType, side int, budget int64) probeWant {
	if joinTracks(typ, side) {
		return probeNever
	}
	if budget >= 1<<20 {
		return probeMust
	}
	return probeEither
}

// joinTracks reports whether a join of type typ (semi and anti past
// FullOuterJoin) counts the matches of side's rows: the preserved side
// of an outer join (NULL-padded without a match), the left side of a
// semi or anti join.
func joinTracks(typ JoinType, side int) bool {
	if side == 0 {
		return typ == LeftOuterJoin || typ == FullOuterJoin || typ > FullOuterJoin
	}
	return typ == RightOuterJoin || typ == FullOuterJoin
}

// joinStateOf returns the state of a regular, semi or anti join.
func joinStateOf(op Operator) *joinState {
	switch o := op.(type) {
	case *joinOp:
		return &o.joinState
	case *semiJoinOp:
		return &o.joinState
	}
	panic(fmt.Sprintf("%T is not a join", op))
}

// checkProbeTable fails unless side's probe tables are as want says.
func (c *joinCluster) checkProbeTable(seed uint64, side int, want probeWant, when string) {
	c.t.Helper()
	for i, op := range c.ops {
		s := joinStateOf(op).sides[side]
		switch {
		case want == probeMust && s.pt == nil && s.keys.Len() > 0:
			c.t.Fatalf("seed %d: %s: subtask %d: side %d (%d keys) has no probe table", seed, when, i, side, s.keys.Len())
		case want == probeNever && s.pt != nil:
			c.t.Fatalf("seed %d: %s: subtask %d: side %d has a probe table", seed, when, i, side)
		case s.pt != nil && s.pt.keys != s.keys.Len():
			c.t.Fatalf("seed %d: %s: subtask %d: side %d: probe table of %d keys, the side has %d", seed, when, i, side, s.pt.keys, s.keys.Len())
		}
	}
}

// probeStats returns, over the subtasks, the rows probed through side's
// probe tables, how many tables are dense and how many hashed, and how
// many hold their rows in place.
func (c *joinCluster) probeStats(side int) (probed int64, dense, hashed, inPlace int) {
	for _, op := range c.ops {
		s := joinStateOf(op).sides[side]
		probed += s.probed
		switch {
		case s.pt == nil:
			continue
		case s.pt.dense:
			dense++
		default:
			hashed++
		}
		if s.pt.inPlace {
			inPlace++
		}
	}
	return probed, dense, hashed, inPlace
}

// withoutProbe returns newOp with its joins' probe tables off.
func withoutProbe(newOp func() Operator) func() Operator {
	return func() Operator {
		op := newOp()
		joinStateOf(op).noProbe = true
		return op
	}
}

// TestJoinProbeTable runs every join type (semi and anti included),
// either input ending,
// over dense keys (0 to 399: a dense table) and sparse ones (2,000
// multiples of 1,000,003: a hashed one), each side pair of joinEndLayouts (the
// ended side with one row per key, or with duplicate rows), with and
// without the residual, on two subtasks, with the probe table and
// without it: the applied output equals the batch join, the rows that
// came after the end went through the probe table where the side may
// have one, and a side with one row per key had its rows in place.
func TestJoinProbeTable(t *testing.T) {
	seed := testseed.Seed(t)
	residual := joinTestResidual(t)
	for typ := InnerJoin; typ <= FullOuterJoin+2; typ++ { // then semi and anti
		for endPort := range 2 {
			for _, sparse := range []bool{false, true} {
				for li := range joinEndLayouts() {
					withResidual := (int(typ)+endPort+li)%2 == 1
					name := fmt.Sprintf("type%d/end%d/sparse=%v/sides%d/residual=%v", typ, endPort, sparse, li, withResidual)
					t.Run(name, func(t *testing.T) {
						t.Parallel() // each case has its own stores and seed
						s := seed + uint64(int(typ)*1000+endPort*100+li*10)
						if sparse {
							s++
						}
						scale, keys := int64(1), 400 // each subtask holds most of them
						if sparse {
							scale, keys = 1_000_003, 2000
						}
						r := rand.New(rand.NewPCG(s, 11))
						const n1 = 3000
						sd := joinEndLayouts()[li]
						steps, live := genEndStepsScaled(r, n1, 3000, keys, scale, sd.left, sd.right, endPort)
						newOp, want := newTestJoin(int(typ), joinTestKinds[typ], sd.left, sd.right, residual, withResidual, live)
						for _, probe := range []bool{true, false} {
							mk := newOp
							if !probe {
								mk = withoutProbe(newOp)
							}
							out := &collectEmitter{t: t, rows: map[string]int{}}
							c := newJoinCluster(t, mk, 2, 1<<30, nil)
							for i, st := range steps {
								if i == n1 {
									c.endInput(endPort, out)
								}
								if err := c.process(st, out); err != nil {
									t.Fatalf("seed %d: probe %v: step %d: %v", s, probe, i, err)
								}
							}
							if !equalMultiset(out.rows, want) {
								t.Fatalf("seed %d: probe %v: %d distinct rows, want %d\n got  %v\n want %v", s, probe, len(out.rows), len(want),
									head(keysOf(out.rows)), head(keysOf(want)))
							}
							probed, dense, hashed, inPlace := c.probeStats(endPort)
							switch {
							case probe && !joinTracks(typ, endPort):
								if probed == 0 {
									t.Fatalf("seed %d: no row went through the probe table", s)
								}
								if sparse && dense > 0 || !sparse && hashed > 0 {
									t.Fatalf("seed %d: sparse %v: %d dense and %d hashed tables", s, sparse, dense, hashed)
								}
								// A side with one row per key has its rows
								// in place; one with duplicates has runs.
								unique := [2]JoinSide{sd.left, sd.right}[endPort].Layout == JoinKeyContainsUniqueKey
								if unique && inPlace != dense+hashed || !unique && sd.left.Layout == NoUniqueKey && endPort == 0 && inPlace > 0 {
									t.Fatalf("seed %d: %d of %d tables with rows in place", s, inPlace, dense+hashed)
								}
							case probed > 0 || dense+hashed > 0:
								t.Fatalf("seed %d: probe %v: %d rows through %d probe tables", s, probe, probed, dense+hashed)
							}
						}
					})
				}
			}
		}
	}
}

// TestJoinProbeTableKeys checks the probe table's lookups over key sets
// of every shape (extremes of int64, negatives, dense with holes, one
// key, sparse): an inner join whose right input (the keys, a row or
// three per key) ended is probed with each key, its neighbours and keys
// far off, and its output must be the matches a Go map gives.
func TestJoinProbeTableKeys(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 12))
	dense := make([]int64, 0, 3000)
	for k := int64(-1000); k < 2000; k++ {
		if r.IntN(3) > 0 {
			dense = append(dense, k)
		}
	}
	sparse := make([]int64, 500)
	for i := range sparse {
		sparse[i] = r.Int64() - math.MaxInt64/2
	}
	sets := [][]int64{
		{0},
		{math.MinInt64, math.MaxInt64, 0},
		{math.MinInt64, math.MinInt64 + 1},
		{math.MaxInt64 - 3, math.MaxInt64},
		{-5, -3, -1, 0, 2, 4},
		dense,
		sparse,
		{0, 1 << 31, 1 << 32},
	}
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt}
	for si, keys := range sets {
		for _, dup := range []bool{false, true} {
			t.Run(fmt.Sprintf("set%d/dup=%v", si, dup), func(t *testing.T) {
				right := JoinSide{Keys: []int{0}, Kinds: kinds, Layout: JoinKeyContainsUniqueKey}
				if dup {
					right.Layout = NoUniqueKey
				}
				op := NewJoin(JoinSpec{Type: InnerJoin, Left: JoinSide{Keys: []int{0}, Kinds: kinds}, Right: right})().(*joinOp)
				if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
					t.Fatal(err)
				}
				model := map[int64][]int64{} // key → the right rows' second values, a value per copy
				b := types.NewBatch(2, len(keys))
				for i, k := range keys {
					n := 1
					if dup {
						n = 1 + i%3
					}
					for c := range n {
						v := int64(i)
						if c == 2 {
							v = -1 // a second distinct row of the key
						}
						b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v)})
						model[k] = append(model[k], v)
					}
				}
				discard := emitFunc(func(*types.Batch) error { return nil })
				if err := op.Process(1, b, discard); err != nil {
					t.Fatal(err)
				}
				if err := op.EndInput(1, discard); err != nil {
					t.Fatal(err)
				}
				if op.sides[1].pt == nil {
					t.Fatal("no probe table")
				}
				if dup && op.sides[1].pt.cnts == nil && len(keys) > 2 {
					t.Fatal("duplicate rows without counts")
				}
				var probes []int64
				for _, k := range keys {
					probes = append(probes, k, k+1, k-1, k^1<<40)
				}
				probes = append(probes, math.MinInt64, math.MaxInt64, 0, -1)
				got := map[string]int{}
				collect := emitFunc(func(b *types.Batch) error {
					for i := range b.Len() {
						got[fmt.Sprint(b.Row(i))]++
					}
					return nil
				})
				b = types.NewBatch(2, len(probes)+1)
				for i, k := range probes {
					b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(int64(i))})
				}
				b.Append(types.Insert, []types.Value{{}, types.BigIntValue(-7)}) // a NULL key matches nothing
				if err := op.Process(0, b, collect); err != nil {
					t.Fatal(err)
				}
				want := map[string]int{}
				for i, k := range probes {
					for _, v := range model[k] {
						want[fmt.Sprint([]types.Value{types.BigIntValue(k), types.BigIntValue(int64(i)), types.BigIntValue(k), types.BigIntValue(v)})]++
					}
				}
				if !equalMultiset(got, want) {
					t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", seed, len(got), len(want),
						head(keysOf(got)), head(keysOf(want)))
				}
			})
		}
	}
}

// TestJoinProbeTableBudget checks the probe table against the state
// budget: an inner join whose right input (4,000 keys, W9's dimension
// shape) ended before any left row came is given a budget its state fits
// in but not its state and the probe table, so the table is not built
// and the left rows are joined through the state; and with room for the
// table, a spill of the right side after it was built (as a budget that
// the state outgrew would make) drops it, and the rows after go through
// the state, loaded back from the store. Both give the batch join.
func TestJoinProbeTableBudget(t *testing.T) {
	seed := testseed.Seed(t)
	sd := joinEndLayouts()[0]
	r := rand.New(rand.NewPCG(seed, 13))
	gens := [2]*changelogGen{{r: r, keys: 4000}, {r: r, keys: 4000, unique: true, keyUnique: true}}
	var steps []joinStep
	const n1 = 2000 // right steps, then left ones
	for i := range 2 * n1 {
		side := 1
		if i >= n1 {
			side = 0
		}
		b := types.NewBatch(3, 8)
		for range 1 + r.IntN(6) {
			gens[side].next(b)
		}
		steps = append(steps, joinStep{side: side, b: b})
	}
	live := [2][][]types.Value{gens[0].live, gens[1].live}
	newOp, want := newTestJoin(0, "inner", sd.left, sd.right, nil, false, live)

	// The most memory the state takes before the end, and the table's.
	c := newJoinCluster(t, newOp, 1, 1<<30, nil)
	discard := emitFunc(func(*types.Batch) error { return nil })
	var most int64
	o := c.ops[0].(*joinOp)
	for _, st := range steps[:n1] {
		if err := c.process(st, discard); err != nil {
			t.Fatal(err)
		}
		most = max(most, o.sides[0].bytes()+o.sides[1].bytes())
	}
	table := o.sides[1].probeLayout().bytes(o.sides[1].w)
	if o.sides[1].keys.Len() <= 100 {
		t.Fatalf("seed %d: the right side has only %d keys", seed, o.sides[1].keys.Len())
	}
	// A budget the state fits in all along, but not with the table at
	// the end.
	final := o.sides[0].bytes() + o.sides[1].bytes()
	budget := max(most, final+table/2)
	if budget >= final+table {
		t.Fatalf("seed %d: the state took %d bytes, %d at the end, the table %d: no budget between", seed, most, final, table)
	}

	t.Run("over", func(t *testing.T) {
		out := &collectEmitter{t: t, rows: map[string]int{}}
		c := newJoinCluster(t, newOp, 1, budget, nil)
		for i, st := range steps {
			if i == n1 {
				c.endInput(1, out)
			}
			if err := c.process(st, out); err != nil {
				t.Fatalf("seed %d: step %d: %v", seed, i, err)
			}
		}
		o := c.ops[0].(*joinOp)
		if c.spilled() || o.sides[1].pt != nil || o.sides[1].probeSkipped != 1 || o.sides[1].probed != 0 {
			t.Fatalf("seed %d: budget %d (state %d, table %d): spilled %v, table %v, skipped %d, probed %d", seed, budget,
				final, table, c.spilled(), o.sides[1].pt != nil, o.sides[1].probeSkipped, o.sides[1].probed)
		}
		if !equalMultiset(out.rows, want) {
			t.Fatalf("seed %d: %d distinct rows, want %d", seed, len(out.rows), len(want))
		}
	})

	t.Run("spill", func(t *testing.T) {
		out := &collectEmitter{t: t, rows: map[string]int{}}
		c := newJoinCluster(t, newOp, 1, 1<<30, nil)
		o := c.ops[0].(*joinOp)
		for i, st := range steps {
			if i == n1 {
				c.endInput(1, out)
				if o.sides[1].pt == nil {
					t.Fatalf("seed %d: no probe table", seed)
				}
			}
			if i == n1+n1/2 {
				probed := o.sides[1].probed
				if probed == 0 {
					t.Fatalf("seed %d: no row went through the probe table", seed)
				}
				if err := o.sides[1].st.Spill(); err != nil {
					t.Fatal(err)
				}
				o.sides[1].bigAfterSpill()
				if o.sides[1].pt != nil || !o.sides[1].st.Backed() {
					t.Fatalf("seed %d: after a spill: table %v, backed %v", seed, o.sides[1].pt != nil, o.sides[1].st.Backed())
				}
				defer func() {
					if o.sides[1].probed != probed {
						t.Errorf("seed %d: %d rows went through a probe table after the spill", seed, o.sides[1].probed-probed)
					}
				}()
			}
			if err := c.process(st, out); err != nil {
				t.Fatalf("seed %d: step %d: %v", seed, i, err)
			}
		}
		if !equalMultiset(out.rows, want) {
			t.Fatalf("seed %d: %d distinct rows, want %d", seed, len(out.rows), len(want))
		}
	})
}

// TestJoinProbeTableRestore checks the probe table through a checkpoint
// taken after the end and a restore at another parallelism (2 to 3, 3 to
// 1): for each join type whose ended side may have one (inner, LEFT with
// the right input ended, RIGHT with the left one ended, semi and anti
// with the right one ended), over
// sides of one row per key and of duplicates, the restored join probes
// its restored state until the end comes again, then builds the table
// and probes it; the output before the checkpoint and after the restore,
// applied, equals the batch join, exactly once.
func TestJoinProbeTableRestore(t *testing.T) {
	seed := testseed.Seed(t)
	residual := joinTestResidual(t)
	const n1, n2 = 3000, 3000
	cases := []struct {
		typ     JoinType
		endPort int
	}{{InnerJoin, 0}, {InnerJoin, 1}, {LeftOuterJoin, 1}, {RightOuterJoin, 0}, {FullOuterJoin + 1, 1}, {FullOuterJoin + 2, 1}}
	for ci, cs := range cases {
		for li := range joinEndLayouts() {
			pp := [][2]int{{2, 3}, {3, 1}}[(ci+li)%2]
			withResidual := ci%2 == 1
			name := fmt.Sprintf("type%d/end%d/sides%d/p%d-to-p%d/residual=%v", cs.typ, cs.endPort, li, pp[0], pp[1], withResidual)
			t.Run(name, func(t *testing.T) {
				s := seed + uint64(ci*10+li)
				r := rand.New(rand.NewPCG(s, 14))
				sd := joinEndLayouts()[li]
				steps, live := genEndSteps(r, n1, n2, 400, sd.left, sd.right, cs.endPort)
				newOp, want := newTestJoin(int(cs.typ), joinTestKinds[cs.typ], sd.left, sd.right, residual, withResidual, live)
				cut := n1 + n2/3
				reEnd := cut + 1 + r.IntN(50) // the end comes again this step after the restore
				out := &collectEmitter{t: t, rows: map[string]int{}}
				a := newJoinCluster(t, newOp, pp[0], 1<<30, nil)
				for i, st := range steps[:cut] {
					if i == n1 {
						a.endInput(cs.endPort, out)
						a.checkProbeTable(s, cs.endPort, probeMust, "at the end")
					}
					if err := a.process(st, out); err != nil {
						t.Fatalf("seed %d: step %d: %v", s, i, err)
					}
				}
				snaps := a.snapshot()
				lost := &collectEmitter{t: t, rows: maps2(out.rows)}
				for i, st := range steps[cut : cut+20] {
					if err := a.process(st, lost); err != nil {
						t.Fatalf("seed %d: step %d after the checkpoint: %v", s, cut+i, err)
					}
				}
				b := newJoinCluster(t, newOp, pp[1], 1<<30, snaps)
				b.checkProbeTable(s, cs.endPort, probeNever, "after the restore")
				for i := cut; i < len(steps); i++ {
					if i == reEnd {
						b.endInput(cs.endPort, out)
						b.checkProbeTable(s, cs.endPort, probeMust, "at the end after the restore")
					}
					if err := b.process(steps[i], out); err != nil {
						t.Fatalf("seed %d: step %d after the restore: %v", s, i, err)
					}
				}
				if probed, _, _, _ := b.probeStats(cs.endPort); probed == 0 {
					t.Fatalf("seed %d: no row went through the probe table after the restore", s)
				}
				if !equalMultiset(out.rows, want) {
					t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", s, len(out.rows), len(want),
						head(keysOf(out.rows)), head(keysOf(want)))
				}
			})
		}
	}
}
