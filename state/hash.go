package state

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/weir-sql/weir/types"
)

// KeyLayout is the version of the key hashing and storage layout this
// package writes, recorded in a checkpoint's _metadata. Layout 1 (round
// one, and checkpoints without the field) is the GroupAggregate's own:
// key groups by types.HashKey over types.AppendKey and keys
// op | key group | key | state name | len(state name). Layout 2 is this
// package's: key groups by KeyGroup over the order-preserving encoding and
// keys op | key group | len(state name) | state name | key (see
// MigrateLayout1). Layout 3 is layout 2 with records that a build of
// layout 2 does not know and would silently skip: a regular join's blind
// writes (deltas under a side's name + DeltaSuffix, DeltaSource) and
// COUNT(DISTINCT) values as records of their own. A build of layout 2
// refuses a checkpoint of layout 3 (one it can neither read as it is nor
// migrate) with an error that names the layouts, instead of losing those
// records; this build reads layouts 2 and 3 as they are (ReadsLayout).
const KeyLayout = 3

// ReadsLayout reports whether this build restores state written in key
// layout l as it is stored (layout 1 is migrated: MigrateLayout1; a later
// layout is refused).
func ReadsLayout(l int) bool { return l == 2 || l == KeyLayout }

// The xxhash64 primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// HashKey is the hash whose remainder is KeyGroup: xxhash64 of an encoded
// key.
func HashKey(key []byte) uint64 { return xxhash.Sum64(key) }

// intTags is the encoding's tag of each kind stored as a 64-bit integer
// (0 for the other kinds), so that HashIntKey stays small enough to inline.
var intTags = [256]uint8{
	types.KindInt:          tagInt,
	types.KindBigInt:       tagInt,
	types.KindTimestamp:    tagTimestamp,
	types.KindTimestampLTZ: tagTimestamp,
	types.KindInterval:     tagInterval,
}

// HashIntKey returns HashKey(AppendValue(nil, v)) for a value v of kind
// INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ or INTERVAL with v.Int() == n, without encoding
// it; ok is false for other kinds. The encoding is 9 bytes (tag, then n
// with its sign bit flipped, big-endian), and this is xxhash64 (seed 0)
// specialised to that input. A hot loop inlines IntKeyTag and HashIntTag
// instead (HashIntKey itself is too big to inline).
func HashIntKey(kind types.Kind, n int64) (h uint64, ok bool) {
	tag := IntKeyTag(kind)
	if tag == 0 {
		return 0, false
	}
	return HashIntTag(tag, n), true
}

// IntKeyTag is the encoding's tag of a kind stored as a 64-bit integer,
// 0 for the other kinds: HashIntKey's first half.
func IntKeyTag(kind types.Kind) uint8 { return intTags[kind] }

// HashIntTag is HashIntKey's second half: the hash of the integer n
// under the tag IntKeyTag gave (not 0).
func HashIntTag(tag uint8, n int64) uint64 {
	u := uint64(n) ^ signBit
	// The first 8 bytes, read little-endian: the tag, then the 7 high
	// bytes of u, most significant first; the 9th byte is u's lowest.
	h := prime5 + 9
	h ^= bits.RotateLeft64((uint64(tag)|bits.ReverseBytes64(u)<<8)*prime2, 31) * prime1
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	h ^= (u & 0xFF) * prime5
	h = bits.RotateLeft64(h, 11) * prime1
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// KeyGroupOfHash is the key group of a key whose HashKey is h: h modulo
// maxParallelism, a mask for a power of two (the default 128), where a
// 64-bit division costs tens of cycles for every key an operator adds.
func KeyGroupOfHash(h uint64, maxParallelism int) int {
	m := uint64(maxParallelism)
	if m != 0 && m&(m-1) == 0 {
		return int(h & (m - 1))
	}
	return int(h % m)
}
