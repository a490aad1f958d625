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
	spec   DedupSpec
	name   string
	w      int
	st     *state.Records
	out    *types.Batch
	intKey int // the key column when there is one (its values may go to ints), else -1

	ints   *intTable        // one integer key → slot
	strs   map[string]int32 // encoded key → slot, for the other keys
	keyStr []string         // per slot: its encoded key when in strs
	inInts []bool           // per slot: keyed in ints
	pages  [][]types.Value  // the kept rows, dedupPage slots (w values each) a page
	free   []int32

	kb      []byte
	scratch []types.Value // a row decoded from the store
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
	o.intKey = -1
	if len(o.spec.Keys) == 1 && intStored(o.spec.Kinds[o.spec.Keys[0]]) {
		o.intKey = o.spec.Keys[0]
	}
	o.ints = newIntTable()
	o.strs = map[string]int32{}
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

// dedupPage is how many slots' rows a page holds: pages, rather than one
// slab, so that a million keys never copy the rows they have.
const dedupPage = 4096

// row returns slot's kept row.
func (o *dedupOp) row(slot int32) []types.Value {
	p, i := int(slot)/dedupPage, int(slot)%dedupPage*o.w
	return o.pages[p][i : i+o.w : i+o.w]
}

// appendKey appends row's key in the order-preserving encoding.
func (o *dedupOp) appendKey(dst []byte, row []types.Value) []byte {
	for _, c := range o.spec.Keys {
		dst = state.AppendValue(dst, row[c])
	}
	return dst
}

// lookup returns the slot of row's key in memory; when the key is not in
// ints, o.kb holds its encoding.
func (o *dedupOp) lookup(row []types.Value) (int32, bool, bool) {
	if o.intKey >= 0 {
		if v := row[o.intKey]; intStored(v.Kind()) {
			s, ok := o.ints.get(v.Int())
			return s, ok, true
		}
	}
	o.kb = o.appendKey(o.kb[:0], row)
	s, ok := o.strs[string(o.kb)]
	return s, ok, false
}

// newSlot makes a slot holding row, registered under its key (inInts:
// in ints, else in strs under o.kb).
func (o *dedupOp) newSlot(row []types.Value, inInts bool) int32 {
	var s int32
	if n := len(o.free); n > 0 {
		s = o.free[n-1]
		o.free = o.free[:n-1]
	} else {
		s = int32(len(o.inInts))
		o.inInts = append(o.inInts, false)
		o.keyStr = append(o.keyStr, "")
		if int(s)/dedupPage == len(o.pages) {
			o.pages = append(o.pages, make([]types.Value, dedupPage*o.w))
		}
	}
	copy(o.row(s), row)
	o.inInts[s] = inInts
	if inInts {
		o.ints.put(row[o.intKey].Int(), s)
	} else {
		k := string(o.kb)
		o.strs[k] = s
		o.keyStr[s] = k
	}
	return s
}

// Process implements Operator.
func (o *dedupOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	tc := o.spec.TimeCol
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("Deduplicate got a %s row: its input must be insert-only", b.Kinds[i])
		}
		row := b.Row(i)
		s, ok, inInts := o.lookup(row)
		if !ok && o.st.Backed() {
			if inInts {
				o.kb = o.appendKey(o.kb[:0], row)
			}
			var err error
			if s, ok, err = o.st.Load(o.kb); err != nil {
				return fmt.Errorf("state of %s: %w", o.name, err)
			}
		}
		if !ok {
			s = o.newSlot(row, inInts)
			if inInts {
				o.st.AddedInt(s, row[o.intKey].Kind(), row[o.intKey].Int())
			} else {
				o.st.AddedKey(s, o.kb)
			}
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

// AppendRecordKey implements state.RecordSource.
func (o *dedupOp) AppendRecordKey(dst []byte, slot int32) []byte {
	if o.inInts[slot] {
		return o.appendKey(dst, o.row(slot))
	}
	return append(dst, o.keyStr[slot]...)
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
	inInts := o.intKey >= 0 && intStored(row[o.intKey].Kind())
	o.kb = append(o.kb[:0], key...)
	return o.newSlot(row, inInts), nil
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
	o.ints = newIntTable()
	o.strs = map[string]int32{}
	o.keyStr, o.inInts, o.free = o.keyStr[:0], o.inInts[:0], o.free[:0]
	for _, p := range o.pages {
		clear(p)
	}
}

// removeSlot forgets slot's row (its TTL expired), without output.
func (o *dedupOp) removeSlot(s int32) error {
	if err := o.st.Removed(s); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	if o.inInts[s] {
		o.ints.del(o.row(s)[o.intKey].Int())
	} else {
		delete(o.strs, o.keyStr[s])
		o.keyStr[s] = ""
	}
	clear(o.row(s))
	o.free = append(o.free, s)
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
