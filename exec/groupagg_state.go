package exec

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Keyed state of a GroupAgg. Its in-memory groups are the cache of its
// state, kept by state.Records: the operator tells it which groups were
// added, changed or removed, and encodes a group's key and record (this
// file); Records writes the changes back at each checkpoint in state-key
// order, spills past the budget, loads the groups back on restore, and
// looks up keys not in memory when it is backed by the store.

// groupStateVersion leads every stored group record. Version 1 (key layout
// 1, migrated from round-one checkpoints) is the row count and the
// accumulators' states; version 2 adds, after the version, a bit mask
// (uvarint) of the key columns of kind INT, which the key encoding does not
// tell from BIGINT; version 3 adds, after that mask, a mask of the key
// columns of kind TIMESTAMP_LTZ, which shares TIMESTAMP's encoding;
// version 4 keeps the values of DISTINCT calls over integers out of the
// record (groupagg_distinct.go): such a call's state is its inner
// accumulator's alone. A record of an older version is converted as it
// loads: its DISTINCT sets become entries, and it is written again.
const groupStateVersion = 4

// groupPresenceVersion is groupStateVersion for a group whose DISTINCT
// entries are presence-only (a GroupAgg over insert-only input, see
// groupagg_distinct.go): the layout of version 4, which a GroupAgg whose
// input retracts refuses to load.
const groupPresenceVersion = 5

// groupsStateName is the name of the GroupAgg's state.
const groupsStateName = "groups"

var (
	_ StatefulOperator   = (*groupAggOp)(nil)
	_ state.RecordSource = (*groupAggOp)(nil)
)

// newRecords makes the GroupAgg's Records, in memory until InitState.
func (g *groupAggOp) newRecords(ctx *OpContext) error {
	st, err := state.NewRecords(state.RecordOptions{
		Name:           groupsStateName,
		OperatorID:     ctx.ID,
		MaxParallelism: g.maxPar,
		Subtask:        ctx.Subtask,
		Parallelism:    ctx.Parallelism,
		Budget:         ctx.StateBudget,
		RecordBytes:    g.bytesPerGroup(),
		Exclusive:      g.dv == nil, // else the DISTINCT entries share the space
		TTL:            ctx.StateTTL,
	}, g)
	if err != nil {
		return err
	}
	g.st = st
	return nil
}

// InitState implements StatefulOperator.
func (g *groupAggOp) InitState(store *statestore.Store, restored bool) error {
	if len(g.heads) > len(g.free) {
		return fmt.Errorf("state of %s: store given after groups were made", g.name)
	}
	if g.dv != nil {
		if err := g.dv.attach(store, restored); err != nil {
			return fmt.Errorf("state of %s: %w", g.name, err)
		}
	}
	if err := g.st.Attach(store, restored); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	g.rewriteConverted()
	if g.dv != nil && restored {
		if err := g.dv.loadRestored(); err != nil {
			return fmt.Errorf("state of %s: %w", g.name, err)
		}
	}
	return nil
}

// rewriteConverted marks the groups that LoadRecord converted from an
// older layout as changed, so that the next snapshot writes them in the
// current one (their DISTINCT entries are new records already).
func (g *groupAggOp) rewriteConverted() {
	for _, gi := range g.conv {
		g.st.Changed(gi)
	}
	g.conv = g.conv[:0]
}

// PrepareSnapshot implements StatefulOperator: the pending changes go out
// (the barrier follows them), then Records writes the changed groups.
func (g *groupAggOp) PrepareSnapshot() error {
	if err := g.emitPending(); err != nil {
		return err
	}
	if g.dv != nil {
		// One run of keys for both (see Records.SnapshotWith).
		if err := g.dv.st.SnapshotWith(g.st); err != nil {
			return fmt.Errorf("state of %s: %w", g.name, err)
		}
		return nil
	}
	if err := g.st.Snapshot(); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	return nil
}

// maybeSpill writes every group back to the store and drops them from
// memory when they exceed the budget. Called between batches.
//
// The groups and their DISTINCT entries share the budget and spill
// together: an entry in memory needs its group there (it is indexed by
// the group's number, and its key is the group's).
func (g *groupAggOp) maybeSpill() error {
	if g.dv != nil {
		g.st.SetExtraBytes(g.dv.st.MemoryBytes())
		g.dv.st.SetExtraBytes(g.st.MemoryBytes())
		if !g.st.OverBudget() && !g.dv.st.OverBudget() {
			return nil
		}
	} else if !g.st.OverBudget() {
		return nil
	}
	if err := g.emitPending(); err != nil {
		return err
	}
	if g.dv != nil {
		// First: the entries' keys are their groups'.
		if err := g.dv.st.Spill(); err != nil {
			return fmt.Errorf("state of %s: %w", g.name, err)
		}
	}
	if err := g.st.Spill(); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	return nil
}

// AppendRecordKey implements state.RecordSource: group gi's key in the
// order-preserving encoding.
func (g *groupAggOp) AppendRecordKey(dst []byte, gi int32) []byte {
	if h := &g.heads[gi]; h.inInts {
		if h.keyKind == types.KindInt || h.keyKind == types.KindBigInt {
			return state.AppendInt64(dst, h.keyInt)
		}
		return state.AppendValue(dst, types.BigIntValue(h.keyInt).WithKind(h.keyKind))
	}
	return append(dst, g.keyStr[gi]...)
}

// AppendRecord implements state.RecordSource: group gi's record.
func (g *groupAggOp) AppendRecord(dst []byte, gi int32) []byte {
	h := &g.heads[gi]
	version := byte(groupStateVersion)
	if g.dv != nil && g.dv.presence {
		version = groupPresenceVersion
	}
	if h.inInts {
		// One key column, of kind keyKind: no key values to make, and
		// each mask is 0 or 1, a uvarint of one byte.
		var ints, ltz byte
		switch h.keyKind {
		case types.KindInt:
			ints = 1
		case types.KindTimestampLTZ:
			ltz = 1
		}
		dst = append(dst, version, ints, ltz)
	} else {
		var ints, ltz uint64
		for i, v := range g.groupKey(gi) {
			switch v.Kind() {
			case types.KindInt:
				ints |= 1 << i
			case types.KindTimestampLTZ:
				ltz |= 1 << i
			}
		}
		dst = append(dst, version)
		dst = binary.AppendUvarint(dst, ints)
		dst = binary.AppendUvarint(dst, ltz)
	}
	dst = binary.AppendVarint(dst, h.count)
	for _, acc := range g.accs {
		dst = acc.save(gi, dst)
	}
	return dst
}

// LoadRecord implements state.RecordSource: it makes a group from a stored
// record and registers it. It is already emitted: its result is out.
func (g *groupAggOp) LoadRecord(key, rec []byte) (int32, error) {
	if len(rec) == 0 || rec[0] < 1 || rec[0] > groupPresenceVersion {
		return 0, errors.New("group record of unknown version")
	}
	if rec[0] == groupPresenceVersion && (g.dv == nil || !g.dv.presence) {
		return 0, errPresenceOnly
	}
	version, rest := rec[0], rec[1:]
	var ints, ltz uint64
	if version >= 2 {
		var err error
		if ints, rest, err = readUvarint(rest); err != nil {
			return 0, err
		}
	}
	if version >= 3 {
		var err error
		if ltz, rest, err = readUvarint(rest); err != nil {
			return 0, err
		}
	}
	count, rest, err := readVarint(rest)
	if err != nil {
		return 0, err
	}
	row := g.loadRow
	if err := decodeKeyColumns(key, row, g.keys, ints, ltz, "group key"); err != nil {
		return 0, err
	}
	gi := g.newGroup(row)
	g.register(gi, row, key)
	g.heads[gi].count = count
	g.heads[gi].stored = true
	converted := false
	for i, acc := range g.accs {
		if _, shared := acc.(*sharedDistinctAcc); shared && version < 4 {
			rest, err = g.dv.convert(gi, key, i, rest)
			converted = true
		} else {
			rest, err = acc.load(gi, rest)
		}
		if err != nil {
			return 0, err
		}
	}
	if converted {
		g.conv = append(g.conv, gi)
	}
	g.heads[gi].emitted = true
	return gi, nil
}

// DropRecords implements state.RecordSource: it forgets every in-memory
// group (they were written to the store).
func (g *groupAggOp) DropRecords() { g.dropGroups() }

var _ expiringOperator = (*groupAggOp)(nil)

// expires implements expiringOperator.
func (g *groupAggOp) expires() bool { return g.st.HasTTL() }

// nextExpiry implements expiringOperator.
func (g *groupAggOp) nextExpiry() (int64, bool) {
	at, ok := g.st.NextExpiry()
	if g.dv != nil {
		if d, dok := g.dv.st.NextExpiry(); dok && (!ok || d < at) {
			at, ok = d, true
		}
	}
	return at, ok
}

// advanceTime implements expiringOperator: groups not written for the TTL
// are dropped without output, as Flink's state TTL does; a row of such a
// key later starts a new group (+I). What the operator holds goes out
// first, so no group with pending changes is dropped.
func (g *groupAggOp) advanceTime(ms int64) error {
	g.st.SetTime(ms)
	if g.dv != nil {
		g.dv.st.SetTime(ms)
	}
	if !g.st.ExpiryDue() && (g.dv == nil || !g.dv.st.ExpiryDue()) {
		return nil
	}
	if err := g.emitPending(); err != nil {
		return err
	}
	if g.dv != nil {
		// Entries first: a group expires no earlier than its entries.
		if err := g.dv.st.Expire(g.dv.expire); err != nil {
			return fmt.Errorf("state of %s: %w", g.name, err)
		}
	}
	if err := g.st.Expire(g.removeGroup); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	return nil
}
