package exec

import (
	"encoding/binary"

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
	seen  []map[uint64]int64
	other distinctAcc
}

func (a *intDistinctAcc) grow() {
	a.seen = append(a.seen, nil)
	a.other.seen = append(a.other.seen, nil)
	a.inner.grow()
}

func (a *intDistinctAcc) reset(g int32) {
	a.seen[g] = nil
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
	m := a.seen[g]
	if m == nil {
		m = make(map[uint64]int64)
		a.seen[g] = m
	}
	k := uint64(v.Int())
	c := m[k]
	m[k] = c + 1
	if c == 0 {
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
	m := a.seen[g]
	k := uint64(v.Int())
	c, ok := m[k]
	if !ok {
		return // retracting a value never added: nothing to take away
	}
	if c > 1 {
		m[k] = c - 1
		return
	}
	delete(m, k)
	a.inner.retract(g, v)
}

func (a *intDistinctAcc) update(gis []int32, b *types.Batch, col int) {
	for i, g := range gis {
		if g < 0 {
			continue
		}
		v := b.Vals[i*b.Width+col]
		if b.Kinds[i].IsRetraction() {
			a.retract(g, v)
		} else {
			a.add(g, v)
		}
	}
}

func (a *intDistinctAcc) result(g int32) types.Value { return a.inner.result(g) }

func (a *intDistinctAcc) merge(dst, src int32) {
	for k, c := range a.seen[src] {
		m := a.seen[dst]
		if m == nil {
			m = make(map[uint64]int64)
			a.seen[dst] = m
		}
		d := m[k]
		m[k] = d + c
		if d == 0 {
			a.inner.add(dst, types.BigIntValue(int64(k)).WithKind(a.kind))
		}
	}
	a.other.merge(dst, src)
}

// save writes distinctAcc's encoding: the number of values, each value's
// key encoding (types.AppendKey) and count, then inner's state.
func (a *intDistinctAcc) save(g int32, dst []byte) []byte {
	m, o := a.seen[g], a.other.seen[g]
	dst = binary.AppendUvarint(dst, uint64(len(m)+len(o)))
	var key [16]byte
	for k, c := range m {
		kb := types.AppendKey(key[:0], types.BigIntValue(int64(k)).WithKind(a.kind))
		dst = binary.AppendUvarint(dst, uint64(len(kb)))
		dst = append(dst, kb...)
		dst = binary.AppendVarint(dst, c)
	}
	for k, c := range o {
		dst = binary.AppendUvarint(dst, uint64(len(k)))
		dst = append(dst, k...)
		dst = binary.AppendVarint(dst, *c)
	}
	return a.inner.save(g, dst)
}

func (a *intDistinctAcc) load(g int32, src []byte) ([]byte, error) {
	n, rest, err := readUvarint(src)
	if err != nil || n > uint64(len(rest)) {
		return nil, errBadState
	}
	m := make(map[uint64]int64, n)
	var o map[string]*int64
	for range n {
		var l uint64
		if l, rest, err = readUvarint(rest); err != nil || l > uint64(len(rest)) {
			return nil, errBadState
		}
		kb := rest[:l]
		rest = rest[l:]
		var c int64
		if c, rest, err = readVarint(rest); err != nil {
			return nil, err
		}
		v, tail, err := types.DecodeKey(kb)
		if err != nil || len(tail) != 0 {
			return nil, errBadState
		}
		if v.Kind() == a.kind {
			m[uint64(v.Int())] = c
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
