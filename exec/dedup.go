package exec

import (
	"fmt"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// DedupSpec configures a deduplication (NewDedup): ROW_NUMBER() OVER
// (PARTITION BY Keys ORDER BY time attribute ASC|DESC) = 1.
type DedupSpec struct {
	Keys     []int
	TimeCol  int  // the time attribute ordered by
	KeepLast bool // ORDER BY … DESC
	// Rowtime orders by an event-time attribute: a row replaces the kept
	// one when its time is earlier (keep-first) or not earlier
	// (keep-last), as Flink's RowTimeDeduplicateFunction; on processing
	// time arrival order decides.
	Rowtime bool
	Kinds   []types.Kind // the input's column kinds
}

// NewDedup returns the deduplication operator of spec over insert-only
// input. Keep-first on processing time emits each key's first row, once
// (+I); the other forms emit +I for a key's first row and a -U/+U pair
// each time a later row replaces it.
//
// The kept rows live in memory, in a slab of typed values indexed by an
// integer hash table (one integer key) or a map of encoded keys, with
// state.Records writing the changed ones back at each checkpoint (at
// op | key group | "kept" | key, a ValueState's layout) and spilling them
// all past the state budget, after which keys not in memory are looked up
// in the store: no keyed-state call per row.
func NewDedup(spec DedupSpec) func() Operator {
	return func() Operator { return &dedupOp{spec: spec} }
}

// dedupStateName is the name of the kept rows' state.
const dedupStateName = "kept"

type dedupOp struct {
	spec DedupSpec
	name string
	w    int
	st   *state.Records
	out  *types.Batch
	keys *state.KeyIndex          // key → slot
	rows *state.Slab[types.Value] // per slot: the kept row

	scratch []types.Value // a row decoded from the store
	slots   []int32       // per input row of the batch: its slot, or -1
	touched uint8         // sink of the loads that bring kept rows into cache
}

var (
	_ StatefulOperator   = (*dedupOp)(nil)
	_ state.RecordSource = (*dedupOp)(nil)
	_ expiringOperator   = (*dedupOp)(nil)
)

// Open implements Operator.
func (o *dedupOp) Open(ctx *OpContext) error {
	o.name = "Deduplicate"
	o.w = len(o.spec.Kinds)
	o.out = types.NewBatch(o.w, 64)
	o.scratch = make([]types.Value, o.w)
	o.keys = state.NewKeyIndex(o.spec.Keys, o.spec.Kinds)
	o.rows = state.NewSlab[types.Value](o.w)
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	st, err := state.NewRecords(state.RecordOptions{
		Name:           dedupStateName,
		OperatorID:     ctx.ID,
		MaxParallelism: maxPar,
		Subtask:        ctx.Subtask,
		Parallelism:    ctx.Parallelism,
		Budget:         ctx.StateBudget,
		RecordBytes:    int64(o.w)*32 + 48,
		Exclusive:      true,
		TTL:            ctx.StateTTL,
	}, o)
	if err != nil {
		return err
	}
	o.st = st
	return nil
}

// InitState implements StatefulOperator.
func (o *dedupOp) InitState(store *statestore.Store, restored bool) error {
	if err := o.st.Attach(store, restored); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// PrepareSnapshot implements StatefulOperator: Records writes the changed
// rows (every row is emitted as it comes: nothing is pending).
func (o *dedupOp) PrepareSnapshot() error {
	if err := o.st.Snapshot(); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// insertOnly is keep-first on processing time, which never updates.
func (o *dedupOp) insertOnly() bool { return !o.spec.KeepLast && !o.spec.Rowtime }

// row returns slot's kept row.
func (o *dedupOp) row(slot int32) []types.Value { return o.rows.At(slot) }

// newSlot makes a slot holding row under row's key.
func (o *dedupOp) newSlot(row []types.Value) int32 {
	s := o.keys.Insert(row)
	o.rows.Grow(o.keys.Cap())
	copy(o.row(s), row)
	return s
}

// Process implements Operator.
func (o *dedupOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	tc := o.spec.TimeCol
	o.findSlots(b)
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("Deduplicate got a %s row: its input must be insert-only", b.Kinds[i])
		}
		row := b.Row(i)
		s := o.slots[i]
		ok := s >= 0
		if !ok {
			// Not in the index before the batch: an earlier row of the
			// batch may have added it since (Find also remembers the key
			// for Load).
			s, ok = o.keys.Find(row)
		}
		if !ok && o.st.Backed() {
			var err error
			if s, ok, err = o.st.Load(o.keys.Key()); err != nil {
				return fmt.Errorf("state of %s: %w", o.name, err)
			}
		}
		if !ok {
			s = o.newSlot(row)
			o.keys.Added(o.st, s)
			o.st.Changed(s)
			o.out.Append(types.Insert, row)
			continue
		}
		if o.insertOnly() {
			continue
		}
		kept := o.row(s)
		if o.spec.Rowtime {
			pt, nt := kept[tc], row[tc]
			replace := !nt.IsNull() && (pt.IsNull() || nt.Int() >= pt.Int())
			if !o.spec.KeepLast {
				replace = !nt.IsNull() && !pt.IsNull() && nt.Int() < pt.Int()
			}
			if !replace {
				continue
			}
		}
		o.out.Append(types.UpdateBefore, kept)
		o.out.Append(types.UpdateAfter, row)
		copy(kept, row)
		o.st.Changed(s)
	}
	if o.out.Len() > 0 {
		if err := out.Emit(o.out); err != nil {
			return err
		}
	}
	if o.st.OverBudget() {
		if err := o.st.Spill(); err != nil {
			return fmt.Errorf("state of %s: %w", o.name, err)
		}
	}
	return nil
}

// findSlots looks up the slot of each row of b, before any row is
// handled, into o.slots (-1 if the key is not in the index), and then
// reads the kept row of each slot found. With 1M keys both lookups miss
// the CPU cache; done in loops of independent iterations, the misses of a
// batch overlap instead of following one another, and the handling loop
// finds the index entries and kept rows in cache. Slots found stay valid
// through the batch: Process adds keys but removes none.
func (o *dedupOp) findSlots(b *types.Batch) {
	n := b.Len()
	if cap(o.slots) < n {
		o.slots = make([]int32, n, max(n, 2*cap(o.slots)))
	}
	o.slots = o.slots[:n]
	for i := range n {
		s, ok := o.keys.Find(b.Row(i))
		if !ok {
			s = -1
		}
		o.slots[i] = s
	}
	if o.insertOnly() {
		return // the kept rows are not read
	}
	var t uint8
	for _, s := range o.slots {
		if s >= 0 {
			r := o.row(s)
			t += uint8(r[0].Kind()) + uint8(r[len(r)-1].Kind())
		}
	}
	o.touched += t
}

// AppendRecordKey implements state.RecordSource.
func (o *dedupOp) AppendRecordKey(dst []byte, slot int32) []byte {
	return o.keys.AppendKey(dst, slot)
}

// AppendRecord implements state.RecordSource: the kept row (state.Values),
// nothing for keep-first on processing time (only the key matters).
func (o *dedupOp) AppendRecord(dst []byte, slot int32) []byte {
	if o.insertOnly() {
		return dst
	}
	return state.Values{}.Append(dst, o.row(slot))
}

// LoadRecord implements state.RecordSource.
func (o *dedupOp) LoadRecord(key, rec []byte) (int32, error) {
	row := o.enc2row(key, rec)
	if row == nil {
		return 0, fmt.Errorf("malformed kept row %x for key %x", rec, key)
	}
	return o.newSlot(row), nil
}

// enc2row decodes a stored row into a scratch row (for keep-first on
// processing time, only the key columns, from key); nil if malformed.
func (o *dedupOp) enc2row(key, rec []byte) []types.Value {
	row := o.scratch
	clear(row)
	if o.insertOnly() {
		for _, c := range o.spec.Keys {
			v, rest, err := state.DecodeValue(key)
			if err != nil {
				return nil
			}
			row[c] = state.WithColumnKind(v, o.spec.Kinds[c])
			key = rest
		}
		return row
	}
	for i := range row {
		v, rest, err := state.DecodeValue(rec)
		if err != nil {
			return nil
		}
		row[i] = state.WithColumnKind(v, o.spec.Kinds[i])
		rec = rest
	}
	return row
}

// DropRecords implements state.RecordSource: it forgets every in-memory
// row (they were written to the store).
func (o *dedupOp) DropRecords() {
	o.keys.Reset()
	o.rows.Clear()
}

// removeSlot forgets slot's row (its TTL expired), without output.
func (o *dedupOp) removeSlot(s int32) error {
	if err := o.st.Removed(s); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	o.keys.Remove(s)
	clear(o.row(s))
	return nil
}

// expires implements expiringOperator.
func (o *dedupOp) expires() bool { return o.st.HasTTL() }

// nextExpiry implements expiringOperator.
func (o *dedupOp) nextExpiry() (int64, bool) { return o.st.NextExpiry() }

// advanceTime implements expiringOperator: a key not written for the TTL
// is forgotten without output, as Flink's state TTL does; its next row is
// a first row again (+I).
func (o *dedupOp) advanceTime(ms int64) error {
	o.st.SetTime(ms)
	if !o.st.ExpiryDue() {
		return nil
	}
	if err := o.st.Expire(o.removeSlot); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// Finish implements Operator.
func (o *dedupOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *dedupOp) Close() error { return nil }
