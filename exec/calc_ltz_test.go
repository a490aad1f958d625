package exec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestCalcLTZOfColumn checks the Calc's copy of TO_TIMESTAMP_LTZ of a
// column in milliseconds without an Eval call (ltzCol, W10's computed
// rowtime): for BIGINT and INT columns, NULLs among them, next to a DOUBLE
// column and a precision of 0 (evaluated), the rows must be those computed
// here in Go: an integer n gives the instant n ms, a DOUBLE d its rounded
// milliseconds, precision 0 n seconds, NULL gives NULL. Randomized: prints
// its seed.
func TestCalcLTZOfColumn(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 12))
	a := expr.NewColumn(0, types.BigInt, "a")
	b := expr.NewColumn(1, types.Int, "b")
	d := expr.NewColumn(2, types.Double, "d")
	ltz := func(arg expr.Expr, prec int64) expr.Expr {
		e, err := expr.NewTimeCall("TO_TIMESTAMP_LTZ", "", []expr.Expr{arg, expr.NewLiteral(types.IntValue(prec), types.Int)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	op := NewCalc(nil, []expr.Expr{ltz(a, 3), a, ltz(b, 3), ltz(d, 3), ltz(a, 0)})()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	if got := op.(*calcOp).ltzCol; len(got) != 5 || got[0] != 0 || got[1] != -1 || got[2] != 1 || got[3] != 2 || got[4] != -1 {
		t.Fatalf("ltzCol %v, want [0 -1 1 2 -1]", got)
	}
	in := types.NewBatch(3, 64)
	var want []string
	for range 200 {
		av, bv, dv := types.BigIntValue(r.Int64N(4e12)-2e12), types.IntValue(r.Int64N(4e9)-2e9), types.DoubleValue(r.Float64()*1e9)
		if r.IntN(5) == 0 {
			av = types.Value{}
		}
		if r.IntN(5) == 0 {
			bv = types.Value{}
		}
		in.Append(types.Insert, []types.Value{av, bv, dv})
		ms := func(v types.Value, scale int64) types.Value {
			if v.IsNull() {
				return types.Value{}
			}
			return types.TimestampLTZValue(v.Int() * scale)
		}
		row := []types.Value{ms(av, 1), av, ms(bv, 1), types.TimestampLTZValue(int64(math.Round(dv.Float()))), ms(av, 1000)}
		want = append(want, types.FormatRow(types.Insert, row))
	}
	rec := &recorder{}
	if err := op.Process(0, in, rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.rows) != len(want) {
		t.Fatalf("seed %d: %d rows, want %d", seed, len(rec.rows), len(want))
	}
	for i := range want {
		if rec.rows[i] != want[i] {
			t.Fatalf("seed %d: row %d is %s, want %s", seed, i, rec.rows[i], want[i])
		}
	}
}

// TestCalcFilterRowsInPlace checks the Calc's rows written in place in
// room made for the whole batch: batches of random sizes (growing past
// the room of the first, and some with every row filtered out) through a
// filter with a projection and through a filter alone; the rows emitted
// must be those computed here in Go, batch by batch. Randomized: prints
// its seed.
func TestCalcFilterRowsInPlace(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 13))
	a := expr.NewColumn(0, types.BigInt, "a")
	s := expr.NewColumn(1, types.Varchar, "s")
	pos, err := expr.NewCompare(">", a, expr.NewLiteral(types.BigIntValue(0), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	ltz, err := expr.NewTimeCall("TO_TIMESTAMP_LTZ", "", []expr.Expr{a, expr.NewLiteral(types.IntValue(3), types.Int)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, proj := range [][]expr.Expr{{s, ltz, a}, nil} {
		op := NewCalc(pos, proj)()
		if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
			t.Fatal(err)
		}
		for batch := range 40 {
			size := 1 + r.IntN(8)
			if batch > 3 {
				size = 1 + r.IntN(300)
			}
			in := types.NewBatch(2, size)
			var want []string
			none := r.IntN(6) == 0 // every row filtered out
			for range size {
				v := r.Int64N(2000) - 1000
				if none {
					v = -1 - r.Int64N(100)
				}
				av, sv := types.BigIntValue(v), types.StringValue(strconv.FormatInt(r.Int64N(1e6), 36))
				if r.IntN(9) == 0 {
					av = types.Value{}
				}
				kind := types.Insert
				if r.IntN(4) == 0 {
					kind = types.Delete
				}
				in.Append(kind, []types.Value{av, sv})
				if av.IsNull() || v <= 0 {
					continue
				}
				row := []types.Value{av, sv}
				if proj != nil {
					row = []types.Value{sv, types.TimestampLTZValue(v), av}
				}
				want = append(want, types.FormatRow(kind, row))
			}
			rec := &recorder{}
			if err := op.Process(0, in, rec); err != nil {
				t.Fatal(err)
			}
			if len(rec.rows) != len(want) {
				t.Fatalf("seed %d, batch %d: %d rows, want %d", seed, batch, len(rec.rows), len(want))
			}
			for i := range want {
				if rec.rows[i] != want[i] {
					t.Fatalf("seed %d, batch %d: row %d is %s, want %s", seed, batch, i, rec.rows[i], want[i])
				}
			}
		}
	}
}
