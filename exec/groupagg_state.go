package exec

import (
	"bytes"
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
	maxGroups int     // groups kept in memory before spilling
	backed    bool    // groups not in memory may be in the store
	changes   []int32 // groups whose groupHead.changed was set, in order
	order     []sortEntry
	bucketed  []sortEntry
	starts    []int32 // per key group: where its entries start in bucketed
	sorted    []int32
	valBuf    []byte
	encBuf    []byte
	cmpA      []byte
	cmpB      []byte
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
	}
	for gi := range g.heads { // groups made before the store (none, as tasks run)
		g.heads[gi].kg = g.keyGroup(int32(gi))
	}
	return nil
}

// keyGroup computes group gi's key group from its key.
func (g *groupAggOp) keyGroup(gi int32) uint16 {
	return uint16(types.KeyGroup(types.HashKey(g.encodeKey(gi)), g.maxPar))
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
		if !g.heads[gi].changed {
			continue // removed since, or listed twice
		}
		g.heads[gi].changed = false
		if err := g.storeGroup(gi); err != nil {
			return err
		}
	}
	st.changes = st.changes[:0]
	return nil
}

// sortEntry is a changed group with what orders its state key within its
// key group: for a group of a single integer key, the key's kind and the
// little-endian bytes of the integer (which sort as the byte-reversed
// value).
type sortEntry struct {
	rev  uint64
	gi   int32
	kg   uint16
	kind types.Kind
	ints bool // keyed in ints; otherwise compare encoded keys
}

// changesInKeyOrder returns the changed groups in the order of their state
// keys (key group, then encoded key). The store writes a long run of
// ascending keys more cheaply than the same keys in random order (Pebble
// need not sort them), and integer comparisons here are much cheaper than
// its key comparisons. The groups are first distributed by key group (a
// counting sort, one pass) and then each key group, small enough to stay in
// the CPU cache, is sorted by key. Order is only a speed-up: any order is
// correct.
func (g *groupAggOp) changesInKeyOrder() []int32 {
	st := g.st
	if len(st.changes) < 1024 {
		return st.changes
	}
	if cap(st.starts) < st.maxPar+1 {
		st.starts = make([]int32, st.maxPar+1)
	}
	starts := st.starts[:st.maxPar+1]
	clear(starts)
	order := st.order[:0]
	for _, gi := range st.changes {
		h := &g.heads[gi]
		if !h.changed {
			continue
		}
		h.changed = false // listed once, even if gi appears twice
		order = append(order, sortEntry{rev: bits.ReverseBytes64(uint64(h.keyInt)), gi: gi, kg: h.kg, kind: h.keyKind, ints: h.inInts})
		starts[h.kg+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	bucketed := slices.Grow(st.bucketed[:0], len(order))[:len(order)]
	next := st.sorted[:0] // borrowed as the per-key-group write position
	for _, n := range starts[:st.maxPar] {
		next = append(next, n)
	}
	for _, e := range order {
		bucketed[next[e.kg]] = e
		next[e.kg]++
	}
	for kg := range st.maxPar {
		slices.SortFunc(bucketed[starts[kg]:starts[kg+1]], g.compareEntries)
	}
	out := next[:0]
	for _, e := range bucketed {
		g.heads[e.gi].changed = true
		out = append(out, e.gi)
	}
	st.order, st.bucketed, st.sorted = order, bucketed, out
	return out
}

// compareEntries orders two changed groups of one key group by their
// encoded keys.
func (g *groupAggOp) compareEntries(a, b sortEntry) int {
	if a.ints && b.ints {
		if a.kind != b.kind {
			return cmp.Compare(a.kind, b.kind)
		}
		return cmp.Compare(a.rev, b.rev)
	}
	st := g.st
	st.cmpA = g.appendKey(st.cmpA[:0], a.gi)
	st.cmpB = g.appendKey(st.cmpB[:0], b.gi)
	return bytes.Compare(st.cmpA, st.cmpB)
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
	if err := st.table.PutThrough(int(g.heads[gi].kg), key, v); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	return nil
}

// encodeKey returns group gi's encoded key (valid until the next call).
func (g *groupAggOp) encodeKey(gi int32) []byte {
	g.st.encBuf = g.appendKey(g.st.encBuf[:0], gi)
	return g.st.encBuf
}

// appendKey appends group gi's encoded key to buf.
func (g *groupAggOp) appendKey(buf []byte, gi int32) []byte {
	for _, v := range g.groupKey(gi) {
		buf = types.AppendKey(buf, v)
	}
	return buf
}

// markChanged records that group gi's state changed since the last snapshot.
func (g *groupAggOp) markChanged(gi int32) {
	if h := &g.heads[gi]; !h.changed {
		h.changed = true
		g.st.changes = append(g.st.changes, gi)
	}
}

// forgetState is called when group gi is removed: its stored state is
// deleted at once (in the store's write-back cache), so that a later row of
// the same key does not load the stale state.
func (g *groupAggOp) forgetState(gi int32) error {
	st := g.st
	g.heads[gi].changed = false
	if err := st.table.Delete(int(g.heads[gi].kg), g.encodeKey(gi)); err != nil {
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
	st.backed = true
	return nil
}
