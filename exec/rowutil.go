package exec

import (
	"math/bits"
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

// The xxhash64 primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// hashIntKey returns types.HashKey(types.AppendKey(nil, v)) for a value v of
// an int-stored kind (see intStored) without encoding it: AppendKey writes
// 9 bytes, the kind then n little-endian, and this is xxhash64 (seed 0)
// specialised to that input. TestHashIntKey checks the equality.
func hashIntKey(kind types.Kind, n uint64) uint64 {
	h := prime5 + 9
	lane := uint64(kind) | n<<8
	k1 := bits.RotateLeft64(lane*prime2, 31) * prime1
	h ^= k1
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	h ^= (n >> 56) * prime5
	h = bits.RotateLeft64(h, 11) * prime1
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}
