package exec

import (
	"bytes"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// boundCache keeps, per partition of an AppendFast Top-N, a copy of its
// "bound" state (whether the range is full, and the last kept row's sort
// key), so that the most common row, one ranked past a full range, is
// dropped without setting the current key or reading state. The operator
// is the only writer of the bound, so the copy stays exact; a restored
// operator starts with an empty cache and fills it as keys come. It is
// off with a state TTL (the state may expire under it). It holds at most
// boundCacheMax partitions and starts over when full.
type boundCache struct {
	keys *state.KeyIndex // partition key → index in ents
	ents []boundEnt
}

// boundEnt is one partition's bound.
type boundEnt struct {
	full bool
	sk   []byte
}

const boundCacheMax = 1 << 17

func newBoundCache(cols []int, kinds []types.Kind) *boundCache {
	return &boundCache{keys: state.NewKeyIndex(cols, kinds)}
}

// skip reports whether row, of sort key sk, ranks past its partition's
// full range (ties too for ROW_NUMBER, which keeps arrival order), and
// returns the partition's entry (-1: not cached).
func (c *boundCache) skip(row []types.Value, sk []byte, f RankFunc) (int32, bool) {
	i, ok := c.keys.Find(row)
	if !ok {
		return -1, false
	}
	if !c.ents[i].full {
		return i, false
	}
	cmp := bytes.Compare(sk, c.ents[i].sk)
	return i, cmp > 0 || cmp == 0 && f == RowNumber
}

// put records row's partition's bound.
func (c *boundCache) put(row []types.Value, full bool, sk []byte) {
	i, ok := c.keys.Find(row)
	if !ok {
		if c.keys.Len() >= boundCacheMax {
			c.keys.Reset()
		}
		i = c.keys.Insert(row)
		for int32(len(c.ents)) < c.keys.Cap() {
			c.ents = append(c.ents, boundEnt{})
		}
	}
	e := &c.ents[i]
	e.full = full
	e.sk = append(e.sk[:0], sk...)
}
