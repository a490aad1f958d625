package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
// store (the operator is "backed"). A restored operator reads its groups
// into memory with one scan while they fit in the budget (loadAll); if they
// do not, it stays backed and the rest load as their keys come.

// groupStateVersion leads every stored group record.
const groupStateVersion = 1

// groupsStateName is the name of the GroupAgg's state in the store.
const groupsStateName = "groups"

var _ StatefulOperator = (*groupAggOp)(nil)

// groupState is the GroupAgg's link to its state store.
type groupState struct {
	store      *statestore.Store
	table      *statestore.Table
	maxPar     int
	maxGroups  int     // groups kept in memory before spilling
	backed     bool    // groups not in memory may be in the store
	changes    []int32 // groups whose groupHead.changed was set, in order (some since removed)
	changed    int     // groups whose groupHead.changed is set
	entries    []changeEntry
	spare      []changeEntry // the radix sort's second buffer
	vals       []byte        // the changed groups' encoded state
	sortedVals []byte        // gatherValues' second buffer
	encBuf     []byte
	cmpA       []byte
	cmpB       []byte
}

// InitState implements StatefulOperator.
func (g *groupAggOp) InitState(store *statestore.Store, restored bool) error {
	tb, err := store.Table(g.id, groupsStateName)
	if err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	g.st = &groupState{
		store:     store,
		table:     tb,
		maxPar:    g.maxPar,
		maxGroups: int(max(g.budget/g.bytesPerGroup(), 1024)),
		backed:    restored,
	}
	for gi := range g.heads { // groups made before the store (none, as tasks run)
		g.heads[gi].kg = g.keyGroup(int32(gi))
	}
	if restored {
		return g.loadAll()
	}
	return nil
}

// errBudgetFull stops loadAll's scan.
var errBudgetFull = errors.New("state budget full")

// loadAll loads the restored groups into memory with one scan of the store,
// as long as they fit in the memory budget. One sequential scan costs a
// small fraction of loading each group with a lookup when its key first
// comes again, and with every group in memory the operator is no longer
// backed by the store (no lookups for new keys, and snapshots that replace
// the state when most of it changed). When the groups do not fit, those
// loaded stay and the rest load by lookup.
func (g *groupAggOp) loadAll() error {
	st := g.st
	row := make([]types.Value, g.maxCol+1)
	err := st.table.Scan(0, st.maxPar-1, func(_ int, key, val []byte) error {
		if len(g.heads)-len(g.free) >= st.maxGroups {
			return errBudgetFull
		}
		rest := key
		for _, k := range g.keys {
			v, r, err := types.DecodeKey(rest)
			if err != nil {
				return fmt.Errorf("group key %x: %w", key, err)
			}
			row[k], rest = v, r
		}
		if len(rest) != 0 {
			return fmt.Errorf("group key %x: %d bytes left over", key, len(rest))
		}
		gi, err := g.restoreGroup(row, val)
		if err != nil {
			return err
		}
		g.register(gi, row, key)
		return nil
	})
	switch {
	case errors.Is(err, errBudgetFull):
		return nil // still backed
	case err != nil:
		return fmt.Errorf("state of %s: load: %w", g.name, err)
	}
	st.backed = false
	return nil
}

// keyGroup computes group gi's key group from its key.
func (g *groupAggOp) keyGroup(gi int32) uint16 {
	return uint16(types.KeyGroup(types.HashKey(g.encodeKey(gi)), g.maxPar))
}

// PrepareSnapshot implements StatefulOperator: it writes the groups that
// changed since the last call into the store, in state-key order (see
// sortChanges). (Deletions went to the store when the groups were removed.)
//
// When every group is in memory and at least half of them changed, it
// writes all of them instead, as the operator's complete state
// (Store.ReplaceOperator): the store then replaces the old state at once
// instead of layering the changes over it, and writing the unchanged rest
// costs less than merging the changes in later (Pebble's compactions).
func (g *groupAggOp) PrepareSnapshot() error {
	st := g.st
	if st == nil {
		return nil
	}
	if err := g.emitPending(); err != nil { // the barrier follows the changes
		return err
	}
	live := len(g.heads) - len(g.free)
	all := !st.backed && st.changed > 0 && 2*st.changed >= live
	if all {
		if err := st.store.ReplaceOperator(g.id); err != nil {
			return fmt.Errorf("state of %s: %w", g.name, err)
		}
	}
	entries, err := g.collectChanges(all)
	if err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	entries = g.gatherValues(g.sortChanges(entries))
	for i := range entries {
		e := &entries[i]
		var key []byte
		if e.ints {
			st.encBuf = types.AppendKey(st.encBuf[:0], types.BigIntValue(int64(bits.ReverseBytes64(e.rev))).WithKind(e.kind))
			key = st.encBuf
		} else {
			key = g.encodeKey(e.gi)
		}
		if err := st.table.PutThrough(int(e.kg), key, st.vals[e.valOff:e.valOff+e.valLen]); err != nil {
			return fmt.Errorf("state of %s: %w", g.name, err)
		}
	}
	st.changes, st.changed = st.changes[:0], 0
	return nil
}

// collectChanges clears the changed mark of every changed group and returns
// an entry for each (with all, for every group), with its state encoded in
// st.vals. When many groups changed it visits the groups in number order
// rather than in the order they changed: reading them in memory order is
// much faster.
func (g *groupAggOp) collectChanges(all bool) ([]changeEntry, error) {
	st := g.st
	entries, vals := st.entries[:0], st.vals[:0]
	tooBig := false
	visit := func(gi int32) {
		h := &g.heads[gi]
		if all {
			if h.count == 0 {
				return // a free group number (removed groups were emitted)
			}
		} else if !h.changed {
			return // removed since, or listed twice
		}
		h.changed = false
		off := len(vals)
		vals = g.appendState(vals, gi)
		if len(vals) > math.MaxUint32 {
			tooBig = true // changeEntry's offsets are 32-bit
		}
		entries = append(entries, changeEntry{
			rev: bits.ReverseBytes64(uint64(h.keyInt)), gi: gi,
			valOff: uint32(off), valLen: uint32(len(vals) - off),
			kg: h.kg, kind: h.keyKind, ints: h.inInts,
		})
	}
	if all || len(st.changes) > len(g.heads)/8 {
		for gi := range g.heads {
			visit(int32(gi))
		}
	} else {
		for _, gi := range st.changes {
			visit(gi)
		}
	}
	st.entries, st.vals = entries, vals
	if tooBig {
		return nil, fmt.Errorf("the state of %d groups to write exceeds 4 GiB", len(entries))
	}
	return entries, nil
}

// gatherValues copies the entries' encoded states into a buffer in the
// entries' (sorted) order, so that the store reads them in memory order. In
// one short loop the reads of the scattered states overlap; in the write
// loop each would stall the store's sstable writer.
func (g *groupAggOp) gatherValues(entries []changeEntry) []changeEntry {
	st := g.st
	out := slices.Grow(st.sortedVals[:0], len(st.vals))
	for i := range entries {
		e := &entries[i]
		off := len(out)
		out = append(out, st.vals[e.valOff:e.valOff+e.valLen]...)
		e.valOff = uint32(off)
	}
	st.vals, st.sortedVals = out, st.vals
	return entries
}

// appendState appends group gi's encoded state to dst.
func (g *groupAggOp) appendState(dst []byte, gi int32) []byte {
	dst = append(dst, groupStateVersion)
	dst = binary.AppendVarint(dst, g.heads[gi].count)
	for _, acc := range g.accs {
		dst = acc.save(gi, dst)
	}
	return dst
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
		g.st.changed++
	}
}

// forgetState is called when group gi is removed: its stored state is
// deleted at once (in the store's write-back cache), so that a later row of
// the same key does not load the stale state.
func (g *groupAggOp) forgetState(gi int32) error {
	st := g.st
	if g.heads[gi].changed {
		g.heads[gi].changed = false
		st.changed--
	}
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
	gi, err := g.restoreGroup(row, val)
	if err != nil {
		return 0, false, fmt.Errorf("state of %s: %w", g.name, err)
	}
	return gi, true, nil
}

// restoreGroup makes a group for the key values in row from its stored
// record val. It is already emitted: its result is out. The caller
// registers it in the group index.
func (g *groupAggOp) restoreGroup(row []types.Value, val []byte) (int32, error) {
	if len(val) == 0 || val[0] != groupStateVersion {
		return 0, errors.New("group record of unknown version")
	}
	count, rest, err := readVarint(val[1:])
	if err != nil {
		return 0, err
	}
	gi := g.newGroup(row)
	g.heads[gi].count = count
	for _, acc := range g.accs {
		if rest, err = acc.load(gi, rest); err != nil {
			return 0, err
		}
	}
	g.heads[gi].emitted = true
	return gi, nil
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
