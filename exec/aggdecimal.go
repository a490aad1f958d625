package exec

import (
	"encoding/binary"
	"math/big"
	"math/bits"

	"github.com/weir-sql/weir/types"
)

// decSumAcc is SUM or AVG of a DECIMAL: per group, the exact sum of the
// unscaled inputs (all of the argument's scale) as a 192-bit two's
// complement integer, and the count. An input has at most 38 digits (less
// than 2^127), so the sum of fewer than 2^64 adds and retracts is below
// 2^191 and never wraps: the sum is exact whatever the order of the rows,
// and one that went past 38 digits is exact again when retractions bring
// it back. A SUM whose value does not fit DECIMAL(38, s), or an AVG whose
// mean does not fit its type, is NULL (Flink's DecimalData is NULL when a
// value overflows its precision); AVG rounds HALF_UP to its scale.
type decSumAcc struct {
	typ      types.Type
	argScale int
	avg      bool
	s        []decSumState
}

// decSumState is one group's sum and count. The sum is lo (bits 0-63), hi
// (64-127) and top (128-191); while it fits in 128 bits, top is hi's sign
// bit repeated, and the adds cost one more carry than a 128-bit sum.
type decSumState struct {
	lo, hi, top uint64
	n           int64 // non-NULL inputs
}

func (a *decSumAcc) grow()         { a.s = append(a.s, decSumState{}) }
func (a *decSumAcc) reset(g int32) { a.s[g] = decSumState{} }

// signWord returns w's sign bit repeated over 64 bits.
func signWord(w uint64) uint64 { return uint64(int64(w) >> 63) }

// unscaled128 returns DECIMAL v's unscaled integer as 128 bits.
func unscaled128(v *types.Value) (lo, hi uint64) {
	if n, ok := v.Unscaled(); ok {
		return uint64(n), uint64(n >> 63)
	}
	b := v.Str()
	return binary.BigEndian.Uint64([]byte(b[8:16])), binary.BigEndian.Uint64([]byte(b[:8]))
}

// add192 adds the 192-bit (lo, hi, top) into s.
func (s *decSumState) add192(lo, hi, top uint64) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, lo, 0)
	s.hi, c = bits.Add64(s.hi, hi, c)
	s.top, _ = bits.Add64(s.top, top, c)
}

// sub192 subtracts the 192-bit (lo, hi, top) from s.
func (s *decSumState) sub192(lo, hi, top uint64) {
	var b uint64
	s.lo, b = bits.Sub64(s.lo, lo, 0)
	s.hi, b = bits.Sub64(s.hi, hi, b)
	s.top, _ = bits.Sub64(s.top, top, b)
}

func (a *decSumAcc) apply(g int32, v *types.Value, retract bool) {
	if v.IsNull() {
		return
	}
	s := &a.s[g]
	lo, hi := unscaled128(v)
	if retract {
		s.sub192(lo, hi, signWord(hi))
		s.n--
		return
	}
	s.add192(lo, hi, signWord(hi))
	s.n++
}

// merge adds group src's sum and count into group dst (window slices).
func (a *decSumAcc) merge(dst, src int32) {
	d, s := &a.s[dst], &a.s[src]
	d.add192(s.lo, s.hi, s.top)
	d.n += s.n
}

func (a *decSumAcc) add(g int32, v types.Value)     { a.apply(g, &v, false) }
func (a *decSumAcc) retract(g int32, v types.Value) { a.apply(g, &v, true) }
func (a *decSumAcc) update(gis []int32, b *types.Batch, col int) {
	for i, g := range gis {
		if g >= 0 {
			a.apply(g, &b.Vals[i*b.Width+col], b.Kinds[i].IsRetraction())
		}
	}
}

// fits128 reports whether the sum fits in 128 bits (then |sum| < 2^127).
func (s *decSumState) fits128() bool { return s.top == signWord(s.hi) }

// fits64 reports whether the sum fits in an int64.
func (s *decSumState) fits64() bool { return s.fits128() && s.hi == signWord(s.lo) }

// big returns the sum as a new big.Int.
func (s *decSumState) big() *big.Int {
	if s.fits64() {
		return big.NewInt(int64(s.lo))
	}
	var b [24]byte
	binary.BigEndian.PutUint64(b[:8], s.top)
	binary.BigEndian.PutUint64(b[8:16], s.hi)
	binary.BigEndian.PutUint64(b[16:], s.lo)
	u := new(big.Int).SetBytes(b[:])
	if s.top>>63 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), 192))
	}
	return u
}

func (a *decSumAcc) result(g int32) types.Value {
	s := &a.s[g]
	if s.n == 0 {
		return types.NullValue()
	}
	if !a.avg && !s.fits128() {
		return types.NullValue() // |sum| ≥ 2^127 > 10^38: beyond 38 digits
	}
	// SUM keeps its argument's scale (d = 0); AVG divides at the result's.
	n, d := int64(1), 0
	if a.avg {
		n, d = s.n, int(a.typ.S)-a.argScale
	}
	if s.fits128() && n > 0 && d >= 0 && d < len(pow10x128) {
		return a.result128(s, d, uint64(n))
	}
	// A sum past 128 bits (AVG), or a count or scales no planned call has.
	u := s.big()
	scale := a.argScale
	if a.avg {
		// sum·10^(S-argScale) / n, rounded HALF_UP.
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil))
		u = types.DivRoundHalfUp(u, big.NewInt(s.n))
		scale = int(a.typ.S)
	}
	v, err := types.DecimalFromBig(u, scale)
	if err != nil || !types.DecimalFits(v, int(a.typ.P)) {
		return types.NullValue()
	}
	return v
}

// pow10x128 is 10^i as 128 bits (hi, lo), for i ≤ 38.
var pow10x128 = func() (p [39][2]uint64) {
	p[0][1] = 1
	for i := 1; i < len(p); i++ {
		h, l := bits.Mul64(p[i-1][1], 10)
		p[i] = [2]uint64{p[i-1][0]*10 + h, l}
	}
	return p
}()

// result128 is the result of a sum that fits in 128 bits, in 256-bit
// integer arithmetic, without allocating unless the result's unscaled
// value needs the wide form: |sum|·10^d / n rounded half away from zero
// (AVG; SUM has n = 1), NULL when it has more digits than the type's
// precision.
func (a *decSumAcc) result128(s *decSumState, d int, n uint64) types.Value {
	// The magnitude (|sum| ≤ 2^127).
	lo, hi := s.lo, s.hi
	neg := int64(hi) < 0
	if neg {
		var b uint64
		lo, b = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, b)
	}
	// Times 10^d (< 2^127): a 256-bit product w3..w0.
	w0, w1, w2, w3 := lo, hi, uint64(0), uint64(0)
	if d > 0 {
		ph, pl := pow10x128[d][0], pow10x128[d][1]
		h00, l00 := bits.Mul64(lo, pl)
		h01, l01 := bits.Mul64(lo, ph)
		h10, l10 := bits.Mul64(hi, pl)
		h11, l11 := bits.Mul64(hi, ph)
		var c1, c2 uint64
		w0 = l00
		w1, c1 = bits.Add64(h00, l01, 0)
		w1, c2 = bits.Add64(w1, l10, 0)
		w2, c1 = bits.Add64(h01, h10, c1)
		w3 = h11 + c1
		w2, c1 = bits.Add64(w2, l11, c2)
		w3 += c1
	}
	// Divided by n, word by word from the top (each remainder < n).
	var r uint64
	if n > 1 {
		w3, r = w3/n, w3%n
		w2, r = bits.Div64(r, w2, n)
		w1, r = bits.Div64(r, w1, n)
		w0, r = bits.Div64(r, w0, n)
		if r >= n-r { // 2r ≥ n: half or more rounds away from zero
			var c uint64
			w0, c = bits.Add64(w0, 1, 0)
			w1, c = bits.Add64(w1, 0, c)
			w2, c = bits.Add64(w2, 0, c)
			w3 += c
		}
	}
	// At most P digits: below 10^P (then below 2^127).
	p := pow10x128[min(int(a.typ.P), len(pow10x128)-1)]
	if w3 != 0 || w2 != 0 || w1 > p[0] || (w1 == p[0] && w0 >= p[1]) {
		return types.NullValue()
	}
	scale := a.argScale
	if a.avg {
		scale = int(a.typ.S)
	}
	if neg {
		var b uint64
		w0, b = bits.Sub64(0, w0, 0)
		w1, _ = bits.Sub64(0, w1, b)
	}
	return types.DecimalFrom128(w1, w0, scale)
}

// The stored state of a group: the sum's low 128 bits as two
// little-endian words (lo, hi), then, only when the sum does not fit in
// 128 bits, the wide mark and top as a varint, then the count as a varint.
// The mark is a varint zero written in two bytes, which AppendVarint
// never writes, so a count cannot begin with it: the states written before
// the sum had 192 bits (lo, hi, count: top was implied by hi) read the
// same, and a sum that fits in 128 bits is still written that way.
const (
	decWideMark0 = 0x80
	decWideMark1 = 0x00
)

// save writes group g's sum and count (see decWideMark0).
func (a *decSumAcc) save(g int32, dst []byte) []byte {
	s := &a.s[g]
	dst = binary.LittleEndian.AppendUint64(dst, s.lo)
	dst = binary.LittleEndian.AppendUint64(dst, s.hi)
	if !s.fits128() {
		dst = append(dst, decWideMark0, decWideMark1)
		dst = binary.AppendVarint(dst, int64(s.top))
	}
	return binary.AppendVarint(dst, s.n)
}

// load reads a state written by save, of either layout.
func (a *decSumAcc) load(g int32, src []byte) (rest []byte, err error) {
	if len(src) < 16 {
		return nil, errBadState
	}
	var st decSumState
	st.lo, st.hi = binary.LittleEndian.Uint64(src), binary.LittleEndian.Uint64(src[8:])
	st.top = signWord(st.hi)
	rest = src[16:]
	if len(rest) >= 2 && rest[0] == decWideMark0 && rest[1] == decWideMark1 {
		var top int64
		if top, rest, err = readVarint(rest[2:]); err != nil {
			return nil, err
		}
		st.top = uint64(top)
	}
	if st.n, rest, err = readVarint(rest); err != nil {
		return nil, err
	}
	a.s[g] = st
	return rest, nil
}
