package expr

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// roundRat rounds r to s decimal places, half away from zero, and renders
// it with exactly s digits after the point: the answer computed without
// Weir's decimal code.
func roundRat(r *big.Rat, s int) (string, int) {
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil)))
	num, den := scaled.Num(), scaled.Denom()
	q, m := new(big.Int).QuoRem(new(big.Int).Abs(num), den, new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	nd := len(strings.TrimLeft(digits, "0"))
	if len(digits) <= s {
		digits = strings.Repeat("0", s-len(digits)+1) + digits
	}
	out := digits
	if s > 0 {
		out = digits[:len(digits)-s] + "." + digits[len(digits)-s:]
	}
	if num.Sign() < 0 && q.Sign() != 0 {
		out = "-" + out
	}
	return out, nd
}

// TestDecimalArithmetic checks + - * / % of random DECIMALs (narrow and
// wide) against big.Rat: the value rounded HALF_UP to the result scale,
// or an overflow error exactly when it has more digits than the result
// precision.
func TestDecimalArithmetic(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	randDec := func(p, s int) string {
		n := 1 + r.IntN(p)
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteByte('-')
		}
		for i := 0; i < n; i++ {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		d := b.String()
		neg := strings.HasPrefix(d, "-")
		d = strings.TrimPrefix(d, "-")
		for len(d) <= s {
			d = "0" + d
		}
		d = d[:len(d)-s] + "." + d[len(d)-s:]
		if neg {
			d = "-" + d
		}
		return strings.TrimSuffix(d, ".")
	}
	shapes := [][2]int{{10, 2}, {5, 3}, {18, 0}, {19, 4}, {38, 10}, {3, 3}, {30, 0}, {1, 0}, {18, 18}, {18, 9}, {9, 9}}
	for iter := 0; iter < 4000; iter++ {
		ls, rs := shapes[r.IntN(len(shapes))], shapes[r.IntN(len(shapes))]
		lt, rt := types.Decimal(ls[0], ls[1]), types.Decimal(rs[0], rs[1])
		ltext, rtext := randDec(ls[0], ls[1]), randDec(rs[0], rs[1])
		lv, err := types.ParseDecimal(ltext, ls[0], ls[1])
		if err != nil {
			t.Fatalf("parse %s: %v", ltext, err)
		}
		rv, err := types.ParseDecimal(rtext, rs[0], rs[1])
		if err != nil {
			t.Fatalf("parse %s: %v", rtext, err)
		}
		for _, op := range []string{"+", "-", "*", "/", "%"} {
			e, err := NewArith(op, NewLiteral(lv, lt), NewLiteral(rv, rt))
			if err != nil {
				t.Fatal(err)
			}
			rt2 := e.Type()
			got, err := e.Eval(nil)
			a, _ := new(big.Rat).SetString(ltext)
			b, _ := new(big.Rat).SetString(rtext)
			var want *big.Rat
			switch op {
			case "+":
				want = new(big.Rat).Add(a, b)
			case "-":
				want = new(big.Rat).Sub(a, b)
			case "*":
				want = new(big.Rat).Mul(a, b)
			case "/", "%":
				if b.Sign() == 0 {
					if !errors.Is(err, ErrDivisionByZero) {
						t.Errorf("%s %s %s: %v, %v; want division by zero", ltext, op, rtext, got, err)
					}
					continue
				}
				want = new(big.Rat).Quo(a, b)
				if op == "%" { // a - trunc(a/b)*b
					q := new(big.Int).Quo(want.Num(), want.Denom())
					want = new(big.Rat).Sub(a, new(big.Rat).Mul(new(big.Rat).SetInt(q), b))
				}
			}
			wtext, nd := roundRat(want, int(rt2.S))
			if nd > int(rt2.P) {
				if !errors.Is(err, ErrOverflow) {
					t.Errorf("%s %s %s (%s): %v, %v; want overflow (%s)", ltext, op, rtext, rt2, got, err, wtext)
				}
				continue
			}
			if err != nil || got.String() != wtext {
				t.Errorf("%s(%s) %s %s(%s) = %v (%v); want %s (%s)", ltext, lt, op, rtext, rt, got, err, wtext, rt2)
			}
		}
	}
}

func TestDecimalCastsAndNulls(t *testing.T) {
	m := must(t)
	dec := func(s string, p, sc int) Expr {
		v, err := types.ParseDecimal(s, p, sc)
		if err != nil {
			t.Fatal(err)
		}
		return NewLiteral(v, types.Decimal(p, sc))
	}
	cases := []struct {
		e    Expr
		want string
		err  string
	}{
		{m(NewArith("*", dec("0.908", 3, 3), intLit(types.KindBigInt, 1234567))), "1120986.836", ""},
		{m(NewCast(dec("12.345", 5, 3), types.Decimal(4, 2))), "12.35", ""},
		{m(NewCast(dec("-12.345", 5, 3), types.Decimal(4, 2))), "-12.35", ""},
		{m(NewCast(dec("123.4", 4, 1), types.Decimal(3, 1))), "", "does not fit in DECIMAL(3, 1)"},
		{m(NewCast(dec("-7.9", 2, 1), types.Int)), "-7", ""},
		{m(NewCast(dec("99999999999.5", 12, 1), types.Int)), "", "does not fit in INT"},
		{m(NewCast(dec("2.5", 2, 1), types.Double)), "2.5", ""},
		{m(NewCast(lit(types.DoubleValue(0.125)), types.Decimal(5, 2))), "0.13", ""},
		{m(NewCast(sv("1.005"), types.Decimal(5, 2))), "1.01", ""},
		{m(NewCast(sv("x"), types.Decimal(5, 2))), "", "cannot parse 'x' as DECIMAL(5, 2)"},
		{m(NewCast(dec("3.10", 3, 2), types.Varchar)), "3.10", ""},
		{m(NewCast(intLit(types.KindInt, 42), types.Decimal(4, 2))), "42.00", ""},
		{m(NewCast(intLit(types.KindInt, 420), types.Decimal(4, 2))), "", "does not fit in DECIMAL(4, 2)"},
		{m(NewArith("+", dec("1.5", 2, 1), nullOf(types.KindDecimal))), "<NULL>", ""},
		{m(NewCompare("<", dec("1.50", 3, 2), dec("1.499", 4, 3))), "false", ""},
		{m(NewCompare("=", dec("2.0", 2, 1), intLit(types.KindInt, 2))), "true", ""},
		{m(NewNeg(dec("-0.5", 1, 1))), "0.5", ""},
		{m(NewCast(sv("2026-02-03"), types.Type{Kind: types.KindDate})), "2026-02-03", ""},
		{m(NewCast(sv("12:34:56"), types.Type{Kind: types.KindTime})), "12:34:56", ""},
		{m(NewCast(lit(types.TimestampValue(-1)), types.Type{Kind: types.KindDate})), "1969-12-31", ""},
		{m(NewCast(sv("ab"), types.Type{Kind: types.KindBytes})), "x'6162'", ""},
		{m(NewCast(intLit(types.KindInt, 300), types.Type{Kind: types.KindTinyInt})), "", "300 does not fit in TINYINT"},
		{m(NewArith("+", intLit(types.KindSmallInt, 32767), intLit(types.KindTinyInt, 1))), "", "32767 + 1 does not fit in SMALLINT"},
		{m(NewArith("*", lit(types.FloatValue(0.1)), lit(types.FloatValue(3)))), "0.3", ""},
	}
	for i, c := range cases {
		got, err := c.e.Eval(nil)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%d %s: %v, %v; want error %q", i, c.e, got, err, c.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("%d %s = %v, %v; want %s", i, c.e, got, err, c.want)
		}
	}
}

func TestNumericFunctionsOnNewTypes(t *testing.T) {
	m := must(t)
	dec := func(s string, p, sc int) Expr {
		v, err := types.ParseDecimal(s, p, sc)
		if err != nil {
			t.Fatal(err)
		}
		return NewLiteral(v, types.Decimal(p, sc))
	}
	cases := []struct {
		e    Expr
		want string
	}{
		{m(NewCall("ABS", []Expr{dec("-12.50", 4, 2)})), "12.50"},
		{m(NewCall("FLOOR", []Expr{dec("-12.50", 4, 2)})), "-13.00"},
		{m(NewCall("CEIL", []Expr{dec("-12.50", 4, 2)})), "-12.00"},
		{m(NewCall("CEIL", []Expr{dec("12.01", 4, 2)})), "13.00"},
		{m(NewCall("FLOOR", []Expr{dec("12.00", 4, 2)})), "12.00"},
		{m(NewCall("ABS", []Expr{intLit(types.KindTinyInt, -5)})), "5"},
		{m(NewCall("ABS", []Expr{lit(types.FloatValue(-0.5))})), "0.5"},
		{m(NewCall("FLOOR", []Expr{lit(types.FloatValue(-0.5))})), "-1.0"},
	}
	for i, c := range cases {
		got, err := c.e.Eval(nil)
		if err != nil || got.String() != c.want || got.Kind() != c.e.Type().Kind {
			t.Errorf("%d %s = %v (%v), %v; want %s", i, c.e, got, got.Kind(), err, c.want)
		}
	}
}

// randDecimalText returns a random decimal number of at most p digits, s
// of them after the point (some of them 0 or at the limits).
func randDecimalText(r *rand.Rand, p, s int) string {
	n := 1 + r.IntN(p)
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := byte('0' + r.IntN(10))
		if r.IntN(8) == 0 {
			c = '9'
		}
		b.WriteByte(c)
	}
	d := b.String()
	for len(d) <= s {
		d = "0" + d
	}
	if s > 0 {
		d = d[:len(d)-s] + "." + d[len(d)-s:]
	}
	if r.IntN(2) == 0 {
		d = "-" + d
	}
	return d
}

// TestDecimalFastPathsAgainstBig checks comparisons of DECIMALs of mixed
// scales, CAST to BIGINT and INT and FLOOR/CEIL, whose int64 fast paths
// are exact, against math/big answers computed here.
func TestDecimalFastPathsAgainstBig(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	shapes := [][2]int{{18, 0}, {18, 3}, {18, 9}, {18, 18}, {3, 3}, {10, 2}, {19, 0}, {25, 5}, {38, 20}, {1, 0}}
	for iter := 0; iter < 5000; iter++ {
		ls, rs := shapes[r.IntN(len(shapes))], shapes[r.IntN(len(shapes))]
		ltext, rtext := randDecimalText(r, ls[0], ls[1]), randDecimalText(r, rs[0], rs[1])
		if r.IntN(10) == 0 { // equal values at different scales
			rtext = ltext
			rs = [2]int{min(ls[0]+rs[1], 38), ls[1] + min(rs[1], 38-ls[0])}
			rs[1] = max(rs[1], ls[1])
		}
		lv, err := types.ParseDecimal(ltext, ls[0], ls[1])
		if err != nil {
			t.Fatalf("parse %s: %v", ltext, err)
		}
		rv, err := types.ParseDecimal(rtext, rs[0], rs[1])
		if err != nil {
			t.Fatalf("parse %s as DECIMAL(%d, %d): %v", rtext, rs[0], rs[1], err)
		}
		a, _ := new(big.Rat).SetString(ltext)
		b, _ := new(big.Rat).SetString(rtext)
		if got, want := types.Compare(lv, rv), a.Cmp(b); got != want {
			t.Errorf("compare %s(%d,%d) with %s(%d,%d) = %d; want %d", ltext, ls[0], ls[1], rtext, rs[0], rs[1], got, want)
		}
		if got, want := types.Compare(rv, lv), b.Cmp(a); got != want {
			t.Errorf("compare %s with %s = %d; want %d", rtext, ltext, got, want)
		}
		lt := types.Decimal(ls[0], ls[1])
		trunc := new(big.Int).Quo(a.Num(), a.Denom()) // toward zero
		for _, k := range []types.Type{types.BigInt, types.Int} {
			got, err := CastTo(lv, k, nil)
			lo, hi := k.Kind.IntegerBounds()
			fits := trunc.IsInt64() && trunc.Int64() >= lo && trunc.Int64() <= hi
			switch {
			case !fits && !errors.Is(err, ErrOverflow):
				t.Errorf("CAST(%s AS %s) = %v, %v; want overflow", ltext, k.Kind, got, err)
			case fits && (err != nil || got.Int() != trunc.Int64()):
				t.Errorf("CAST(%s AS %s) = %v, %v; want %s", ltext, k.Kind, got, err, trunc)
			}
		}
		for _, fn := range []string{"FLOOR", "CEIL"} {
			e, err := NewCall(fn, []Expr{NewLiteral(lv, lt)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Eval(nil)
			w := new(big.Int).Set(trunc)
			if rem := new(big.Rat).Sub(a, new(big.Rat).SetInt(trunc)); fn == "FLOOR" && rem.Sign() < 0 {
				w.Sub(w, big.NewInt(1))
			} else if fn == "CEIL" && rem.Sign() > 0 {
				w.Add(w, big.NewInt(1))
			}
			wtext, _ := roundRat(new(big.Rat).SetInt(w), ls[1])
			if err != nil || got.String() != wtext {
				t.Errorf("%s(%s) = %v, %v; want %s", fn, ltext, got, err, wtext)
			}
		}
	}
}

// TestDecimalNoAllocation checks that the common DECIMAL operations on
// values of at most 18 digits allocate nothing per row: Nexmark's
// 0.908 * price compared with integer bounds, division, rescaling casts.
func TestDecimalNoAllocation(t *testing.T) {
	m := must(t)
	price := NewColumn(0, types.BigInt, "price")
	k, err := types.ParseDecimal("0.908", 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	conv := m(NewArith("*", NewLiteral(k, types.Decimal(3, 3)), price))
	exprs := []Expr{
		m(NewCompare(">", conv, intLit(types.KindInt, 1000000))),
		m(NewCompare("<", intLit(types.KindInt, 50000000), conv)),
		m(NewArith("/", conv, intLit(types.KindInt, 7))),
		m(NewArith("%", conv, intLit(types.KindInt, 7))),
		m(NewCast(conv, types.BigInt)),
		m(NewCast(conv, types.Decimal(10, 1))),
		m(NewCall("FLOOR", []Expr{conv})),
	}
	row := []types.Value{types.BigIntValue(12345)} // the quotient by 7 at scale 14 fits in 64 bits
	for _, e := range exprs {
		if _, err := e.Eval(row); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = e.Eval(row) }); n != 0 {
			t.Errorf("%s allocates %.1f times per row; want 0", e, n)
		}
	}
}
