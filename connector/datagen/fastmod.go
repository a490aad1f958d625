package datagen

import "math/bits"

// fastMod computes h mod d for a fixed d without a division instruction
// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019,
// with a 128-bit fraction, exact for every 64-bit h): the generator maps
// every random value onto its column's range this way, and a 64-bit
// division costs more than the rest of the value.
type fastMod struct {
	d      uint64
	mHi    uint64 // m = floor((2^128-1)/d) + 1, high and low halves
	mLo    uint64
	full   bool // d is 2^64 (the full range): h mod d is h
	divide bool // d is 1: use the plain remainder (m would overflow)
}

// newFastMod prepares reductions modulo span; span 0 stands for 2^64.
func newFastMod(span uint64) fastMod {
	switch span {
	case 0:
		return fastMod{full: true}
	case 1:
		return fastMod{d: 1, divide: true}
	}
	qHi := ^uint64(0) / span
	r := ^uint64(0) % span
	qLo, _ := bits.Div64(r, ^uint64(0), span)
	lo, carry := bits.Add64(qLo, 1, 0)
	return fastMod{d: span, mHi: qHi + carry, mLo: lo}
}

// reduce returns h mod d.
func (f *fastMod) reduce(h uint64) uint64 {
	if f.full {
		return h
	}
	if f.divide {
		return h % f.d
	}
	// low = m*h mod 2^128
	hi, lowLo := bits.Mul64(f.mLo, h)
	lowHi := hi + f.mHi*h
	// (low * d) >> 128
	p1Hi, _ := bits.Mul64(lowLo, f.d)
	p2Hi, p2Lo := bits.Mul64(lowHi, f.d)
	_, carry := bits.Add64(p1Hi, p2Lo, 0)
	return p2Hi + carry
}
