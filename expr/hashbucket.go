package expr

import (
	"fmt"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/weir-sql/weir/types"
)

// HashBucket is the bucket of the split distinct aggregation (the
// planner's rewrite, not a SQL function): a stable hash of X's value,
// modulo N, as INT NOT NULL in [0, N); NULL is in bucket 0. Equal values
// always land in the same bucket, in every process: the bucket is part of
// the keys of checkpointed state, so the hash is fixed (xxhash64 of the
// value's key encoding; a mix of the integer for integer kinds).
type HashBucket struct {
	X Expr
	N int
}

var _ Node = (*HashBucket)(nil)

// NewHashBucket returns the bucket of x among n (n ≥ 1).
func NewHashBucket(x Expr, n int) (*HashBucket, error) {
	if n < 1 {
		return nil, fmt.Errorf("hash bucket count %d: want at least 1", n)
	}
	return &HashBucket{X: x, N: n}, nil
}

// Type is INT NOT NULL.
func (h *HashBucket) Type() types.Type { return types.Type{Kind: types.KindInt, NotNull: true} }

// String renders the bucket as Flink's plan does: MOD(HASH_CODE(x), n).
func (h *HashBucket) String() string {
	return "MOD(HASH_CODE(" + h.X.String() + "), " + strconv.Itoa(h.N) + ")"
}

// Children returns the argument.
func (h *HashBucket) Children() []Expr { return []Expr{h.X} }

// WithChildren rebuilds the bucket over another argument.
func (h *HashBucket) WithChildren(kids []Expr) (Expr, error) { return NewHashBucket(kids[0], h.N) }

// Eval returns the bucket of X's value.
func (h *HashBucket) Eval(row []types.Value) (types.Value, error) {
	v, err := h.X.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	return types.IntValue(int64(HashValue(v) % uint64(h.N))), nil
}

// HashValue is the stable hash of a value that HashBucket takes the
// remainder of: 0 for NULL; for integer kinds a mix of the integer (no
// encoding); for strings xxhash64 of the bytes; else xxhash64 of the
// value's key encoding (types.AppendKey). Equal values of one type hash
// alike.
func HashValue(v types.Value) uint64 {
	switch {
	case v.IsNull():
		return 0
	case v.Kind().IsInteger():
		// The finalizer of splitmix64: every bit of the input moves
		// about half of the output's.
		z := uint64(v.Int()) + 0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	case v.Kind() == types.KindVarchar:
		return xxhash.Sum64String(v.Str())
	}
	var buf [48]byte
	return xxhash.Sum64(types.AppendKey(buf[:0], v))
}
