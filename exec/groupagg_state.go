package exec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Keyed state of a GroupAgg. The operator's in-memory groups are the cache
// of its state: the hot path never touches the store. What changed since
// the last checkpoint is written to the store in PrepareSnapshot. When the
// groups outgrow their memory budget, they are written back and dropped
// from memory, and from then on a group not in memory is looked up in the
// store (the operator is "backed"). A restored operator starts backed, so a
// restore costs nothing up front: groups load as their keys come.

// groupStateVersion leads every stored group record.
const groupStateVersion = 1

// groupsStateName is the name of the GroupAgg's state in the store.
const groupsStateName = "groups"

var _ StatefulOperator = (*groupAggOp)(nil)

// groupState is the GroupAgg's link to its state store.
type groupState struct {
	table     *statestore.Table
	maxPar    int
	maxGroups int    // groups kept in memory before spilling
	backed    bool   // groups not in memory may be in the store
	changed   []bool // per group: changed since the last PrepareSnapshot
	changes   []int32
	order     []sortEntry // reused by changesInKeyOrder
	sorted    []int32
	valBuf    []byte
	encBuf    []byte
}

// InitState implements StatefulOperator.
func (g *groupAggOp) InitState(store *statestore.Store, restored bool) error {
	tb, err := store.Table(g.id, groupsStateName)
	if err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	g.st = &groupState{
		table:     tb,
		maxPar:    g.maxPar,
		maxGroups: int(max(g.budget/g.bytesPerGroup(), 1024)),
		backed:    restored,
		changed:   make([]bool, len(g.heads)),
	}
	return nil
}

// PrepareSnapshot implements StatefulOperator: it writes the groups that
// changed since the last call into the store. (Deletions went to the store
// when the groups were removed.)
func (g *groupAggOp) PrepareSnapshot() error {
	st := g.st
	if st == nil {
		return nil
	}
	if err := g.emitPending(); err != nil { // the barrier follows the changes
		return err
	}
	for _, gi := range g.changesInKeyOrder() {
		if !st.changed[gi] {
			continue // removed since, or listed twice
		}
		st.changed[gi] = false
		if err := g.storeGroup(gi); err != nil {
			return err
		}
	}
	st.changes = st.changes[:0]
	return nil
}

// sortEntry orders a group with a single integer key as its state key
// sorts in Pebble: key group, then the key's encoding (kind, then the
// little-endian bytes of the integer, which sort as the byte-reversed value).
type sortEntry struct {
	kg   uint32
	kind types.Kind
	rev  uint64
	gi   int32
}

// changesInKeyOrder returns the changed groups, in the order of their state
// keys when the operator has a single integer key. Pebble sorts a large
// write batch before flushing it; a batch that arrives sorted costs it a
// linear pass instead, and integer comparisons here are much cheaper than
// its key comparisons. (Order is only a speed-up: any order is correct.)
func (g *groupAggOp) changesInKeyOrder() []int32 {
	st := g.st
	if g.intKey < 0 || len(st.changes) < 1024 {
		return st.changes
	}
	order := st.order[:0]
	var rest []int32
	for _, gi := range st.changes {
		if !st.changed[gi] {
			continue
		}
		if !g.heads[gi].inInts {
			rest = append(rest, gi)
			continue
		}
		key := g.encodeKey(gi)
		order = append(order, sortEntry{
			kg:   uint32(types.KeyGroup(types.HashKey(key), st.maxPar)),
			kind: g.heads[gi].keyKind,
			rev:  bits.ReverseBytes64(uint64(g.heads[gi].keyInt)),
			gi:   gi,
		})
	}
	slices.SortFunc(order, func(a, b sortEntry) int {
		switch {
		case a.kg != b.kg:
			return cmp.Compare(a.kg, b.kg)
		case a.kind != b.kind:
			return cmp.Compare(a.kind, b.kind)
		}
		return cmp.Compare(a.rev, b.rev)
	})
	st.order = order
	out := st.sorted[:0]
	for _, e := range order {
		out = append(out, e.gi)
	}
	st.sorted = append(out, rest...)
	return st.sorted
}

// storeGroup writes group gi's state to the store.
func (g *groupAggOp) storeGroup(gi int32) error {
	st := g.st
	key := g.encodeKey(gi)
	v := append(st.valBuf[:0], groupStateVersion)
	v = binary.AppendVarint(v, g.heads[gi].count)
	for _, acc := range g.accs {
		v = acc.save(gi, v)
	}
	st.valBuf = v
	kg := types.KeyGroup(types.HashKey(key), st.maxPar)
	if err := st.table.PutThrough(kg, key, v); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	return nil
}

// encodeKey returns group gi's encoded key (valid until the next call).
func (g *groupAggOp) encodeKey(gi int32) []byte {
	buf := g.st.encBuf[:0]
	for _, v := range g.groupKey(gi) {
		buf = types.AppendKey(buf, v)
	}
	g.st.encBuf = buf
	return buf
}

// markChanged records that group gi's state changed since the last snapshot.
func (g *groupAggOp) markChanged(gi int32) {
	st := g.st
	for int(gi) >= len(st.changed) {
		st.changed = append(st.changed, false)
	}
	if !st.changed[gi] {
		st.changed[gi] = true
		st.changes = append(st.changes, gi)
	}
}

// forgetState is called when group gi is removed: its stored state is
// deleted at once (in the store's write-back cache), so that a later row of
// the same key does not load the stale state.
func (g *groupAggOp) forgetState(gi int32) error {
	st := g.st
	if int(gi) < len(st.changed) {
		st.changed[gi] = false
	}
	key := g.encodeKey(gi)
	if err := st.table.Delete(types.KeyGroup(types.HashKey(key), st.maxPar), key); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	return nil
}

// loadGroup looks up the group of row's key in the store. If found, it
// becomes an in-memory group (already emitted: its result is out) and its
// number is returned.
func (g *groupAggOp) loadGroup(row []types.Value) (int32, bool, error) {
	st := g.st
	buf := st.encBuf[:0]
	for _, k := range g.keys {
		buf = types.AppendKey(buf, row[k])
	}
	st.encBuf = buf
	kg := types.KeyGroup(types.HashKey(buf), st.maxPar)
	val, ok, err := st.table.Get(kg, buf)
	if err != nil {
		return 0, false, fmt.Errorf("state of %s: %w", g.name, err)
	}
	if !ok {
		return 0, false, nil
	}
	if len(val) == 0 || val[0] != groupStateVersion {
		return 0, false, fmt.Errorf("state of %s: group record of unknown version", g.name)
	}
	count, rest, err := readVarint(val[1:])
	if err != nil {
		return 0, false, fmt.Errorf("state of %s: %w", g.name, err)
	}
	gi := g.newGroup(row)
	g.heads[gi].count = count
	for _, acc := range g.accs {
		if rest, err = acc.load(gi, rest); err != nil {
			return 0, false, fmt.Errorf("state of %s: %w", g.name, err)
		}
	}
	na := len(g.calls)
	last := g.last[int(gi)*na : int(gi+1)*na]
	for a, acc := range g.accs {
		last[a] = acc.result(gi)
	}
	g.heads[gi].emitted = true
	return gi, true, nil
}

// maybeSpill writes every group back to the store and drops them from
// memory when there are more than the budget allows. Called between
// batches, when no group is being emitted.
func (g *groupAggOp) maybeSpill() error {
	st := g.st
	if st == nil || len(g.heads)-len(g.free) <= st.maxGroups {
		return nil
	}
	if err := g.PrepareSnapshot(); err != nil {
		return err
	}
	g.dropGroups()
	st.changed = st.changed[:0]
	st.backed = true
	return nil
}
