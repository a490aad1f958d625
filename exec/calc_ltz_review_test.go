package exec

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestCalcLTZEdges checks the Calc's TO_TIMESTAMP_LTZ(col, 3) without an
// Eval call (ltzCol) at the edges: the int64 extremes, negative times and
// 0 in a BIGINT column, TINYINT and SMALLINT columns, NULLs, a DOUBLE
// column beside them (evaluated), the same call written twice and in the
// filter (shared: its value kept for the row), and a filter dropping
// rows. Rows must equal those computed here in Go. Then errors: a
// precision of 0 past the range and a NaN DOUBLE fail the batch, and the
// batch after a failed one emits its own rows only (none of the rows the
// failed one wrote in the room). Randomized: prints its seed.
func TestCalcLTZEdges(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 21))
	a := expr.NewColumn(0, types.BigInt, "a")
	ti := expr.NewColumn(1, types.Type{Kind: types.KindTinyInt}, "t")
	si := expr.NewColumn(2, types.Type{Kind: types.KindSmallInt}, "s")
	d := expr.NewColumn(3, types.Double, "d")
	ltz := func(arg expr.Expr, prec int64) expr.Expr {
		e, err := expr.NewTimeCall("TO_TIMESTAMP_LTZ", "", []expr.Expr{arg, expr.NewLiteral(types.IntValue(prec), types.Int)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// The filter reads TO_TIMESTAMP_LTZ(a, 3) too: a > -1000 ms.
	filter, err := expr.NewCompare(">", ltz(a, 3), expr.NewLiteral(types.TimestampLTZValue(-1000), types.Type{Kind: types.KindTimestampLTZ}))
	if err != nil {
		t.Fatal(err)
	}
	for _, shared := range []bool{false, true} {
		var f expr.Expr
		proj := []expr.Expr{ltz(a, 3), ltz(ti, 3), ltz(si, 3), ltz(d, 3), a}
		if shared {
			f = filter
			proj = append(proj, ltz(a, 3))
		}
		op := NewCalc(f, proj)()
		if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
			t.Fatal(err)
		}
		ms := func(v types.Value) types.Value {
			if v.IsNull() {
				return types.Value{}
			}
			return types.TimestampLTZValue(v.Int())
		}
		extremes := []int64{math.MinInt64, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 - 1, -1, 0, 1, -1000, -999}
		for batch := range 30 {
			size := 1 + r.IntN(200)
			in := types.NewBatch(4, size)
			var want []string
			for range size {
				var av types.Value
				switch r.IntN(4) {
				case 0:
				case 1:
					av = types.BigIntValue(extremes[r.IntN(len(extremes))])
				default:
					av = types.BigIntValue(r.Int64N(4e12) - 2e12)
				}
				tv := types.TinyIntValue(int64(int8(r.Uint32())))
				sv := types.SmallIntValue(int64(int16(r.Uint32())))
				if r.IntN(6) == 0 {
					tv = types.Value{}
				}
				if r.IntN(6) == 0 {
					sv = types.Value{}
				}
				dv := types.DoubleValue((r.Float64() - 0.5) * 1e15)
				if r.IntN(6) == 0 {
					dv = types.Value{}
				}
				kind := []types.RowKind{types.Insert, types.Delete, types.UpdateAfter}[r.IntN(3)]
				in.Append(kind, []types.Value{av, tv, sv, dv})
				if shared && (av.IsNull() || av.Int() <= -1000) {
					continue
				}
				dms := types.Value{}
				if !dv.IsNull() {
					dms = types.TimestampLTZValue(int64(math.Round(dv.Float())))
				}
				row := []types.Value{ms(av), ms(tv), ms(sv), dms, av}
				if shared {
					row = append(row, ms(av))
				}
				want = append(want, types.FormatRow(kind, row))
			}
			rec := &recorder{}
			if err := op.Process(0, in, rec); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if len(rec.rows) != len(want) {
				t.Fatalf("seed %d, shared %v, batch %d: %d rows, want %d", seed, shared, batch, len(rec.rows), len(want))
			}
			for i := range want {
				if rec.rows[i] != want[i] {
					t.Fatalf("seed %d, shared %v, batch %d: row %d is %s, want %s", seed, shared, batch, i, rec.rows[i], want[i])
				}
			}
		}
	}

	// Errors: the evaluated calls still fail where they must, and what a
	// failed batch wrote does not come out with the next one.
	op := NewCalc(nil, []expr.Expr{ltz(a, 3), ltz(a, 0), ltz(d, 3)})()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		a types.Value
		d types.Value
	}{
		{types.BigIntValue(math.MaxInt64/1000 + 1), types.DoubleValue(1)},
		{types.BigIntValue(math.MinInt64), types.DoubleValue(1)},
		{types.BigIntValue(5), types.DoubleValue(math.NaN())},
		{types.BigIntValue(5), types.DoubleValue(1e300)},
	}
	for i, c := range bad {
		in := types.NewBatch(4, 8)
		for k := range 5 { // good rows first, written in the room
			in.Append(types.Insert, []types.Value{types.BigIntValue(int64(k)), {}, {}, types.DoubleValue(2)})
		}
		in.Append(types.Insert, []types.Value{c.a, {}, {}, c.d})
		rec := &recorder{}
		err := op.Process(0, in, rec)
		if !errors.Is(err, expr.ErrOverflow) {
			t.Fatalf("case %d: error %v, want an overflow", i, err)
		}
		if len(rec.rows) != 0 {
			t.Fatalf("case %d: a failed batch emitted %v", i, rec.rows)
		}
		in = types.NewBatch(4, 2)
		in.Append(types.Delete, []types.Value{types.BigIntValue(-7), {}, {}, {}})
		if err := op.Process(0, in, rec); err != nil {
			t.Fatal(err)
		}
		want := types.FormatRow(types.Delete, []types.Value{types.TimestampLTZValue(-7), types.TimestampLTZValue(-7000), {}})
		if len(rec.rows) != 1 || rec.rows[0] != want {
			t.Fatalf("case %d: after a failed batch got %v, want [%s]", i, rec.rows, want)
		}
	}
}
