package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// MaxDecimalPrecision is the largest precision of DECIMAL(p, s), as in Flink.
const MaxDecimalPrecision = 38

// ErrDecimalOverflow reports a DECIMAL value with more digits than its
// precision allows.
var ErrDecimalOverflow = errors.New("numeric overflow")

// A DECIMAL value is its unscaled integer and its scale (value = unscaled ×
// 10^-scale). The unscaled integer is kept in n when it fits in an int64
// (every DECIMAL(p, s) with p ≤ 18, and most values of wider ones), which
// needs no allocation; otherwise in s as 16 bytes of big-endian two's
// complement (p ≤ 38 always fits in 128 bits). The form is canonical: a
// value that fits in an int64 is always in n, so equal values of one scale
// have equal fields.

var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// Pow10 returns 10^n for 0 ≤ n ≤ 18.
func Pow10(n int) int64 { return pow10[n] }

// DecimalValue returns the DECIMAL value unscaled × 10^-scale.
func DecimalValue(unscaled int64, scale int) Value {
	return Value{k: KindDecimal, n: uint64(unscaled), x: uint8(scale)}
}

// DecimalFromBig returns the DECIMAL value u × 10^-scale, or an error if u
// has more than 38 digits.
func DecimalFromBig(u *big.Int, scale int) (Value, error) {
	if u.IsInt64() {
		return DecimalValue(u.Int64(), scale), nil
	}
	if decimalDigits(u) > MaxDecimalPrecision {
		return Value{}, fmt.Errorf("%w: %s does not fit in DECIMAL(38, %d)", ErrDecimalOverflow, decimalText(u, scale), scale)
	}
	var b [16]byte
	mag := new(big.Int).Abs(u).FillBytes(b[:])
	if u.Sign() < 0 { // two's complement
		for i := range mag {
			mag[i] = ^mag[i]
		}
		for i := len(mag) - 1; i >= 0; i-- {
			mag[i]++
			if mag[i] != 0 {
				break
			}
		}
	}
	return Value{k: KindDecimal, s: string(mag), x: uint8(scale)}, nil
}

// DecimalFrom128 returns the DECIMAL value whose unscaled integer is the
// 128-bit two's complement hi·2^64 + lo, × 10^-scale; the caller checks
// its precision. Only a value beyond an int64 allocates (its 16 bytes).
func DecimalFrom128(hi, lo uint64, scale int) Value {
	if hi == uint64(int64(lo)>>63) {
		return DecimalValue(int64(lo), scale)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return Value{k: KindDecimal, s: string(b[:]), x: uint8(scale)}
}

// Scale returns a DECIMAL value's scale.
func (v Value) Scale() int { return int(v.x) }

// Unscaled returns a DECIMAL value's unscaled integer if it fits in an
// int64 (ok false otherwise: use BigUnscaled).
func (v Value) Unscaled() (n int64, ok bool) { return int64(v.n), v.s == "" }

// BigUnscaled returns a DECIMAL value's unscaled integer as a new big.Int.
func (v Value) BigUnscaled() *big.Int {
	if v.s == "" {
		return big.NewInt(int64(v.n))
	}
	b := []byte(v.s)
	neg := b[0]&0x80 != 0
	if neg {
		for i := range b {
			b[i] = ^b[i]
		}
	}
	u := new(big.Int).SetBytes(b)
	if neg {
		u.Add(u, big.NewInt(1))
		u.Neg(u)
	}
	return u
}

func decimalDigits(u *big.Int) int {
	s := u.String()
	if s[0] == '-' {
		return len(s) - 1
	}
	return len(s)
}

// DecimalFits reports whether v has at most p digits (p - scale before
// the point); v has the scale of its type.
func DecimalFits(v Value, p int) bool {
	if n, ok := v.Unscaled(); ok {
		if p >= 19 {
			return true
		}
		if n < 0 {
			n = -n // MinInt64 has 19 digits and stays negative: p < 19 fails below
		}
		return n >= 0 && n < pow10[p]
	}
	return decimalDigits(v.BigUnscaled()) <= p
}

// CheckDecimal returns v if it fits DECIMAL(p, s) (v has scale s), else
// an error wrapping ErrDecimalOverflow.
func CheckDecimal(v Value, p int) (Value, error) {
	if DecimalFits(v, p) {
		return v, nil
	}
	return Value{}, fmt.Errorf("%w: %s does not fit in DECIMAL(%d, %d)", ErrDecimalOverflow, v.String(), p, v.Scale())
}

// Rescale returns DECIMAL v with scale s, rounding half away from zero
// (Java's HALF_UP, as Flink) when digits are dropped.
func Rescale(v Value, s int) (Value, error) {
	from := v.Scale()
	if from == s {
		return v, nil
	}
	if n, ok := v.Unscaled(); ok {
		switch d := s - from; {
		case d > 0 && d <= 18:
			m := pow10[d]
			if p := n * m; p/m == n {
				return DecimalValue(p, s), nil
			}
		case d < 0 && -d <= 18:
			m := pow10[-d]
			q, r := n/m, n%m
			if r >= (m+1)/2 {
				q++
			} else if -r >= (m+1)/2 {
				q--
			}
			return DecimalValue(q, s), nil
		case d < 0:
			return DecimalValue(0, s), nil
		}
	}
	return DecimalFromBig(rescaleBig(v.BigUnscaled(), from, s), s)
}

func bigPow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// rescaleBig returns u (of scale from) at scale to, rounded HALF_UP.
func rescaleBig(u *big.Int, from, to int) *big.Int {
	if to >= from {
		return u.Mul(u, bigPow10(to-from))
	}
	return DivRoundHalfUp(u, bigPow10(from-to))
}

// DivRoundHalfUp returns x / y rounded half away from zero (a new big.Int).
func DivRoundHalfUp(x, y *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(x, y, new(big.Int))
	r2 := r.Abs(r)
	r2.Lsh(r2, 1)
	if r2.CmpAbs(y) >= 0 {
		if (x.Sign() < 0) != (y.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// DecimalFloat returns a DECIMAL value as the nearest float64.
func (v Value) decimalFloat() float64 {
	if n, ok := v.Unscaled(); ok {
		if v.x <= 18 {
			return float64(n) / float64(pow10[v.x])
		}
	}
	f, _ := strconv.ParseFloat(v.String(), 64)
	return f
}

// DecimalFromFloat returns f as DECIMAL(p, s), rounded HALF_UP, or an
// error if it does not fit (or is NaN or infinite).
func DecimalFromFloat(f float64, p, s int) (Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, fmt.Errorf("%w: %s does not fit in DECIMAL(%d, %d)", ErrDecimalOverflow, AppendDouble(nil, f), p, s)
	}
	return ParseDecimal(strconv.FormatFloat(f, 'f', -1, 64), p, s)
}

// ParseDecimal parses a decimal number ("-12.345", "1e3", " 7 ") as
// DECIMAL(p, s), rounding HALF_UP to s digits after the point; an error if
// the text is not a number or the value does not fit.
func ParseDecimal(text string, p, s int) (Value, error) {
	t := strings.TrimSpace(text)
	r, ok := new(big.Rat).SetString(t)
	if !ok || t == "" || strings.ContainsAny(t, "/xXpP_") {
		return Value{}, fmt.Errorf("cannot parse '%s' as DECIMAL(%d, %d)", text, p, s)
	}
	num := new(big.Int).Mul(r.Num(), bigPow10(s))
	u := DivRoundHalfUp(num, r.Denom())
	if decimalDigits(u) > MaxDecimalPrecision {
		return Value{}, fmt.Errorf("%w: %s does not fit in DECIMAL(%d, %d)", ErrDecimalOverflow, t, p, s)
	}
	v, err := DecimalFromBig(u, s)
	if err != nil {
		return Value{}, err
	}
	if !DecimalFits(v, p) {
		return Value{}, fmt.Errorf("%w: %s does not fit in DECIMAL(%d, %d)", ErrDecimalOverflow, t, p, s)
	}
	return v, nil
}

// ParseDecimalBytes is ParseDecimal for text in a byte slice. Plain
// numbers ("-12.5") of at most 18 digits that need no rounding are parsed
// without allocating.
func ParseDecimalBytes(b []byte, p, s int) (Value, error) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	var n int64
	digits, frac, dot, ok, any := 0, 0, false, i < len(b), false
	for ; ok && i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			any = true
			if n != 0 || c != '0' {
				digits++
			}
			if dot {
				frac++
			}
			n = n*10 + int64(c-'0')
		case c == '.' && !dot:
			dot = true
		default:
			ok = false
		}
	}
	if ok && any && digits <= 18 && frac <= s && s-frac <= 18 {
		m := pow10[s-frac]
		if u := n * m; u/m == n {
			if neg {
				u = -u
			}
			v := DecimalValue(u, s)
			if DecimalFits(v, p) {
				return v, nil
			}
			return Value{}, fmt.Errorf("%w: %s does not fit in DECIMAL(%d, %d)", ErrDecimalOverflow, b, p, s)
		}
	}
	return ParseDecimal(string(b), p, s)
}

// appendDecimal appends a DECIMAL value with exactly its scale's digits
// after the point, as Flink prints it ("-0.050" for -5 at scale 3).
func appendDecimal(dst []byte, v Value) []byte {
	var digits []byte
	var tmp [24]byte
	neg := false
	if n, ok := v.Unscaled(); ok {
		if n < 0 {
			neg = true
			digits = strconv.AppendUint(tmp[:0], uint64(-n), 10) // -MinInt64 wraps to its magnitude
		} else {
			digits = strconv.AppendUint(tmp[:0], uint64(n), 10)
		}
	} else {
		u := v.BigUnscaled()
		neg = u.Sign() < 0
		digits = u.Abs(u).Append(nil, 10)
	}
	if neg {
		dst = append(dst, '-')
	}
	sc := int(v.x)
	if sc == 0 {
		return append(dst, digits...)
	}
	if len(digits) <= sc {
		dst = append(dst, '0', '.')
		for i := len(digits); i < sc; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-sc]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-sc:]...)
}

func decimalText(u *big.Int, scale int) string {
	v := Value{k: KindDecimal, x: uint8(scale)}
	if u.IsInt64() {
		v.n = uint64(u.Int64())
		return string(appendDecimal(nil, v))
	}
	s := new(big.Int).Abs(u).String()
	neg := u.Sign() < 0
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	if scale > 0 {
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// compareDecimal compares two DECIMAL values (of any scales).
func compareDecimal(a, b Value) int {
	an, aok := a.Unscaled()
	bn, bok := b.Unscaled()
	if aok && bok {
		switch {
		case a.x == b.x:
			return cmpInt64(an, bn)
		case a.x < b.x:
			return compareScaled(an, int(b.x-a.x), bn)
		default:
			return -compareScaled(bn, int(a.x-b.x), an)
		}
	}
	x, y := a.BigUnscaled(), b.BigUnscaled()
	if a.x < b.x {
		x.Mul(x, bigPow10(int(b.x-a.x)))
	} else if b.x < a.x {
		y.Mul(y, bigPow10(int(a.x-b.x)))
	}
	return x.Cmp(y)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareScaled compares a·10^d with b (d > 0) without allocating: the
// product of the magnitudes is formed in 128 bits.
func compareScaled(a int64, d int, b int64) int {
	if (a < 0) != (b < 0) || a == 0 {
		return cmpInt64(a, b)
	}
	// a and b have one sign and a ≠ 0: compare |a|·10^d with |b|.
	ma, mb := magnitude(a), magnitude(b)
	c := 1 // |a|·10^d ≥ 10^19 > |b| when d > 18
	if d <= 18 {
		hi, lo := bits.Mul64(ma, uint64(pow10[d]))
		switch {
		case hi != 0 || lo > mb:
			c = 1
		case lo < mb:
			c = -1
		default:
			c = 0
		}
	}
	if a < 0 {
		return -c
	}
	return c
}

// magnitude returns |n| (MinInt64's magnitude as uint64).
func magnitude(n int64) uint64 {
	if n < 0 {
		return uint64(-n)
	}
	return uint64(n)
}

// AsDecimal returns an integer value (TINYINT to BIGINT) or a DECIMAL as a
// DECIMAL value (integers at scale 0).
func AsDecimal(v Value) Value {
	if v.k == KindDecimal {
		return v
	}
	return DecimalValue(int64(v.n), 0)
}
