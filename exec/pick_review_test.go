package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// randomPick draws a column pick of 1 to 8 columns of width w: in any
// order, some picked twice; now and then all columns in order (the
// identity) or reversed.
func randomPick(r *rand.Rand, w int) []int {
	switch r.IntN(8) {
	case 0:
		p := make([]int, w)
		for i := range p {
			p[i] = i
		}
		return p
	case 1:
		p := make([]int, w)
		for i := range p {
			p[i] = w - 1 - i
		}
		return p
	}
	p := make([]int, 1+r.IntN(8))
	for i := range p {
		p[i] = r.IntN(w)
	}
	return p
}

// fusedJoin is a regular join chained with a Calc, as a task chains them:
// once both are open, fuseCalcs runs over the pair (which folds a picking
// Calc into the join), and the join's output goes through the Calc.
type fusedJoin struct {
	*joinOp
	calc   Operator
	folded *bool
}

func (f fusedJoin) Open(ctx *OpContext) error {
	if err := f.joinOp.Open(ctx); err != nil {
		return err
	}
	if err := f.calc.Open(ctx); err != nil {
		return err
	}
	fuseCalcs([]Operator{f.joinOp, f.calc})
	*f.folded = f.joinOp.pick != nil
	return nil
}

func (f fusedJoin) Process(input int, b *types.Batch, out Emitter) error {
	return f.joinOp.Process(input, b, &chainEmitter{op: f.calc, next: out})
}

func (f fusedJoin) EndInput(port int, out Emitter) error {
	return f.joinOp.EndInput(port, &chainEmitter{op: f.calc, next: out})
}

func (f fusedJoin) Finish(out Emitter) error {
	return f.joinOp.Finish(&chainEmitter{op: f.calc, next: out})
}

// TestReviewJoinFusedPickRandom runs random regular joins (inner, left,
// right, full; with or without the residual; spilled or not) each chained
// with a random picking Calc (columns reordered, picked twice, NULL-padded
// ones, the identity), through fuseCalcs, a snapshot and a restore at
// another parallelism, and compares the applied output with the picked
// columns of the batch join computed in Go. A Calc with a filter is not
// folded and gives the same answer.
func TestReviewJoinFusedPickRandom(t *testing.T) {
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindBigInt}
	layouts := [][2]JoinSide{
		{{Keys: []int{0}, Kinds: kinds, Layout: HasUniqueKey, UniqueKey: []int{1}}, {Keys: []int{0}, Kinds: kinds}},
		{{Keys: []int{0}, Kinds: kinds}, {Keys: []int{0}, Kinds: kinds}},
		{{Keys: []int{0}, Kinds: kinds}, {Keys: []int{0}, Kinds: kinds, Layout: JoinKeyContainsUniqueKey, UniqueKey: []int{0}}},
	}
	residual := joinTestResidual(t)
	for i := range 12 {
		s := seed + uint64(i)
		r := rand.New(rand.NewPCG(s, 61))
		typ := JoinType(r.IntN(4))
		lay := layouts[r.IntN(len(layouts))]
		withRes := r.IntN(2) == 0
		pick := randomPick(r, 6)
		filtered := r.IntN(5) == 0
		budget := []int64{4 << 10, 1 << 30}[r.IntN(2)]
		from, to := 1+r.IntN(3), 1+r.IntN(3)
		name := fmt.Sprintf("%d/%s/res%v/pick%v/filter%v/b%d/p%d-to-p%d", i, joinTestKinds[typ], withRes, pick, filtered, budget, from, to)
		t.Run(name, func(t *testing.T) {
			steps, live := genJoinSteps(r, 3000, 300, lay[0], lay[1])
			var res expr.Expr
			if withRes {
				res = residual
			}
			spec := JoinSpec{Type: typ, Left: lay[0], Right: lay[1], Residual: res}
			var proj []expr.Expr
			for _, c := range pick {
				proj = append(proj, expr.NewColumn(c, types.BigInt, fmt.Sprintf("c%d", c)))
			}
			// The filter keeps rows whose right v is not NULL and even.
			var filter expr.Expr
			keep := func([]types.Value) bool { return true }
			if filtered {
				rv := expr.NewColumn(5, types.BigInt, "rv")
				f, err := expr.NewCompare(">=", rv, expr.NewLiteral(types.BigIntValue(2), types.BigInt))
				if err != nil {
					t.Fatal(err)
				}
				filter = f
				keep = func(row []types.Value) bool { return !row[5].IsNull() && row[5].Int() >= 2 }
			}
			folded := false
			newOp := func() Operator {
				return fusedJoin{joinOp: NewJoin(spec)().(*joinOp), calc: NewCalc(filter, proj)(), folded: &folded}
			}
			want := map[string]int{}
			batchJoinEach(typ, live[0], live[1], withRes, func(row []types.Value) {
				if !keep(row) {
					return
				}
				var p []types.Value
				for _, c := range pick {
					p = append(p, row[c])
				}
				want[rowKey(p)]++
			})
			got, _, _ := runJoinCheckpoints(t, newOp, steps, []int{len(steps) / 3, len(steps) / 2}, 20, from, to, budget)
			if folded == filtered {
				t.Fatalf("seed %d: the Calc folded %v with filter %v", s, folded, filtered)
			}
			if !equalMultiset(got, want) {
				t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", s, len(got), len(want),
					head(keysOf(got)), head(keysOf(want)))
			}
		})
	}
}

// reviewOverChanges is overUpdChanges with few distinct times and values,
// so that equal rows (whole duplicates) and peers are common: inserts,
// updates, deletes of live rows and retractions of rows never there.
func reviewOverChanges(seed uint64, n int) (kinds []types.RowKind, rows [][]types.Value, final []overUpdIn) {
	rng := rand.New(rand.NewPCG(seed, 29))
	next := func(k int64) overUpdIn {
		return overUpdIn{k: k, ts: 1000 + rng.Int64N(3), s: rng.Int64N(4), d: float64(rng.IntN(3)) / 7}
	}
	return changelogOf[overUpdIn]{keys: 4, mix: changelogMix{insert: 45, same: 45, update: 80, del: 95},
		next: next, key: func(r overUpdIn) int64 { return r.k }, values: overUpdIn.values, skipLive: true}.make(rng, n)
}

// TestReviewOverFusedPickRandom runs each updating OVER case with a random
// picking Calc after it (folded into the OVER) over a changelog with many
// equal rows and peers, through a checkpoint and a restore at another
// parallelism, and compares the applied output with the picked columns of
// the batch OVER computed here (ties ordered as the operator's map keys:
// by the row's values).
func TestReviewOverFusedPickRandom(t *testing.T) {
	seed := testseed.Seed(t)
	for i := range 8 {
		s := seed + uint64(i)
		r := rand.New(rand.NewPCG(s, 7))
		c := overUpdCases[i%len(overUpdCases)]
		w := 4 + len(c.calls)
		pick := randomPick(r, w)
		from, to := 1+r.IntN(3), 1+r.IntN(3)
		kinds, rows, final := reviewOverChanges(s, 500)
		t.Run(fmt.Sprintf("%d/%s/pick%v/p%d-to-p%d", i, c.name, pick, from, to), func(t *testing.T) {
			var want []string
			for _, row := range reviewOverWant(c, final) {
				var p []types.Value
				for _, col := range pick {
					p = append(p, row[col])
				}
				want = append(want, types.FormatRow(types.Insert, p)[2:])
			}
			slices.Sort(want)
			spec := c.spec(t)
			const batch = 16
			cut := (len(rows) / 2) / batch * batch
			h := newOverUpdPickHarness(t, t.TempDir(), from, nil, spec, pick)
			for _, tk := range h.keyed {
				if o := tk.ops[0].(*overUpdOp); !slices.Equal(o.pick, pick) {
					t.Fatalf("the OVER picks %v, want %v", o.pick, pick)
				}
			}
			for i := 0; i < cut; i += batch {
				h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
			}
			ck := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			for i := cut; i < min(cut+4*batch, len(rows)); i += batch {
				j := min(i+batch, len(rows))
				h.emitChanges(kinds[i:j], rows[i:j])
			}
			h2 := newOverUpdPickHarness(t, t.TempDir(), to, ck, spec, pick)
			h2.reader.pos = int64(cut)
			for i := cut; i < len(rows); i += batch {
				j := min(i+batch, len(rows))
				h2.emitChanges(kinds[i:j], rows[i:j])
			}
			h2.end()
			if got := applyChangelog(t, append(before, h2.sink.rows...)); !slices.Equal(got, want) {
				t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", s, len(got), len(want), got, want)
			}
		})
	}
}

// reviewOverWant is the batch OVER c over rows, ties of the sort key
// ordered by the rest of the row (ts, then d), as the operator's map keys
// order them: each row with its results.
func reviewOverWant(c overUpdCase, rows []overUpdIn) [][]types.Value {
	per := map[int64][]overUpdIn{}
	for _, r := range rows {
		per[r.k] = append(per[r.k], r)
	}
	var out [][]types.Value
	for _, rs := range per {
		slices.SortFunc(rs, func(a, b overUpdIn) int {
			return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.ts, b.ts), cmp.Compare(a.d, b.d))
		})
		for i, r := range rs {
			out = append(out, append(r.values(), c.results(c.frameOf(rs, i))...))
		}
	}
	return out
}

// reviewStage is one Calc of a random chain after a join, and its Go
// model: filter (col >= 2, col not NULL) when fcol >= 0, then per output
// column the input column, or COALESCE(column, -1) when coalesce.
type reviewStage struct {
	fcol     int
	cols     []int
	coalesce []bool
}

func (s reviewStage) calc(t *testing.T) func() Operator {
	t.Helper()
	var filter expr.Expr
	if s.fcol >= 0 {
		f, err := expr.NewCompare(">=", expr.NewColumn(s.fcol, types.BigInt, "f"), expr.NewLiteral(types.BigIntValue(2), types.BigInt))
		if err != nil {
			t.Fatal(err)
		}
		filter = f
	}
	var proj []expr.Expr
	for i, c := range s.cols {
		var p expr.Expr = expr.NewColumn(c, types.BigInt, fmt.Sprintf("c%d", c))
		if s.coalesce[i] {
			e, err := expr.NewCoalesce([]expr.Expr{p, expr.NewLiteral(types.BigIntValue(-1), types.BigInt)})
			if err != nil {
				t.Fatal(err)
			}
			p = e
		}
		proj = append(proj, p)
	}
	return NewCalc(filter, proj)
}

// apply is the stage on row: its output and whether it keeps the row.
func (s reviewStage) apply(row []types.Value) ([]types.Value, bool) {
	if s.fcol >= 0 && (row[s.fcol].IsNull() || row[s.fcol].Int() < 2) {
		return nil, false
	}
	out := make([]types.Value, len(s.cols))
	for i, c := range s.cols {
		out[i] = row[c]
		if s.coalesce[i] && out[i].IsNull() {
			out[i] = types.BigIntValue(-1)
		}
	}
	return out, true
}

// chainJoin is a regular join chained with Calcs, as a task chains them
// (fuseCalcs over the chain once all are open).
type chainJoin struct {
	*joinOp
	calcs []Operator
}

func (c chainJoin) Open(ctx *OpContext) error {
	if err := c.joinOp.Open(ctx); err != nil {
		return err
	}
	ops := []Operator{c.joinOp}
	for _, op := range c.calcs {
		if err := op.Open(ctx); err != nil {
			return err
		}
		ops = append(ops, op)
	}
	fuseCalcs(ops)
	return nil
}

func (c chainJoin) emitter(out Emitter) Emitter {
	for i := len(c.calcs) - 1; i >= 0; i-- {
		out = &chainEmitter{op: c.calcs[i], next: out}
	}
	return out
}

func (c chainJoin) Process(input int, b *types.Batch, out Emitter) error {
	return c.joinOp.Process(input, b, c.emitter(out))
}

func (c chainJoin) EndInput(port int, out Emitter) error {
	return c.joinOp.EndInput(port, c.emitter(out))
}

func (c chainJoin) Finish(out Emitter) error { return c.joinOp.Finish(c.emitter(out)) }

// TestReviewJoinCalcChainRandom chains one to three random Calcs after a
// random regular join (picking, picking with a filter, or with COALESCE
// expressions), folds them as a task does (Calc into Calc, picking Calc
// into the join), and compares the output applied through a snapshot and
// a restore at another parallelism with the Calcs applied in Go to the
// batch join.
func TestReviewJoinCalcChainRandom(t *testing.T) {
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindBigInt}
	side := JoinSide{Keys: []int{0}, Kinds: kinds}
	residual := joinTestResidual(t)
	for i := range 16 {
		s := seed + uint64(i)
		r := rand.New(rand.NewPCG(s, 83))
		typ := JoinType(r.IntN(4))
		withRes := r.IntN(2) == 0
		var stages []reviewStage
		w := 6
		for range 1 + r.IntN(3) {
			st := reviewStage{fcol: -1, cols: randomPick(r, w)}
			st.coalesce = make([]bool, len(st.cols))
			switch r.IntN(4) {
			case 0:
				st.fcol = r.IntN(w)
			case 1:
				for j := range st.coalesce {
					st.coalesce[j] = r.IntN(2) == 0
				}
			}
			stages = append(stages, st)
			w = len(st.cols)
		}
		from, to := 1+r.IntN(3), 1+r.IntN(3)
		t.Run(fmt.Sprintf("%d/%s/res%v/%v/p%d-to-p%d", i, joinTestKinds[typ], withRes, stages, from, to), func(t *testing.T) {
			steps, live := genJoinSteps(r, 2000, 200, side, side)
			var res expr.Expr
			if withRes {
				res = residual
			}
			spec := JoinSpec{Type: typ, Left: side, Right: side, Residual: res}
			newOp := func() Operator {
				c := chainJoin{joinOp: NewJoin(spec)().(*joinOp)}
				for _, st := range stages {
					c.calcs = append(c.calcs, st.calc(t)())
				}
				return c
			}
			want := map[string]int{}
			batchJoinEach(typ, live[0], live[1], withRes, func(row []types.Value) {
				for _, st := range stages {
					var ok bool
					if row, ok = st.apply(row); !ok {
						return
					}
				}
				want[rowKey(row)]++
			})
			got, _, _ := runJoinCheckpoints(t, newOp, steps, []int{len(steps) / 2}, 20, from, to, 1<<30)
			if !equalMultiset(got, want) {
				t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", s, len(got), len(want),
					head(keysOf(got)), head(keysOf(want)))
			}
		})
	}
}

// TestReviewJoinEndInputPicked is the end of an input (EndInput: the
// ended side's rows get a probe table, the other side's are no longer
// kept) for the regular joins with a random picking Calc folded in: the
// output applied equals the picked columns of the batch join.
func TestReviewJoinEndInputPicked(t *testing.T) {
	seed := testseed.Seed(t)
	residual := joinTestResidual(t)
	probed := false
	for typ := InnerJoin; typ <= FullOuterJoin; typ++ {
		for endPort := range 2 {
			s := seed + uint64(int(typ)*10+endPort)
			r := rand.New(rand.NewPCG(s, 31))
			sd := joinEndLayouts()[r.IntN(2)]
			withRes := r.IntN(2) == 0
			pick := randomPick(r, 6)
			par := 1 + r.IntN(2)
			t.Run(fmt.Sprintf("%s/end%d/res%v/pick%v/p%d", joinTestKinds[typ], endPort, withRes, pick, par), func(t *testing.T) {
				const n1 = 2000
				steps, live := genEndSteps(r, n1, 1500, 1000, sd.left, sd.right, endPort)
				var res expr.Expr
				if withRes {
					res = residual
				}
				spec := JoinSpec{Type: typ, Left: sd.left, Right: sd.right, Residual: res}
				folded := false
				var proj []expr.Expr
				for _, c := range pick {
					proj = append(proj, expr.NewColumn(c, types.BigInt, fmt.Sprintf("c%d", c)))
				}
				newOp := func() Operator {
					return fusedJoin{joinOp: NewJoin(spec)().(*joinOp), calc: NewCalc(nil, proj)(), folded: &folded}
				}
				want := map[string]int{}
				batchJoinEach(typ, live[0], live[1], withRes, func(row []types.Value) {
					var p []types.Value
					for _, c := range pick {
						p = append(p, row[c])
					}
					want[rowKey(p)]++
				})
				out := &collectEmitter{t: t, rows: map[string]int{}}
				c := newJoinCluster(t, newOp, par, 1<<30, nil)
				if !folded {
					t.Fatalf("seed %d: the Calc was not folded", s)
				}
				for i, st := range steps {
					if i == n1 {
						c.endInput(endPort, out)
						for _, op := range c.ops {
							probed = probed || op.(fusedJoin).sides[endPort].pt != nil
						}
					}
					if err := c.process(st, out); err != nil {
						t.Fatalf("seed %d: step %d: %v", s, i, err)
					}
				}
				if !equalMultiset(out.rows, want) {
					t.Fatalf("seed %d: %d distinct rows, want %d\n got  %v\n want %v", s, len(out.rows), len(want),
						head(keysOf(out.rows)), head(keysOf(want)))
				}
			})
		}
	}
	if !probed {
		t.Error("no case probed a probe table")
	}
}
