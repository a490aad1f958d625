package exec

import (
	"slices"
	"unsafe"

	"github.com/weir-sql/weir/types"
)

// growRow appends a row of kind to b and returns its values for the caller
// to overwrite entirely (they are not cleared). The common case, with room
// in b, is small enough to be inlined.
func growRow(b *types.Batch, kind types.RowKind) []types.Value {
	n, k, w := len(b.Vals), len(b.Kinds), b.Width
	if cap(b.Vals)-n < w || cap(b.Kinds) == k {
		return growRowSlow(b, kind)
	}
	b.Kinds = b.Kinds[:k+1]
	b.Kinds[k] = kind
	b.Vals = b.Vals[:n+w]
	return b.Vals[n : n+w : n+w]
}

//go:noinline
func growRowSlow(b *types.Batch, kind types.RowKind) []types.Value {
	b.Kinds = append(b.Kinds, kind)
	n := len(b.Vals)
	b.Vals = slices.Grow(b.Vals, b.Width)[:n+b.Width]
	return b.Vals[n:]
}

// appendRow appends a copy of row to b. For the short rows of a batch an
// element loop is cheaper than a bulk copy call.
func appendRow(b *types.Batch, kind types.RowKind, row []types.Value) {
	dst := growRow(b, kind)
	for i := range dst {
		dst[i] = row[i]
	}
}

// identityHash hashes the identity of row's values in columns keys: kind,
// number and a string's address and length, not its bytes (a row from
// another task has its strings out of the CPU cache, while rows of one key
// mostly share the strings of a source's table or a formatting memo). Equal
// strings at other addresses hash apart: it picks an entry of a memo whose
// hits are confirmed with types.Identical.
func identityHash(row []types.Value, keys []int) uint64 {
	h := uint64(len(keys))
	for _, k := range keys {
		v := &row[k]
		s := v.Str()
		x := uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))) ^ uint64(len(s))<<48
		h = (h ^ x ^ uint64(v.Int()) ^ uint64(v.Kind())<<56) * 0x9E3779B97F4A7C15
		h ^= h >> 29
	}
	return h
}
