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
	cols   []int
	intCol int // the partition column when it is one integer column, else -1
	ints   *state.IntTable
	strs   map[string]int32
	ents   []boundEnt
	kb     []byte
}

// boundEnt is one partition's bound.
type boundEnt struct {
	full bool
	sk   []byte
}

const boundCacheMax = 1 << 17

func newBoundCache(cols []int, kinds []types.Kind) *boundCache {
	c := &boundCache{cols: cols, intCol: -1, ints: state.NewIntTable(), strs: map[string]int32{}}
	if len(cols) == 1 && state.IntStored(kinds[cols[0]]) {
		c.intCol = cols[0]
	}
	return c
}

// find returns the index of row's partition, or -1; when it is not keyed
// by an integer, c.kb holds its encoded key.
func (c *boundCache) find(row []types.Value) (int32, bool) {
	if c.intCol >= 0 {
		if v := row[c.intCol]; state.IntStored(v.Kind()) {
			if i, ok := c.ints.Get(v.Int()); ok {
				return i, true
			}
			return -1, true
		}
	}
	c.kb = c.kb[:0]
	for _, col := range c.cols {
		c.kb = state.AppendValue(c.kb, row[col])
	}
	if i, ok := c.strs[string(c.kb)]; ok {
		return i, false
	}
	return -1, false
}

// skip reports whether row, of sort key sk, ranks past its partition's
// full range (ties too for ROW_NUMBER, which keeps arrival order), and
// returns the partition's entry (-1: not cached).
func (c *boundCache) skip(row []types.Value, sk []byte, f RankFunc) (int32, bool) {
	i, _ := c.find(row)
	if i < 0 || !c.ents[i].full {
		return i, false
	}
	cmp := bytes.Compare(sk, c.ents[i].sk)
	return i, cmp > 0 || cmp == 0 && f == RowNumber
}

// put records row's partition's bound.
func (c *boundCache) put(row []types.Value, full bool, sk []byte) {
	i, inInts := c.find(row)
	if i < 0 {
		if len(c.ents) >= boundCacheMax {
			c.ints = state.NewIntTable()
			clear(c.strs)
			c.ents = c.ents[:0]
			if !inInts {
				c.find(row) // c.kb again
			}
		}
		i = int32(len(c.ents))
		c.ents = append(c.ents, boundEnt{})
		if inInts {
			c.ints.Put(row[c.intCol].Int(), i)
		} else {
			c.strs[string(c.kb)] = i
		}
	}
	e := &c.ents[i]
	e.full = full
	e.sk = append(e.sk[:0], sk...)
}
