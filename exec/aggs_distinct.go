package exec

import (
	"encoding/binary"
	"slices"

	"github.com/weir-sql/weir/state"
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
	seen  []state.CountTable
	other distinctAcc
}

func (a *intDistinctAcc) grow() {
	a.seen = append(a.seen, state.CountTable{})
	a.other.seen = append(a.other.seen, nil)
	a.inner.grow()
}

func (a *intDistinctAcc) reset(g int32) {
	a.seen[g] = state.CountTable{}
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
	if a.seen[g].Add(uint64(v.Int()), 1) {
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
	if a.seen[g].Sub(uint64(v.Int())) {
		a.inner.retract(g, v)
	}
}

func (a *intDistinctAcc) update(gis []int32, b *types.Batch, col int) {
	updateEach(a, gis, b, col)
}

func (a *intDistinctAcc) result(g int32) types.Value { return a.inner.result(g) }

func (a *intDistinctAcc) merge(dst, src int32) {
	a.seen[src].Range(func(k uint64, n int64) {
		if a.seen[dst].Add(k, n) {
			a.inner.add(dst, types.BigIntValue(int64(k)).WithKind(a.kind))
		}
	})
	a.other.merge(dst, src)
}

// save writes distinctAcc's encoding: the number of values, each value's
// key encoding (types.AppendKey) and count, then inner's state.
func (a *intDistinctAcc) save(g int32, dst []byte) []byte {
	m, o := &a.seen[g], a.other.seen[g]
	dst = binary.AppendUvarint(dst, uint64(m.Len()+len(o)))
	// An integer's key encoding is its kind and 8 bytes (types.AppendKey).
	dst = slices.Grow(dst, m.Len()*(2+8+2))
	var kb [16]byte
	m.Range(func(key uint64, n int64) {
		k := types.AppendKey(kb[:0], types.BigIntValue(int64(key)).WithKind(a.kind))
		dst = appendDistinctEntry(dst, k, n)
	})
	for k, c := range o {
		dst = appendDistinctEntry(dst, k, *c)
	}
	return a.inner.save(g, dst)
}

func (a *intDistinctAcc) load(g int32, src []byte) ([]byte, error) {
	var m state.CountTable
	var o map[string]*int64
	rest, err := eachDistinctEntry(src, func(kb []byte, v types.Value, c int64) error {
		if v.Kind() == a.kind {
			if c <= 0 || !m.Add(uint64(v.Int()), c) {
				return errBadState // a count must be positive, a value once
			}
			return nil
		}
		if o == nil {
			o = make(map[string]*int64)
		}
		o[string(kb)] = &c
		return nil
	})
	if err != nil {
		return nil, err
	}
	a.seen[g], a.other.seen[g] = m, o
	return a.inner.load(g, rest)
}
