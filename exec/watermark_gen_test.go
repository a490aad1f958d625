package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// computedRowtime builds TO_TIMESTAMP_LTZ(n / div, 3) - INTERVAL '1' SECOND
// over column n (BIGINT) of a two-column row (n, k).
func computedRowtime(t *testing.T, div int64, op string) expr.Expr {
	t.Helper()
	n := expr.NewColumn(0, types.BigInt, "n")
	q, err := expr.NewArith(op, n, expr.NewLiteral(types.BigIntValue(div), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := expr.NewTimeCall("TO_TIMESTAMP_LTZ", "", []expr.Expr{q, expr.NewLiteral(types.IntValue(3), types.Int)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wm, err := expr.NewArith("-", ts, expr.NewLiteral(types.IntervalValue(1000), types.Interval))
	if err != nil {
		t.Fatal(err)
	}
	return wm
}

// TestWatermarkGenComputedRowtime: over a computed rowtime that never
// decreases in the one column it reads, the generator keeps that column's
// largest value (no per-row evaluation) and its watermark is the largest
// per-row watermark, computed here in Go; over one that may decrease
// (n % 100) it evaluates every row, with the same answer.
func TestWatermarkGenComputedRowtime(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, c := range []struct {
		op   string
		fast bool
		f    func(n int64) int64 // the watermark of a row, in Go
	}{
		{"/", true, func(n int64) int64 { return n/100 - 1000 }},
		{"*", true, func(n int64) int64 { return n*100 - 1000 }},
		{"%", false, func(n int64) int64 { return n%100 - 1000 }},
	} {
		g := newWatermarkGen(&WatermarkSpec{Column: -1, Expr: computedRowtime(t, 100, c.op)}, 2)
		if g.onlyCol != c.fast {
			t.Fatalf("%s: largest-value shortcut %v, want %v", c.op, g.onlyCol, c.fast)
		}
		want := NoWatermark
		for range 20 {
			b := types.NewBatch(2, 64)
			for range 1 + rng.IntN(64) {
				n := rng.Int64N(2_000_000) - 1_000_000
				v := types.BigIntValue(n)
				if rng.IntN(10) == 0 {
					v = types.NullValue()
				} else {
					want = max(want, c.f(n))
				}
				b.Append(types.Insert, []types.Value{v, types.BigIntValue(1)})
			}
			if err := g.observe(b); err != nil {
				t.Fatal(err)
			}
			got, err := g.current()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s: watermark %d, want %d", c.op, got, want)
			}
		}
	}
}

// TestNonDecreasingIn: which expressions the shortcut takes.
func TestNonDecreasingIn(t *testing.T) {
	n := expr.NewColumn(0, types.BigInt, "n")
	m := expr.NewColumn(1, types.BigInt, "m")
	lit := func(v int64) expr.Expr { return expr.NewLiteral(types.BigIntValue(v), types.BigInt) }
	arith := func(op string, l, r expr.Expr) expr.Expr {
		e, err := expr.NewArith(op, l, r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		e    expr.Expr
		want bool
	}{
		{n, true},
		{arith("+", lit(5), n), true},
		{arith("-", n, lit(5)), true},
		{arith("-", lit(5), n), false},
		{arith("*", n, lit(-2)), false},
		{arith("*", lit(2), n), true},
		{arith("/", n, lit(0)), false},
		{arith("/", lit(100), n), false},
		{arith("+", n, m), false},
		{arith("+", n, n), true},
		{lit(7), false},
	} {
		col, ok := nonDecreasingIn(c.e)
		if ok != c.want || (ok && col != 0) {
			t.Errorf("%s: (%d, %v), want %v", c.e, col, ok, c.want)
		}
	}
}
