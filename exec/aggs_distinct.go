package exec

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/weir-sql/weir/types"
)

// newDistinctAcc wraps inner so that it sees each distinct value of a
// group once: a set keyed by the integer itself for an integer argument
// (intDistinctAcc), by the value's key encoding otherwise (distinctAcc).
func newDistinctAcc(call AggCall, inner accumulator) accumulator {
	if call.ArgType.Kind.IsInteger() {
		return &intDistinctAcc{inner: inner, kind: call.ArgType.Kind, other: distinctAcc{inner: inner}}
	}
	return &distinctAcc{inner: inner}
}

// intDistinctAcc is DISTINCT over an integer column: per group, a map from
// the integer to its number of occurrences, with no key encoding or
// string hashing per row. A value of another kind than the column's (not
// expected, but kept apart as distinctAcc would) goes to other, which
// shares inner. Its state encoding is distinctAcc's, so a checkpoint of
// either restores into the other.
type intDistinctAcc struct {
	inner accumulator
	kind  types.Kind
	seen  []intCounts
	other distinctAcc
}

func (a *intDistinctAcc) grow() {
	a.seen = append(a.seen, intCounts{})
	a.other.seen = append(a.other.seen, nil)
	a.inner.grow()
}

func (a *intDistinctAcc) reset(g int32) {
	a.seen[g] = intCounts{}
	a.other.seen[g] = nil
	a.inner.reset(g)
}

func (a *intDistinctAcc) add(g int32, v types.Value) {
	switch v.Kind() {
	case types.KindNull:
		return
	case a.kind:
	default:
		a.other.add(g, v)
		return
	}
	if a.seen[g].add(uint64(v.Int()), 1) {
		a.inner.add(g, v)
	}
}

func (a *intDistinctAcc) retract(g int32, v types.Value) {
	switch v.Kind() {
	case types.KindNull:
		return
	case a.kind:
	default:
		a.other.retract(g, v)
		return
	}
	// A value never added has nothing to take away.
	if a.seen[g].sub(uint64(v.Int())) {
		a.inner.retract(g, v)
	}
}

func (a *intDistinctAcc) update(gis []int32, b *types.Batch, col int) {
	updateEach(a, gis, b, col)
}

func (a *intDistinctAcc) result(g int32) types.Value { return a.inner.result(g) }

func (a *intDistinctAcc) merge(dst, src int32) {
	for _, e := range a.seen[src].slots {
		if e.n != 0 && a.seen[dst].add(e.key, e.n) {
			a.inner.add(dst, types.BigIntValue(int64(e.key)).WithKind(a.kind))
		}
	}
	a.other.merge(dst, src)
}

// save writes distinctAcc's encoding: the number of values, each value's
// key encoding (types.AppendKey) and count, then inner's state.
func (a *intDistinctAcc) save(g int32, dst []byte) []byte {
	m, o := &a.seen[g], a.other.seen[g]
	dst = binary.AppendUvarint(dst, uint64(m.n+len(o)))
	// An integer's key encoding is its kind and 8 bytes (types.AppendKey).
	dst = slices.Grow(dst, m.n*(2+8+2))
	var kb [16]byte
	for _, e := range m.slots {
		if e.n == 0 {
			continue
		}
		k := types.AppendKey(kb[:0], types.BigIntValue(int64(e.key)).WithKind(a.kind))
		dst = appendDistinctEntry(dst, k, e.n)
	}
	for k, c := range o {
		dst = appendDistinctEntry(dst, k, *c)
	}
	return a.inner.save(g, dst)
}

func (a *intDistinctAcc) load(g int32, src []byte) ([]byte, error) {
	n, rest, err := readUvarint(src)
	if err != nil || n > uint64(len(rest)) {
		return nil, errBadState
	}
	var m intCounts
	var o map[string]*int64
	for range n {
		var kb []byte
		var c int64
		if kb, c, rest, err = readDistinctEntry(rest); err != nil {
			return nil, err
		}
		v, tail, err := types.DecodeKey(kb)
		if err != nil || len(tail) != 0 {
			return nil, errBadState
		}
		if v.Kind() == a.kind {
			if c <= 0 || !m.add(uint64(v.Int()), c) {
				return nil, errBadState // a count must be positive, a value once
			}
			continue
		}
		if o == nil {
			o = make(map[string]*int64)
		}
		o[string(kb)] = &c
	}
	a.seen[g], a.other.seen[g] = m, o
	return a.inner.load(g, rest)
}

// intCounts maps integers to positive counts: an open-addressing table
// with linear probing, at most half full, with backward-shift deletion;
// a slot holds key and count together, so a probe of a key not in cache
// costs one miss. The zero value is an empty table.
type intCounts struct {
	slots []intCount
	shift uint // 64 - log2(len(slots))
	n     int
}

type intCount struct {
	key uint64
	n   int64 // 0 marks an empty slot
}

const intCountsMinSlots = 8

// home returns the slot where k's probe starts: k mixed (so that keys
// differing in any bits spread), then its top bits.
func (t *intCounts) home(k uint64) int {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return int((k * 0x9e3779b97f4a7c15) >> t.shift)
}

// add adds c (> 0) to k's count and reports whether k was new.
func (t *intCounts) add(k uint64, c int64) bool {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		e := &t.slots[i]
		if e.n == 0 {
			*e = intCount{key: k, n: c}
			t.n++
			return true
		}
		if e.key == k {
			e.n += c
			return false
		}
	}
}

func (t *intCounts) grow() {
	old := t.slots
	size := max(2*len(old), intCountsMinSlots)
	t.slots = make([]intCount, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, e := range old {
		if e.n == 0 {
			continue
		}
		i := t.home(e.key)
		for t.slots[i].n != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = e
	}
}

// sub takes one from k's count and reports whether that removed k (its
// count reached 0); a key not present is left alone (false).
func (t *intCounts) sub(k uint64) bool {
	if t.n == 0 {
		return false
	}
	mask := len(t.slots) - 1
	i := t.home(k)
	for {
		e := &t.slots[i]
		if e.n == 0 {
			return false
		}
		if e.key == k {
			if e.n--; e.n > 0 {
				return false
			}
			break
		}
		i = (i + 1) & mask
	}
	t.n--
	// Move later entries of the run back into the hole unless their home
	// lies cyclically in (i, j].
	for j := (i + 1) & mask; t.slots[j].n != 0; j = (j + 1) & mask {
		h := t.home(t.slots[j].key)
		if (i < j && i < h && h <= j) || (i > j && (i < h || h <= j)) {
			continue
		}
		t.slots[i] = t.slots[j]
		i = j
	}
	t.slots[i] = intCount{}
	return true
}
