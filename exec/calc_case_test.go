package exec

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestCalcCaseFastPath runs a Calc whose projections are q16's FILTER
// CASEs (one arm, no ELSE, a column or TRUE as result, three conditions
// each shared by several projections), with other CASEs mixed in (two
// arms, an ELSE, a volatile condition used by two projections, a string
// result), over random rows with NULLs, and compares every output row
// with the values computed here in Go and with the generic evaluator
// (each source projection's Eval). It also counts the evaluations of a
// shared condition (once per row) and of a volatile one (once per
// projection per row).
func TestCalcCaseFastPath(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 16))
	const colPrice, colBidder, colName = 0, 1, 2
	price := expr.NewColumn(colPrice, types.BigInt, "price")
	bidder := expr.NewColumn(colBidder, types.BigInt, "bidder")
	name := expr.NewColumn(colName, types.Varchar, "name")
	lit, must, cmp := caseTestBuilders(t)
	// Each condition built anew per use, as the planner does; the Calc's
	// sharing makes equal ones one.
	rank1 := func() expr.Expr { return cmp("<", price, lit(10000)) }
	rank2 := func() expr.Expr {
		return must(expr.NewAnd(cmp(">=", price, lit(10000)), cmp("<", price, lit(1000000))))
	}
	rank3 := func() expr.Expr { return cmp(">=", price, lit(1000000)) }
	evenCalls := 0
	even := &expr.UserFunc{ID: "even", Args: []types.Kind{types.KindBigInt}, Result: types.KindBoolean,
		Call: func(a, _, _ types.Value) (types.Value, error) {
			evenCalls++
			if a.IsNull() {
				return types.Value{}, nil
			}
			return types.BoolValue(a.Int()%2 == 0), nil
		}}
	evenOf := func() expr.Expr { return must(expr.NewUserCall("even", even, []expr.Expr{bidder})) }
	toggles := 0
	toggle := &expr.UserFunc{ID: "toggle", Result: types.KindBoolean, Volatile: true,
		Call: func(_, _, _ types.Value) (types.Value, error) {
			toggles++
			return types.BoolValue(toggles%2 == 1), nil
		}}
	volatileCond := must(expr.NewUserCall("toggle", toggle, nil))
	trueLit := expr.NewLiteral(types.BoolValue(true), types.Boolean)
	one := func(cond, res expr.Expr) expr.Expr {
		return must(expr.NewCase([]expr.Expr{cond}, []expr.Expr{res}, nil))
	}
	proj := []expr.Expr{
		name,                      // 0: a copy
		one(rank1(), trueLit),     // 1
		one(rank2(), trueLit),     // 2
		one(rank3(), trueLit),     // 3
		bidder,                    // 4: a copy
		one(rank1(), bidder),      // 5
		one(rank2(), bidder),      // 6
		one(rank3(), bidder),      // 7
		one(rank2(), name),        // 8
		one(evenOf(), lit(7)),     // 9
		one(evenOf(), price),      // 10
		one(evenOf(), name),       // 11
		one(volatileCond, bidder), // 12: the same volatile condition
		one(volatileCond, bidder), // 13
		must(expr.NewCase([]expr.Expr{rank1(), rank3()}, []expr.Expr{lit(1), lit(3)}, nil)), // 14: two arms
		must(expr.NewCase([]expr.Expr{rank2()}, []expr.Expr{price}, lit(-1))),               // 15: ELSE
		// Conditions in no other projection, over integer ranges or not.
		one(cmp(">", lit(10000), price), bidder),                                                   // 16
		one(cmp("=", price, lit(9999)), trueLit),                                                   // 17
		one(must(expr.NewAnd(cmp(">=", price, lit(10000)), cmp("<", bidder, lit(50)))), trueLit),   // 18: two columns
		one(cmp(">", price, lit(math.MaxInt64)), trueLit),                                          // 19: empty
		one(cmp("<", price, lit(math.MinInt64)), trueLit),                                          // 20: empty
		one(cmp("<>", price, lit(10000)), trueLit),                                                 // 21
		one(must(expr.NewAnd(cmp(">", price, lit(999999)), cmp("<=", price, lit(1000000)))), name), // 22
		// An AND whose operands are shared (with 24's), but not itself.
		one(must(expr.NewAnd(cmp(">=", price, lit(500)), cmp("<", price, lit(700000)))), bidder), // 23
		one(must(expr.NewAnd(cmp("<", price, lit(700000)), cmp(">=", price, lit(500)))), name),   // 24
	}
	op := NewCalc(nil, proj)()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	calc := op.(*calcOp)
	fast := 0
	for _, s := range calc.cases {
		if s.cond >= 0 {
			fast++
		}
	}
	// 1–3, 5–13 and 16–22 take the fast path, with conditions rank1..3,
	// even, the volatile one twice and those of 16–22.
	if fast != 21 || len(calc.caseConds) != 15 {
		t.Fatalf("%d projections on the fast path over %d conditions; want 21 over 15", fast, len(calc.caseConds))
	}
	ranges := 0
	for _, r := range calc.caseRanges {
		if r.col >= 0 {
			ranges++
		}
	}
	if ranges != 10 { // rank1..3 (through their Shared nodes), 16, 17, 19, 20, 22, 23, 24
		t.Errorf("%d conditions evaluated as integer ranges; want 10", ranges)
	}
	// rank1..3 are also in projections 14 and 15: they stay Shared;
	// even() is in no other projection: evaluated without its memo.
	for i, want := range []bool{true, true, true, false} {
		if _, shared := calc.caseConds[i].(*expr.Shared); shared != want {
			t.Errorf("condition %d (%s) shared %v; want %v", i, calc.caseConds[i], shared, want)
		}
	}
	null := types.Value{}
	names := []string{"Google", "Apple", "", "channel-7"}
	for batch := range 20 {
		n := 1 + r.IntN(300)
		in := types.NewBatch(3, n)
		var want [][]types.Value
		bidders := 0 // rows with a bidder: a function call of a NULL is NULL, without a call
		for range n {
			row := make([]types.Value, 3)
			if r.IntN(6) != 0 {
				// Around the bounds and far from them.
				switch r.IntN(3) {
				case 0:
					row[colPrice] = types.BigIntValue([]int64{9999, 10000, 10001, 999999, 1000000, 1000001, 0, -5, math.MaxInt64, math.MinInt64}[r.IntN(10)])
				default:
					row[colPrice] = types.BigIntValue(r.Int64N(3000000) - 100)
				}
			}
			if r.IntN(6) != 0 {
				row[colBidder] = types.BigIntValue(r.Int64N(100))
			}
			if r.IntN(6) != 0 {
				row[colName] = types.StringValue(names[r.IntN(len(names))])
			}
			in.Append(types.Insert, row)
			// The model: SQL's three-valued conditions, a CASE of one arm
			// NULL unless its condition is TRUE.
			p, pok := row[colPrice].Int(), !row[colPrice].IsNull()
			b, bok := row[colBidder].Int(), !row[colBidder].IsNull()
			c1, c2, c3 := pok && p < 10000, pok && p >= 10000 && p < 1000000, pok && p >= 1000000
			ev := bok && b%2 == 0
			if bok {
				bidders++
			}
			pick := func(c bool, v types.Value) types.Value {
				if c {
					return v
				}
				return null
			}
			tr := types.BoolValue(true)
			arms := null
			switch {
			case c1:
				arms = types.BigIntValue(1)
			case c3:
				arms = types.BigIntValue(3)
			}
			els := types.BigIntValue(-1)
			if c2 {
				els = row[colPrice]
			}
			want = append(want, []types.Value{
				row[colName], pick(c1, tr), pick(c2, tr), pick(c3, tr),
				row[colBidder], pick(c1, row[colBidder]), pick(c2, row[colBidder]), pick(c3, row[colBidder]),
				pick(c2, row[colName]), pick(ev, types.BigIntValue(7)), pick(ev, row[colPrice]), pick(ev, row[colName]),
				row[colBidder], null, // the toggle: TRUE on its odd calls, two a row
				arms, els,
				pick(pok && p < 10000, row[colBidder]), pick(pok && p == 9999, tr), pick(pok && bok && p >= 10000 && b < 50, tr),
				null, null, pick(pok && p != 10000, tr), pick(pok && p == 1000000, row[colName]),
				pick(pok && p >= 500 && p < 700000, row[colBidder]), pick(pok && p >= 500 && p < 700000, row[colName]),
			})
		}
		evenCalls, toggles = 0, 0
		rec := &recorder{}
		if err := op.Process(0, in, rec); err != nil {
			t.Fatal(err)
		}
		if evenCalls != bidders {
			t.Errorf("batch %d: the shared condition evaluated %d times for %d rows with a bidder", batch, evenCalls, bidders)
		}
		if toggles != 2*n {
			t.Errorf("batch %d: the volatile condition evaluated %d times for %d rows; want %d (once per projection)", batch, toggles, n, 2*n)
		}
		if len(rec.rows) != n {
			t.Fatalf("batch %d: %d rows; want %d", batch, len(rec.rows), n)
		}
		for i := range n {
			w := types.FormatRow(types.Insert, want[i])
			if rec.rows[i] != w {
				t.Fatalf("batch %d row %d (%s): got %s; want %s (seed %d)", batch, i, in.Row(i), rec.rows[i], w, seed)
			}
			// The generic evaluator agrees (the volatile projections
			// aside: each call toggles).
			gen := make([]types.Value, len(proj))
			for k, p := range proj {
				if k == 12 || k == 13 {
					gen[k] = want[i][k]
					continue
				}
				v, err := p.Eval(in.Row(i))
				if err != nil {
					t.Fatal(err)
				}
				gen[k] = v
			}
			if g := types.FormatRow(types.Insert, gen); g != w {
				t.Fatalf("batch %d row %d: generic evaluation %s; model %s (seed %d)", batch, i, g, w, seed)
			}
		}
	}
}

// TestCalcCaseError: an error of a condition on the fast path fails the
// batch, naming the projection, as Case.Eval's does.
func TestCalcCaseError(t *testing.T) {
	boom := &expr.UserFunc{ID: "boom", Args: []types.Kind{types.KindBigInt}, Result: types.KindBoolean,
		Call: func(a, _, _ types.Value) (types.Value, error) {
			if a.Int() == 3 {
				return types.Value{}, errBoom
			}
			return types.BoolValue(true), nil
		}}
	col := expr.NewColumn(0, types.BigInt, "v")
	cond, err := expr.NewUserCall("boom", boom, []expr.Expr{col})
	if err != nil {
		t.Fatal(err)
	}
	c, err := expr.NewCase([]expr.Expr{cond}, []expr.Expr{col}, nil)
	if err != nil {
		t.Fatal(err)
	}
	op := NewCalc(nil, []expr.Expr{col, c})()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	in := types.NewBatch(1, 4)
	for _, v := range []int64{1, 2, 3} {
		in.Append(types.Insert, []types.Value{types.BigIntValue(v)})
	}
	err = op.Process(0, in, &recorder{})
	if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "projection 1") {
		t.Fatalf("error %v; want boom at projection 1", err)
	}
}

// TestCalcCaseWithFilter: CASE conditions that the filter (and a plain
// boolean projection) also uses stay Shared nodes, evaluated once per row
// through the memo or as integer ranges; the rows the filter keeps and
// their values match a Go model.
func TestCalcCaseWithFilter(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 17))
	price := expr.NewColumn(0, types.BigInt, "price")
	bidder := expr.NewColumn(1, types.Int, "bidder")
	lit, must, cmp := caseTestBuilders(t)
	mid := func() expr.Expr { return must(expr.NewAnd(cmp(">=", price, lit(100)), cmp("<", price, lit(200)))) }
	low := func() expr.Expr { return cmp("<", bidder, lit(50)) }
	one := func(cond, res expr.Expr) expr.Expr {
		return must(expr.NewCase([]expr.Expr{cond}, []expr.Expr{res}, nil))
	}
	filter := must(expr.NewOr(mid(), low()))
	proj := []expr.Expr{
		one(mid(), bidder),                     // 0
		one(low(), price),                      // 1
		one(mid(), price),                      // 2
		low(),                                  // 3: the condition as a value
		one(cmp(">", lit(150), price), bidder), // 4: literal on the left, in no other expression
	}
	op := NewCalc(filter, proj)()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	calc := op.(*calcOp)
	if len(calc.caseConds) != 3 {
		t.Fatalf("%d conditions; want 3", len(calc.caseConds))
	}
	for i, want := range []bool{true, true, false} {
		if _, shared := calc.caseConds[i].(*expr.Shared); shared != want {
			t.Errorf("condition %d (%s) shared %v; want %v", i, calc.caseConds[i], shared, want)
		}
	}
	null := types.Value{}
	for batch := range 10 {
		n := 1 + r.IntN(200)
		in := types.NewBatch(2, n)
		var want []string
		for range n {
			row := []types.Value{null, null}
			if r.IntN(5) != 0 {
				row[0] = types.BigIntValue(r.Int64N(300))
			}
			if r.IntN(5) != 0 {
				row[1] = types.IntValue(r.Int64N(100))
			}
			in.Append(types.Insert, row)
			p, pok := row[0].Int(), !row[0].IsNull()
			b, bok := row[1].Int(), !row[1].IsNull()
			m, l := pok && p >= 100 && p < 200, bok && b < 50
			if !m && !l {
				continue
			}
			pick := func(c bool, v types.Value) types.Value {
				if c {
					return v
				}
				return null
			}
			lowV := null
			if bok {
				lowV = types.BoolValue(l)
			}
			want = append(want, types.FormatRow(types.Insert, []types.Value{
				pick(m, row[1]), pick(l, row[0]), pick(m, row[0]), lowV, pick(pok && p < 150, row[1]),
			}))
		}
		rec := &recorder{}
		if err := op.Process(0, in, rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.rows) != len(want) {
			t.Fatalf("batch %d: %d rows; want %d (seed %d)", batch, len(rec.rows), len(want), seed)
		}
		for i := range want {
			if rec.rows[i] != want[i] {
				t.Fatalf("batch %d row %d: got %s; want %s (seed %d)", batch, i, rec.rows[i], want[i], seed)
			}
		}
	}
}

// caseTestBuilders returns the expression builders of the CASE tests: a
// BIGINT literal, a check that a constructor succeeded, a comparison.
func caseTestBuilders(t *testing.T) (lit func(int64) expr.Expr, must func(expr.Expr, error) expr.Expr, cmp func(op string, l, r expr.Expr) expr.Expr) {
	lit = func(v int64) expr.Expr { return expr.NewLiteral(types.BigIntValue(v), types.BigInt) }
	must = func(e expr.Expr, err error) expr.Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	cmp = func(op string, l, r expr.Expr) expr.Expr { return must(expr.NewCompare(op, l, r)) }
	return lit, must, cmp
}
