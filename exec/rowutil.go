package exec

import (
	"slices"

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
