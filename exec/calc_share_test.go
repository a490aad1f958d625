package exec

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestCalcSharesCommonSubexpressions checks that a call the filter and a
// projection both make (q21's REGEXP_EXTRACT twice) runs once per row, in
// each of two instances of one Calc factory (each its own memo), with the
// rows an independent computation gives.
func TestCalcSharesCommonSubexpressions(t *testing.T) {
	calls := 0
	f := &expr.UserFunc{ID: "sq", Args: []types.Kind{types.KindBigInt}, Result: types.KindBigInt,
		Call: func(a, _, _ types.Value) (types.Value, error) {
			calls++
			return types.BigIntValue(a.Int() * a.Int()), nil
		}}
	col := expr.NewColumn(0, types.BigInt, "v")
	sq := func() expr.Expr {
		c, err := expr.NewUserCall("sq", f, []expr.Expr{col})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	filter, err := expr.NewCompare(">", sq(), expr.NewLiteral(types.BigIntValue(10), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	factory := NewCalc(filter, []expr.Expr{col, sq()})
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	for inst := 0; inst < 2; inst++ {
		op := factory()
		if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
			t.Fatal(err)
		}
		in := types.NewBatch(1, 64)
		var want []string
		for range 64 {
			v := r.Int64N(21) - 10
			in.Append(types.Insert, []types.Value{types.BigIntValue(v)})
			if v*v > 10 {
				want = append(want, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(v), types.BigIntValue(v * v)}))
			}
		}
		calls = 0
		rec := &recorder{}
		if err := op.Process(0, in, rec); err != nil {
			t.Fatal(err)
		}
		if calls != 64 {
			t.Errorf("instance %d: sq called %d times for 64 rows; want 64", inst, calls)
		}
		if len(rec.rows) != len(want) {
			t.Fatalf("instance %d: %d rows; want %d", inst, len(rec.rows), len(want))
		}
		for i := range want {
			if rec.rows[i] != want[i] {
				t.Errorf("instance %d row %s: %s; want %s", inst, strconv.Itoa(i), rec.rows[i], want[i])
			}
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCalcCopiesColumnsOfMixedProjection: in a projection that mixes
// column references and expressions, the references are copied (copyCol)
// and the expressions evaluated, giving the rows computed here in Go.
func TestCalcCopiesColumnsOfMixedProjection(t *testing.T) {
	a := expr.NewColumn(0, types.BigInt, "a")
	c := expr.NewColumn(2, types.Varchar, "c")
	twice, err := expr.NewArith("*", a, expr.NewLiteral(types.BigIntValue(2), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	op := NewCalc(nil, []expr.Expr{c, twice, a})()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	if got := op.(*calcOp).copyCol; len(got) != 3 || got[0] != 2 || got[1] != -1 || got[2] != 0 {
		t.Fatalf("copyCol %v, want [2 -1 0]", got)
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	in := types.NewBatch(3, 32)
	var want []string
	for range 32 {
		v := r.Int64N(1000) - 500
		s := strconv.FormatInt(r.Int64N(100), 10)
		in.Append(types.Insert, []types.Value{types.BigIntValue(v), types.BigIntValue(0), types.StringValue(s)})
		want = append(want, types.FormatRow(types.Insert, []types.Value{types.StringValue(s), types.BigIntValue(2 * v), types.BigIntValue(v)}))
	}
	rec := &recorder{}
	if err := op.Process(0, in, rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rec.rows), len(want))
	}
	for i := range want {
		if rec.rows[i] != want[i] {
			t.Errorf("row %d: %s, want %s", i, rec.rows[i], want[i])
		}
	}
}

// TestFuseCalcs: a column-picking Calc after a computing one is folded
// into it (the pair gives the rows computed here in Go, the first
// evaluates only what the second keeps, the second passes batches on);
// a second Calc with a filter is left alone.
func TestFuseCalcs(t *testing.T) {
	n := expr.NewColumn(0, types.BigInt, "n")
	k := expr.NewColumn(1, types.BigInt, "k")
	div, err := expr.NewArith("/", n, expr.NewLiteral(types.BigIntValue(100), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	open := func(f func() Operator) Operator {
		op := f()
		if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
			t.Fatal(err)
		}
		return op
	}
	// (n, k) -> (n, k, n / 100) -> (k, n / 100)
	first := open(NewCalc(nil, []expr.Expr{n, k, div}))
	second := open(NewCalc(nil, []expr.Expr{k, expr.NewColumn(2, types.BigInt, "q")}))
	ops := []Operator{first, second}
	fuseCalcs(ops)
	if got := len(first.(*calcOp).proj); got != 2 {
		t.Fatalf("fused first Calc has %d projections, want 2", got)
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	in := types.NewBatch(2, 32)
	var want []string
	for range 32 {
		nv, kv := r.Int64N(100000), r.Int64N(10)
		in.Append(types.Insert, []types.Value{types.BigIntValue(nv), types.BigIntValue(kv)})
		want = append(want, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(kv), types.BigIntValue(nv / 100)}))
	}
	rec := &recorder{}
	if err := ops[0].Process(0, in, &chainEmitter{op: ops[1], next: rec}); err != nil {
		t.Fatal(err)
	}
	if len(rec.rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rec.rows), len(want))
	}
	for i := range want {
		if rec.rows[i] != want[i] {
			t.Errorf("row %d: %s, want %s", i, rec.rows[i], want[i])
		}
	}

	// A filter in the second Calc keeps the pair as it is.
	pos, err := expr.NewCompare(">", k, expr.NewLiteral(types.BigIntValue(0), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	first = open(NewCalc(nil, []expr.Expr{n, k, div}))
	second = open(NewCalc(pos, []expr.Expr{k}))
	fuseCalcs([]Operator{first, second})
	if got := len(first.(*calcOp).proj); got != 3 {
		t.Fatalf("first Calc before a filtering one has %d projections, want 3", got)
	}

	// A picking Calc after a join is folded into it (outputPicker); one
	// with a filter is not.
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt}
	for _, filtered := range []bool{false, true} {
		join := NewJoin(JoinSpec{Left: JoinSide{Keys: []int{0}, Kinds: kinds}, Right: JoinSide{Keys: []int{0}, Kinds: kinds}})()
		if err := join.Open(&OpContext{ID: "join", Parallelism: 1, MaxParallelism: 128}); err != nil {
			t.Fatal(err)
		}
		var filter expr.Expr
		if filtered {
			filter = pos
		}
		calc := open(NewCalc(filter, []expr.Expr{expr.NewColumn(3, types.BigInt, "v"), k}))
		fuseCalcs([]Operator{join, calc})
		picked := join.(*joinOp).pick != nil
		if picked == filtered || (calc.(*calcOp).cols == nil) != picked {
			t.Errorf("filter %v: join picks %v, Calc copies %v", filtered, join.(*joinOp).pick, calc.(*calcOp).cols)
		}
	}
}

// chainEmitter feeds what it is given to op, which emits to next.
type chainEmitter struct {
	op   Operator
	next Emitter
}

func (c *chainEmitter) Emit(b *types.Batch) error { return c.op.Process(0, b, c.next) }

// TestCalcFilterWithColumnProjection: a filter over a projection of plain
// columns (copied, not evaluated) keeps the rows it passes, with the
// columns picked.
func TestCalcFilterWithColumnProjection(t *testing.T) {
	a := expr.NewColumn(0, types.BigInt, "a")
	b := expr.NewColumn(1, types.BigInt, "b")
	pos, err := expr.NewCompare(">", a, expr.NewLiteral(types.BigIntValue(0), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	op := NewCalc(pos, []expr.Expr{b, a})()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	in := types.NewBatch(2, 8)
	var want []string
	for i := range int64(8) {
		av := i - 4
		in.Append(types.Insert, []types.Value{types.BigIntValue(av), types.BigIntValue(10 * i)})
		if av > 0 {
			want = append(want, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(10 * i), types.BigIntValue(av)}))
		}
	}
	rec := &recorder{}
	if err := op.Process(0, in, rec); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.rows, want) {
		t.Fatalf("rows %v, want %v", rec.rows, want)
	}
}

// TestCalcCopyRuns builds random projections of a 6-column input mixing
// column references (adjacent ones in runs, repeated, out of order) with
// expressions, with and without a filter, and checks the copies' runs
// (runs, evals) and the rows against those computed here in Go.
// Randomized: prints its seed.
func TestCalcCopyRuns(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 21))
	const width = 6
	cols := make([]expr.Expr, width)
	for i := range cols {
		cols[i] = expr.NewColumn(i, types.BigInt, "c"+strconv.Itoa(i))
	}
	for trial := range 300 {
		n := 1 + r.IntN(9)
		proj := make([]expr.Expr, n)
		// src[k] is the column projection k copies, or -(1+c) for c*3.
		src := make([]int, n)
		for k := range proj {
			c := r.IntN(width)
			if k > 0 && src[k-1] >= 0 && src[k-1]+1 < width && r.IntN(2) == 0 {
				c = src[k-1] + 1 // extend a run
			}
			if r.IntN(4) == 0 {
				e, err := expr.NewArith("*", cols[c], expr.NewLiteral(types.BigIntValue(3), types.BigInt))
				if err != nil {
					t.Fatal(err)
				}
				proj[k], src[k] = e, -(1 + c)
			} else {
				proj[k], src[k] = cols[c], c
			}
		}
		var filter expr.Expr
		if r.IntN(3) == 0 {
			f, err := expr.NewCompare(">", cols[0], expr.NewLiteral(types.BigIntValue(0), types.BigInt))
			if err != nil {
				t.Fatal(err)
			}
			filter = f
		}
		op := NewCalc(filter, proj)()
		if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
			t.Fatal(err)
		}
		c := op.(*calcOp)
		if c.cols == nil {
			// Copies and expressions: the runs cover the copies once.
			covered := make([]int, n)
			for _, run := range c.runs {
				for i := range run.n {
					covered[run.dst+i]++
					if src[run.dst+i] != run.src+i {
						t.Fatalf("seed %d trial %d: run %+v copies column %d to %d, want %d", seed, trial, run, run.src+i, run.dst+i, src[run.dst+i])
					}
				}
			}
			for _, k := range c.evals {
				covered[k]++
			}
			for k, m := range covered {
				if m != 1 {
					t.Fatalf("seed %d trial %d: projection %d covered %d times (runs %+v evals %v)", seed, trial, k, m, c.runs, c.evals)
				}
			}
		}
		in := types.NewBatch(width, 16)
		var want []string
		for range 40 {
			row := make([]types.Value, width)
			for i := range row {
				row[i] = types.BigIntValue(r.Int64N(200) - 100)
			}
			if r.IntN(6) == 0 {
				row[r.IntN(width)] = types.Value{}
			}
			in.Append(types.Insert, row)
			if filter != nil && (row[0].IsNull() || row[0].Int() <= 0) {
				continue
			}
			out := make([]types.Value, n)
			for k, s := range src {
				if s >= 0 {
					out[k] = row[s]
				} else if v := row[-s-1]; !v.IsNull() {
					out[k] = types.BigIntValue(3 * v.Int())
				}
			}
			want = append(want, types.FormatRow(types.Insert, out))
		}
		rec := &recorder{}
		if err := op.Process(0, in, rec); err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, trial, err)
		}
		if len(rec.rows) != len(want) {
			t.Fatalf("seed %d trial %d: %d rows, want %d", seed, trial, len(rec.rows), len(want))
		}
		for i := range want {
			if rec.rows[i] != want[i] {
				t.Fatalf("seed %d trial %d: row %d: %s, want %s", seed, trial, i, rec.rows[i], want[i])
			}
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
