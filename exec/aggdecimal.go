package exec

import (
	"encoding/binary"
	"math/big"
	"math/bits"

	"github.com/weir-sql/weir/types"
)

// decSumAcc is SUM or AVG of a DECIMAL: per group, the exact sum of the
// unscaled inputs (all of the argument's scale) as a 128-bit two's
// complement integer, which holds any sum of 38-digit values the result
// can show, and the count. A sum beyond DECIMAL(38, s) is NULL, as Flink
// gives for an overflowing DECIMAL SUM; AVG rounds HALF_UP to its scale.
type decSumAcc struct {
	typ      types.Type
	argScale int
	avg      bool
	s        []decSumState
}

type decSumState struct {
	lo, hi uint64 // the sum, 128-bit two's complement
	n      int64  // non-NULL inputs
}

func (a *decSumAcc) grow()         { a.s = append(a.s, decSumState{}) }
func (a *decSumAcc) reset(g int32) { a.s[g] = decSumState{} }

// unscaled128 returns DECIMAL v's unscaled integer as 128 bits.
func unscaled128(v *types.Value) (lo, hi uint64) {
	if n, ok := v.Unscaled(); ok {
		return uint64(n), uint64(n >> 63)
	}
	b := v.Str()
	return binary.BigEndian.Uint64([]byte(b[8:16])), binary.BigEndian.Uint64([]byte(b[:8]))
}

func (a *decSumAcc) apply(g int32, v *types.Value, retract bool) {
	if v.IsNull() {
		return
	}
	s := &a.s[g]
	lo, hi := unscaled128(v)
	var c uint64
	if retract {
		s.lo, c = bits.Sub64(s.lo, lo, 0)
		s.hi, _ = bits.Sub64(s.hi, hi, c)
		s.n--
		return
	}
	s.lo, c = bits.Add64(s.lo, lo, 0)
	s.hi, _ = bits.Add64(s.hi, hi, c)
	s.n++
}

// merge adds group src's sum and count into group dst (window slices).
func (a *decSumAcc) merge(dst, src int32) {
	d, s := &a.s[dst], a.s[src]
	var c uint64
	d.lo, c = bits.Add64(d.lo, s.lo, 0)
	d.hi, _ = bits.Add64(d.hi, s.hi, c)
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

func (s *decSumState) big() *big.Int {
	if s.hi == uint64(int64(s.lo)>>63) {
		return big.NewInt(int64(s.lo))
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], s.hi)
	binary.BigEndian.PutUint64(b[8:], s.lo)
	u := new(big.Int).SetBytes(b[:])
	if s.hi>>63 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	return u
}

func (a *decSumAcc) result(g int32) types.Value {
	s := &a.s[g]
	if s.n == 0 {
		return types.NullValue()
	}
	if !a.avg && s.hi == uint64(int64(s.lo)>>63) && int(a.typ.S) == a.argScale {
		return types.DecimalValue(int64(s.lo), a.argScale)
	}
	u := s.big()
	scale := a.argScale
	if a.avg {
		// sum·10^(S-argScale) / n, rounded HALF_UP.
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(int(a.typ.S)-a.argScale)), nil))
		u = types.DivRoundHalfUp(u, big.NewInt(s.n))
		scale = int(a.typ.S)
	}
	v, err := types.DecimalFromBig(u, scale)
	if err != nil || !types.DecimalFits(v, int(a.typ.P)) {
		return types.NullValue()
	}
	return v
}

// save writes the sum's two words and the count.
func (a *decSumAcc) save(g int32, dst []byte) []byte {
	s := &a.s[g]
	dst = binary.LittleEndian.AppendUint64(dst, s.lo)
	dst = binary.LittleEndian.AppendUint64(dst, s.hi)
	return binary.AppendVarint(dst, s.n)
}
func (a *decSumAcc) load(g int32, src []byte) (rest []byte, err error) {
	if len(src) < 16 {
		return nil, errBadState
	}
	s := &a.s[g]
	s.lo, s.hi = binary.LittleEndian.Uint64(src), binary.LittleEndian.Uint64(src[8:])
	s.n, rest, err = readVarint(src[16:])
	return rest, err
}
