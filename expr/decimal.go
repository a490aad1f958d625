package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/weir-sql/weir/types"
)

// DecimalOf returns the DECIMAL type an exact numeric type converts to in
// DECIMAL arithmetic, as Flink: TINYINT DECIMAL(3, 0), SMALLINT (5, 0),
// INT (10, 0), BIGINT (19, 0), a DECIMAL itself.
func DecimalOf(t types.Type) (p, s int) {
	switch t.Kind {
	case types.KindTinyInt:
		return 3, 0
	case types.KindSmallInt:
		return 5, 0
	case types.KindInt:
		return 10, 0
	case types.KindBigInt:
		return 19, 0
	}
	return int(t.P), int(t.S)
}

// adjustDecimal caps a result precision at 38 as Flink does: the integer
// digits are kept and the scale shrinks, but not below min(s, 6).
func adjustDecimal(p, s int) types.Type {
	if p > types.MaxDecimalPrecision {
		intDigits := p - s
		s = max(types.MaxDecimalPrecision-intDigits, min(s, 6))
		p = types.MaxDecimalPrecision
	}
	return types.Decimal(p, s)
}

// DecimalResultType returns the type of l op r for DECIMAL operands (or a
// DECIMAL and an integer), by Flink's rules:
//
//   - -  s = max(s1, s2), p = max(p1-s1, p2-s2) + s + 1
//   - s = s1 + s2, p = p1 + p2
//     /    s = max(6, s1 + p2 + 1), p = p1 - s1 + s2 + s
//     %    s = max(s1, s2), p = min(p1-s1, p2-s2) + s
//
// each capped at precision 38 (see adjustDecimal).
func DecimalResultType(op byte, l, r types.Type) types.Type {
	p1, s1 := DecimalOf(l)
	p2, s2 := DecimalOf(r)
	switch op {
	case '+', '-':
		s := max(s1, s2)
		return adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
	case '*':
		return adjustDecimal(p1+p2, s1+s2)
	case '/':
		s := max(6, s1+p2+1)
		return adjustDecimal(p1-s1+s2+s, s)
	}
	s := max(s1, s2)
	return adjustDecimal(min(p1-s1, p2-s2)+s, s)
}

// MergeDecimal returns the DECIMAL both a and b convert to without loss
// (CASE, COALESCE, UNION): s = max(s1, s2), p = max(p1-s1, p2-s2) + s.
func MergeDecimal(a, b types.Type) types.Type {
	p1, s1 := DecimalOf(a)
	p2, s2 := DecimalOf(b)
	s := max(s1, s2)
	return adjustDecimal(max(p1-s1, p2-s2)+s, s)
}

// decimalOp computes l op r (DECIMALs or integers) exactly and returns it
// as a value of DECIMAL type t, rounded HALF_UP to t's scale; an error if
// it does not fit t's precision or divides by zero.
func decimalOp(op byte, l, r types.Value, t types.Type) (types.Value, error) {
	a, b := types.AsDecimal(l), types.AsDecimal(r)
	sa, sb, st := a.Scale(), b.Scale(), int(t.S)
	an, aok := a.Unscaled()
	bn, bok := b.Unscaled()
	if aok && bok {
		// Fast path: int64 arithmetic while nothing overflows.
		var n int64
		var sc int
		var err error
		switch op {
		case '+', '-':
			sc = max(sa, sb)
			x, ok1 := scaleUp(an, sc-sa)
			y, ok2 := scaleUp(bn, sc-sb)
			if ok1 && ok2 {
				n, err = intOp(op, x, y)
				if err == nil {
					return finishDecimal(types.DecimalValue(n, sc), t)
				}
			}
		case '*':
			sc = sa + sb
			n, err = intOp('*', an, bn)
			if err == nil && sc <= types.MaxDecimalPrecision {
				return finishDecimal(types.DecimalValue(n, sc), t)
			}
		case '/':
			if bn == 0 {
				return types.Value{}, ErrDivisionByZero
			}
			// x·10^-sa / (y·10^-sb) at scale st: x·10^(st+sb) / (y·10^sa).
			if q, ok := divScaled(an, st+sb, bn, sa); ok {
				return finishDecimal(types.DecimalValue(q, st), t)
			}
		case '%':
			if bn == 0 {
				return types.Value{}, ErrDivisionByZero
			}
			sc = max(sa, sb)
			x, ok1 := scaleUp(an, sc-sa)
			y, ok2 := scaleUp(bn, sc-sb)
			if ok1 && ok2 {
				if y == -1 {
					return finishDecimal(types.DecimalValue(0, sc), t)
				}
				return finishDecimal(types.DecimalValue(x%y, sc), t)
			}
		}
	}
	x, y := a.BigUnscaled(), b.BigUnscaled()
	var u *big.Int
	sc := st
	switch op {
	case '+', '-':
		sc = max(sa, sb)
		x.Mul(x, pow10Big(sc-sa))
		y.Mul(y, pow10Big(sc-sb))
		if op == '+' {
			u = x.Add(x, y)
		} else {
			u = x.Sub(x, y)
		}
	case '*':
		sc = sa + sb
		u = x.Mul(x, y)
	case '/':
		if y.Sign() == 0 {
			return types.Value{}, ErrDivisionByZero
		}
		// x·10^-sa / (y·10^-sb) at scale st: x·10^(st+sb) / (y·10^sa).
		x.Mul(x, pow10Big(st+sb))
		y.Mul(y, pow10Big(sa))
		u = types.DivRoundHalfUp(x, y)
	default: // %
		if y.Sign() == 0 {
			return types.Value{}, ErrDivisionByZero
		}
		sc = max(sa, sb)
		x.Mul(x, pow10Big(sc-sa))
		y.Mul(y, pow10Big(sc-sb))
		u = x.Rem(x, y) // the sign of the dividend, as Java
	}
	if sc != st {
		u = rescaleBigHalfUp(u, sc, st)
	}
	v, err := decimalFromBigChecked(u, t)
	if err != nil {
		return types.Value{}, err
	}
	return v, nil
}

// divScaled returns x·10^dx / (y·10^dy) rounded half away from zero,
// computed in 128 bits without allocating; ok is false when an operand or
// the quotient does not fit (the caller then uses math/big). y ≠ 0.
func divScaled(x int64, dx int, y int64, dy int) (int64, bool) {
	if dx > 18 || dy > 18 {
		return 0, false
	}
	mx, my := magnitude(x), magnitude(y)
	dhi, d := bits.Mul64(my, uint64(types.Pow10(dy)))
	if dhi != 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(mx, uint64(types.Pow10(dx)))
	if hi >= d {
		return 0, false // the quotient needs more than 64 bits
	}
	q, r := bits.Div64(hi, lo, d)
	if r >= d-r { // 2r ≥ d: round the magnitude up
		q++
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	if (x < 0) != (y < 0) {
		return -int64(q), true
	}
	return int64(q), true
}

func magnitude(n int64) uint64 {
	if n < 0 {
		return uint64(-n)
	}
	return uint64(n)
}

// finishDecimal rounds v to t's scale and checks t's precision.
func finishDecimal(v types.Value, t types.Type) (types.Value, error) {
	if v.Scale() != int(t.S) {
		var err error
		if v, err = types.Rescale(v, int(t.S)); err != nil {
			return types.Value{}, err
		}
	}
	return types.CheckDecimal(v, int(t.P))
}

func decimalFromBigChecked(u *big.Int, t types.Type) (types.Value, error) {
	if len(u.String()) > int(t.P)+1 || (u.Sign() >= 0 && len(u.String()) > int(t.P)) {
		return types.Value{}, fmt.Errorf("%w: %s does not fit in %s", ErrOverflow, bigDecimalText(u, int(t.S)), t.Name())
	}
	return types.DecimalFromBig(u, int(t.S))
}

func bigDecimalText(u *big.Int, s int) string {
	if v, err := types.DecimalFromBig(u, s); err == nil {
		return v.String()
	}
	return u.String() + "E-" + fmt.Sprint(s)
}

func pow10Big(n int) *big.Int {
	if n <= 18 {
		return big.NewInt(types.Pow10(n))
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

func rescaleBigHalfUp(u *big.Int, from, to int) *big.Int {
	if to >= from {
		return u.Mul(u, pow10Big(to-from))
	}
	return types.DivRoundHalfUp(u, pow10Big(from-to))
}

// scaleUp returns n·10^d if it fits in an int64.
func scaleUp(n int64, d int) (int64, bool) {
	if d == 0 {
		return n, true
	}
	if d > 18 {
		return 0, n == 0
	}
	m := types.Pow10(d)
	p := n * m
	return p, p/m == n
}

// negDecimal returns -v.
func negDecimal(v types.Value) (types.Value, error) {
	if n, ok := v.Unscaled(); ok && n != math.MinInt64 {
		return types.DecimalValue(-n, v.Scale()), nil
	}
	u := v.BigUnscaled()
	return types.DecimalFromBig(u.Neg(u), v.Scale())
}

// decimalFloorCeil returns v rounded down (or up, with ceil) to a whole
// number, at v's scale.
func decimalFloorCeil(v types.Value, ceil bool) (types.Value, error) {
	sc := v.Scale()
	if n, ok := v.Unscaled(); ok && sc <= 18 {
		m := types.Pow10(sc)
		q, r := n/m, n%m
		if r < 0 && !ceil {
			q--
		} else if r > 0 && ceil {
			q++
		}
		if p, ok := scaleUp(q, sc); ok {
			return types.DecimalValue(p, sc), nil
		}
	}
	u := v.BigUnscaled()
	m := pow10Big(sc)
	q, r := new(big.Int).QuoRem(u, m, new(big.Int))
	if r.Sign() < 0 && !ceil {
		q.Sub(q, big.NewInt(1))
	} else if r.Sign() > 0 && ceil {
		q.Add(q, big.NewInt(1))
	}
	return types.DecimalFromBig(q.Mul(q, m), sc)
}
