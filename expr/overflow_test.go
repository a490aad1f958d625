package expr

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestIntegerOverflow checks + - * / and negation of INT and BIGINT against
// the exact result computed with math/big: a result that fits is returned,
// one that does not is an error wrapping ErrOverflow that names the
// expression (Src).
func TestIntegerOverflow(t *testing.T) {
	vals := []int64{0, 1, -1, 2, -2, 3, 1 << 31, -(1 << 31), math.MaxInt32, math.MinInt32,
		math.MaxInt32 + 1, math.MinInt32 - 1, 1 << 32, math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, math.MinInt64 / 2, 3037000500, -3037000500}
	for _, k := range []types.Kind{types.KindInt, types.KindBigInt} {
		lo, hi := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
		if k == types.KindInt {
			lo, hi = big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)
		}
		for _, x := range vals {
			for _, y := range vals {
				bx, by := big.NewInt(x), big.NewInt(y)
				if bx.Cmp(lo) < 0 || bx.Cmp(hi) > 0 || by.Cmp(lo) < 0 || by.Cmp(hi) > 0 {
					continue
				}
				for _, op := range []string{"+", "-", "*", "/"} {
					var want big.Int
					switch op {
					case "+":
						want.Add(bx, by)
					case "-":
						want.Sub(bx, by)
					case "*":
						want.Mul(bx, by)
					case "/":
						if y == 0 {
							continue
						}
						want.Quo(bx, by)
					}
					a, err := NewArith(op, intLit(k, x), intLit(k, y))
					if err != nil {
						t.Fatal(err)
					}
					a.(*Arith).Src = func() string { return "'x' at line 1:1" }
					got, err := a.Eval(nil)
					fits := want.Cmp(lo) >= 0 && want.Cmp(hi) <= 0
					switch {
					case fits && err != nil:
						t.Errorf("%s: %d %s %d: unexpected error %v", k, x, op, y, err)
					case fits && got.Int() != want.Int64():
						t.Errorf("%s: %d %s %d = %d, want %s", k, x, op, y, got.Int(), want.String())
					case !fits && !errors.Is(err, ErrOverflow):
						t.Errorf("%s: %d %s %d = %v (err %v), want an overflow error", k, x, op, y, got, err)
					case !fits && !strings.HasPrefix(err.Error(), "'x' at line 1:1: numeric overflow"):
						t.Errorf("%s: %d %s %d: error %q does not name the expression", k, x, op, y, err)
					}
				}
			}
			if big.NewInt(x).Cmp(lo) < 0 || big.NewInt(x).Cmp(hi) > 0 {
				continue
			}
			neg, _ := NewNeg(intLit(k, x))
			got, err := neg.Eval(nil)
			fits := (x != math.MinInt64) && (k != types.KindInt || x != math.MinInt32)
			if fits != (err == nil) || (fits && got.Int() != -x) {
				t.Errorf("%s: -(%d) = %v, %v", k, x, got, err)
			}
		}
	}
}

func intLit(k types.Kind, n int64) Expr {
	return NewLiteral(types.BigIntValue(n).WithKind(k), types.Type{Kind: k})
}

func TestNarrowingCastAndTryCast(t *testing.T) {
	m := must(t)
	dbl := func(f float64) Expr { return lit(types.DoubleValue(f)) }
	cases := []struct {
		name string
		e    Expr
		want types.Value
		err  string
	}{
		{"bigint fits int", m(NewCast(intLit(types.KindBigInt, math.MaxInt32), types.Int)), types.IntValue(math.MaxInt32), ""},
		{"bigint too big for int", m(NewCast(intLit(types.KindBigInt, 3000000000), types.Int)), vNull, "numeric overflow: 3000000000 does not fit in INT"},
		{"bigint too small for int", m(NewCast(intLit(types.KindBigInt, math.MinInt32-1), types.Int)), vNull, "numeric overflow: -2147483649 does not fit in INT"},
		{"double fits bigint", m(NewCast(dbl(-9.2e18), types.BigInt)), types.BigIntValue(-9200000000000000000), ""},
		{"double too big for bigint", m(NewCast(dbl(1e19), types.BigInt)), vNull, "numeric overflow: 1.0E19 does not fit in BIGINT"},
		{"2^63 does not fit bigint", m(NewCast(dbl(9223372036854775808.0), types.BigInt)), vNull, "numeric overflow"},
		{"-2^63 fits bigint", m(NewCast(dbl(-9223372036854775808.0), types.BigInt)), types.BigIntValue(math.MinInt64), ""},
		{"double too big for int", m(NewCast(dbl(3e9), types.Int)), vNull, "numeric overflow: 3000000000 does not fit in INT"},
		{"NaN to int", m(NewCast(dbl(math.NaN()), types.Int)), vNull, "numeric overflow: NaN does not fit in INT"},
		{"TRY_CAST too big", m(NewTryCast(intLit(types.KindBigInt, 3000000000), types.Int, nil)), vNull, ""},
		{"TRY_CAST bad string", m(NewTryCast(sv("abc"), types.Int, nil)), vNull, ""},
		{"TRY_CAST good string", m(NewTryCast(sv("12"), types.Int, nil)), types.IntValue(12), ""},
		{"TRY_CAST null", m(NewTryCast(cN, types.BigInt, nil)), vNull, ""},
	}
	for _, c := range cases {
		got, err := c.e.Eval(row)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrOverflow) {
				t.Errorf("%s: got %v, %v; want error %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || !types.Equal(got, c.want) || got.Kind() != c.want.Kind() {
			t.Errorf("%s: got %v (%v), %v; want %v", c.name, got, got.Kind(), err, c.want)
		}
	}
	tc := m(NewTryCast(lit(types.IntValue(1)), types.Int, nil))
	if tc.Type().NotNull {
		t.Errorf("TRY_CAST of a NOT NULL value must be nullable")
	}
	if s := tc.String(); s != "TRY_CAST(1 AS INT)" {
		t.Errorf("String() = %q", s)
	}
}
