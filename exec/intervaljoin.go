package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// IntervalJoinSpec describes an interval join: a join of insert-only
// inputs whose condition bounds the right row's rowtime (column RightTime)
// by the left row's (LeftTime): right - left in [Lower, Upper] ms.
type IntervalJoinSpec struct {
	JoinSpec
	LeftTime, RightTime int
	Lower, Upper        int64
}

// NewIntervalJoin returns the constructor of an interval join operator.
//
// Each join key has a slot (state.KeyIndex) holding, per input, the key's
// buffered rows ordered by time, typed, appended in place. A row is joined
// with the other input's rows of its key whose times lie in its interval
// when it arrives (a scan of that key's rows in memory; output is
// insert-only) and kept until the watermark passes the end of the interval
// in which rows of the other input can still match it. The cleanup is one
// sweep per watermark advance over a queue (sweepQueue, a radix heap)
// holding, per key and input, the time its earliest row expires: no timer
// per row. A row dropped so
// whose input is preserved by an outer join and that never matched goes out
// NULL-padded. A row behind the watermark (late: rows it would match may be
// gone) is dropped and counted in the job's dropped rows. The watermark
// goes on held back by the bounds, so that the rows emitted are not late
// downstream.
//
// state.Records writes each changed key's rows back as one record at
// checkpoints (state ijoinStateName), spills them all past the state
// budget and restores them, also at another parallelism; the sweeps of the
// keys out of memory (spilled, or restored without being loaded) are
// state.RecordDues, whose due times come from the operator (RecordDues,
// StoredDues).
func NewIntervalJoin(spec IntervalJoinSpec) func() Operator {
	spec.Residual = expr.CheapFirst(spec.Residual) // cheap operands of AND/OR first
	return func() Operator { return &intervalJoinOp{spec: spec} }
}

// ijoinStateName names the interval join's records: one per key, both
// inputs' rows (ijoinRecVersion). Checkpoints of the earlier layout (sorted
// maps "left" and "right" and a timer per row, through the keyed state)
// are refused on restore with a clear error.
const ijoinStateName = "ijoin.v2"

// ijoinRecVersion leads each stored record.
const ijoinRecVersion = 1

// ijKey is a slot's record: per input, the key's buffered rows ascending
// by time, each a meta value (its time, and whether it joined a row: see
// ijMeta) and then its values but the ones the input's layout leaves out
// (ijLayout), in one slice, so that a key's rows are
// one block of memory; and the expiry time of each input's entry in the
// sweep queue (math.MaxInt64: none). qat[i] is always the expiry of the
// first row of input i, or math.MaxInt64 when it has none, so that a
// sweep from a queue entry that is not stale knows that row expired
// without reading it (sweepSlot); a slot without a key has no row, so
// both its qat are math.MaxInt64 (removeSlot; a slot whose record
// DropRecords cleared has no queue entry), and every queue entry of a
// freed slot is stale without a look at the index. These fields are 64 bytes, one cache
// line in the slab's pages: a sweep reads one line of the record.
//
// inl is the record's own room for one row of an input whose layout is
// its meta value only (stride 1, as W10's (k, ts)): a key of such an input
// keeps its first row there (side[i] points into it, inline) and moves to
// room of its own (rowRoom) only when it holds a second. So a key of one
// row a side costs no allocation, and its rows are the record's second
// line, next to the first, rather than a line somewhere else in the heap.
// The record is 128 bytes: the slab's pages keep each in two lines.
type ijKey struct {
	side [2][]types.Value
	qat  [2]int64
	inl  [2]types.Value
}

// inline returns k's own room for one row of side, empty.
func (k *ijKey) inline(side int) []types.Value { return k.inl[side : side+1 : side+1][:0] }

// ownRoom reports whether k, the record of a free slot, keeps row room
// apart from its inline rooms (see retained): room for more than one
// value. A free slot's room for one value is its inline room: removeSlot
// keeps no other room of an input of stride 1, and room for a row of a
// greater stride holds more.
func (k *ijKey) ownRoom() bool { return cap(k.side[0]) > 1 || cap(k.side[1]) > 1 }

// ijMeta is a row's meta value: its time, as a BIGINT when the row has not
// joined a row yet, as a TIMESTAMP when it has.
func ijMeta(ts int64, matched bool) types.Value {
	if matched {
		return types.TimestampValue(ts)
	}
	return types.BigIntValue(ts)
}

func ijMatched(meta types.Value) bool { return meta.Kind() == types.KindTimestamp }

// ijSweep is an entry of the sweep queue: slot's rows of side expire from
// at on (their earliest row's end of interval). An entry whose at differs
// from the slot's qat is stale and skipped.
type ijSweep struct {
	at   int64
	slot int32
	side uint8
}

// ijLayout is how an input's buffered rows are stored: a meta value, then
// the columns kept, in order. A column whose value can be made again
// exactly is left out: the join key of an index of one integer key
// (key: the slot's key, as keyKind) and the time (time: the meta's time,
// as timeKind). W10's rows (k, ts) so take one value, not three. A row
// whose values in these columns are not plain values of the column's kind
// (plainInt) turns the input's layout to every column (widen).
type ijLayout struct {
	stride            int   // values a row takes: 1 + len(kept)
	kept              []int // the columns stored after the meta value
	key, time         int   // the columns left out, or -1
	keyKind, timeKind types.Kind
}

// plainInt reports whether v is the value that k and v.Int() make again
// (types.BigIntValue(v.Int()).WithKind(k)), so that a layout may leave it
// out.
func plainInt(v types.Value, k types.Kind) bool {
	return v.IsPlainInt(k)
}

type intervalJoinOp struct {
	spec IntervalJoinSpec
	// proc is the processing time PROCTIME() in the residual reads.
	proc    procClock
	name    string
	keyCols [2][]int
	times   [2]int
	w       [2]int
	lay     [2]ijLayout
	outer   [2]bool
	dropped *atomic.Int64
	delay   int64
	budget  int64
	opID    string

	st    *state.Records
	dues  *state.RecordDues // the sweeps of the keys out of memory
	keys  *state.KeyIndex   // key (its columns, in order) → slot
	recs  *state.Slab[ijKey]
	queue sweepQueue
	wm    int64 // the input watermark
	mem   int64 // estimated bytes of the buffered rows
	gen   int64 // snapshots and spills so far
	// retained counts the free slots that keep row slices for their next
	// key (removeSlot; an inline room is not one, ijKey.ownRoom);
	// trimFree releases them when they outnumber the keys, so that memory
	// follows the keys held, not their peak.
	retained int
	// pool holds per input the emptied row slices of room for 2, 4 and 8
	// rows (class c: 1<<c rows, c >= 1; a free slot keeps room for one
	// row itself), for the keys that grow next (rowRoom): a key's rows
	// live a while and go, so that growing keys reuse the room of the keys
	// gone rather than allocate. Each class keeps at most (keys +
	// retainSlack) >> c slices (trimPools), so memory follows the keys
	// held, not their peak.
	pool [2][ijClasses][][]types.Value

	keyRow  []types.Value // a row's key columns, for the index
	keyKind []types.Kind
	out     *types.Batch
	joined  []types.Value // left ++ right, for the residual (and a picked output)
	// pick, when set (pickOutput), is the output: per column, a column of
	// the joined row (left ++ right), which is made in joined first.
	pick []int
	tmp  ijKey         // a stored record decoded for its due times
	full []types.Value // a stored row with every column (AppendRecord)
	dec  []types.Value // an input's rows of a record, decoded (decodeRecord)
	// born holds per slot the snapshot generation in which its key was
	// added (-1: loaded from the store), kept only while the records are
	// backed by the store (spilled or restored without loading): a key
	// removed in the generation it was born in was never written, so the
	// store need not delete it. While they are not, Records knows that
	// itself (a key added since the last snapshot is fresh: Removed
	// writes no deletion), and a key's life reads and writes no born (a
	// cache line a key, in W10's churn of keys). A spill drops every key
	// from memory, so no key added while not backed is removed while
	// backed. Apart from ijKey, which it would take past a cache line.
	born []int64
	// peek holds per row of the chunk warmRows read ahead the slot
	// KeyIndex.PeekInt found for its key, or -1 (not found then: Find).
	peek [ijWarmRows]int32
	// warmSink sums the reads ahead (warmSweeps, warmRows), so that the
	// compiler keeps them.
	warmSink int64
}

var (
	_ StatefulOperator  = (*intervalJoinOp)(nil)
	_ WatermarkOperator = (*intervalJoinOp)(nil)
	_ state.DueSource   = (*intervalJoinOp)(nil)
	_ outputPicker      = (*intervalJoinOp)(nil)
)

// valueBytes is the memory of a types.Value; keyOverhead that of a key's
// slot, index entry and bookkeeping.
const (
	valueBytes  = 32
	keyOverhead = 256
)

// Open implements Operator.
func (o *intervalJoinOp) Open(ctx *OpContext) error {
	s := &o.spec
	o.name = ctx.Name
	if o.name == "" {
		o.name = "IntervalJoin"
	}
	if len(s.Left.Keys) != len(s.Right.Keys) || len(s.Left.Keys) == 0 {
		return fmt.Errorf("%s: %d left and %d right key columns", o.name, len(s.Left.Keys), len(s.Right.Keys))
	}
	o.keyCols = [2][]int{s.Left.Keys, s.Right.Keys}
	o.proc.open(clockOf(ctx))
	s.Residual = o.proc.bind(bindWatermark(ctx, s.Residual))
	o.times = [2]int{s.LeftTime, s.RightTime}
	o.w = [2]int{len(s.Left.Kinds), len(s.Right.Kinds)}
	o.outer = [2]bool{s.Type == LeftOuterJoin || s.Type == FullOuterJoin, s.Type == RightOuterJoin || s.Type == FullOuterJoin}
	o.dropped = ctx.Dropped
	o.delay = max(s.Upper, -s.Lower, 0) + 1
	o.budget = ctx.StateBudget
	o.opID = ctx.ID
	o.wm = NoWatermark
	nk := len(s.Left.Keys)
	o.keyRow = make([]types.Value, nk)
	o.keyKind = make([]types.Kind, nk)
	cols := make([]int, nk)
	for i, c := range s.Left.Keys {
		o.keyKind[i] = s.Left.Kinds[c]
		cols[i] = i
	}
	o.keys = state.NewKeyIndex(cols, o.keyKind)
	kinds := [2][]types.Kind{s.Left.Kinds, s.Right.Kinds}
	for side := range 2 {
		o.lay[side] = o.layout(side, kinds[side], true)
	}
	o.recs = state.NewSlab[ijKey](1)
	o.queue.last = math.MinInt64
	o.pick = nil
	o.out = types.NewBatch(o.w[0]+o.w[1], 256)
	o.joined = make([]types.Value, o.w[0]+o.w[1])
	o.full = make([]types.Value, max(o.w[0], o.w[1]))
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	st, err := state.NewRecords(state.RecordOptions{
		Name:           ijoinStateName,
		OperatorID:     ctx.ID,
		MaxParallelism: maxPar,
		Subtask:        ctx.Subtask,
		Parallelism:    ctx.Parallelism,
		Budget:         ctx.StateBudget,
		RecordBytes:    keyOverhead,
		Exclusive:      true,
	}, o)
	if err != nil {
		return err
	}
	o.st = st
	// A key's due times: when the earliest row of each input expires.
	o.dues, err = state.NewRecordDues(st, o, 2)
	return err
}

// InitState implements StatefulOperator. A checkpoint of the earlier
// layout (a keyed state with sorted maps "left" and "right") is refused.
func (o *intervalJoinOp) InitState(store *statestore.Store, restored bool) error {
	if restored {
		if err := o.checkOldLayout(store); err != nil {
			return fmt.Errorf("state of %s: %w", o.name, err)
		}
	}
	if err := o.dues.Attach(store, restored); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// errOldLayout reports a checkpoint of the interval join's first layout.
var errOldLayout = errors.New("the checkpoint holds this interval join's rows in the layout of an earlier Weir " +
	"(keyed sorted maps \"left\" and \"right\" with a timer per row), which this version does not read: " +
	"start the job without --restore, or finish it with the Weir that wrote the checkpoint")

// checkOldLayout fails if the restored store holds rows of the earlier
// layout in this subtask's key groups.
func (o *intervalJoinOp) checkOldLayout(store *statestore.Store) error {
	first, last := o.st.KeyGroups()
	for _, name := range []string{"left", "right"} {
		found, err := holdsState(store, o.opID, name, first, last)
		if err != nil {
			return err
		}
		if found {
			return errOldLayout
		}
	}
	return nil
}

// RecordDues implements state.DueSource: per input, the expiry of the
// key's earliest row.
func (o *intervalJoinOp) RecordDues(slot int32, dues []int64) {
	o.rowDues(o.rec(slot), dues)
}

// rowDues puts k's due times into dues: per input, the expiry of its
// earliest row (math.MaxInt64: no row).
func (o *intervalJoinOp) rowDues(k *ijKey, dues []int64) {
	for side := range 2 {
		dues[side] = math.MaxInt64
		if r := k.side[side]; len(r) > 0 {
			dues[side] = o.expiry(side, r[0].Int())
		}
	}
}

// StoredDues implements state.DueSource: RecordDues of a stored record.
func (o *intervalJoinOp) StoredDues(_, rec []byte, dues []int64) error {
	k := &o.tmp
	for i := range k.side {
		clear(k.side[i])
		k.side[i] = k.side[i][:0]
	}
	if err := o.decodeRecord(k, rec, -1); err != nil {
		return err
	}
	o.rowDues(k, dues)
	return nil
}

// FindRecord implements state.DueSource.
func (o *intervalJoinOp) FindRecord(key []byte) (int32, bool) {
	if err := o.decodeKey(key); err != nil {
		return 0, false
	}
	return o.keys.Find(o.keyRow)
}

// PrepareSnapshot implements StatefulOperator: Records writes the changed
// keys' records.
func (o *intervalJoinOp) PrepareSnapshot() error {
	if err := o.st.Snapshot(); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	o.gen++
	return nil
}

func (o *intervalJoinOp) drop() {
	if o.dropped != nil {
		o.dropped.Add(1)
	}
}

// expiry is the watermark from which a row of side at time t can match
// nothing more: a left row matches right rows up to t + Upper, a right
// row left rows up to t - Lower.
//
// It is at most math.MaxInt64-1: MaxInt64 means "no row" in the sweep
// queue, and the watermark at the end of input (MaxInt64) must still
// sweep a row whose interval reaches the end of time.
func (o *intervalJoinOp) expiry(side int, t int64) int64 {
	var e int64
	if side == 0 {
		e = satAdd(t, o.spec.Upper+1)
	} else {
		e = satAdd(t, 1-o.spec.Lower)
	}
	if e == math.MaxInt64 {
		e = math.MaxInt64 - 1
	}
	return e
}

// satAdd is a + b clamped to the int64 range.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// Process implements Operator.
func (o *intervalJoinOp) Process(input int, b *types.Batch, out Emitter) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("interval join: input port %d", input)
	}
	o.proc.tick()
	cols, tc := o.keyCols[input], o.times[input]
	peeked := len(cols) == 1 && o.keys.IntKeyed()
	for from := 0; from < b.Len(); from += ijWarmRows {
		to := min(from+ijWarmRows, b.Len())
		if peeked {
			o.warmRows(b, input, cols[0], from, to)
		}
		for i := from; i < to; i++ {
			if b.Kinds[i] != types.Insert {
				return fmt.Errorf("interval join: %s row on an insert-only input", b.Kinds[i])
			}
			row := b.Row(i)
			tv := row[tc]
			if tv.IsNull() || tv.Int() < o.wm {
				o.drop() // late, or no time
				continue
			}
			var null bool
			if len(cols) == 1 {
				// keyRow is set below, for a key not found ahead.
				null = row[cols[0]].IsNull()
			} else {
				for j, c := range cols {
					v := row[c]
					null = null || v.IsNull()
					o.keyRow[j] = v
				}
			}
			if null {
				if o.outer[input] {
					o.emitPadded(input, row, 0, nil)
					if err := o.flushFull(out); err != nil {
						return err
					}
				}
				continue
			}
			var s int32
			var ok bool
			switch p := o.peek[i-from]; {
			case peeked && p >= 0:
				// Found ahead (warmRows); the chunk's rows remove no key.
				s, ok = p, true
			case !o.st.Backed():
				// Every key is in memory: one probe finds the key or
				// adds it.
				if len(cols) == 1 {
					o.keyRow[0] = row[cols[0]]
				}
				if s, ok = o.keys.FindOrInsert(o.keyRow); !ok {
					o.initSlot(s)
				}
			default:
				if len(cols) == 1 {
					o.keyRow[0] = row[cols[0]]
				}
				if s, ok = o.keys.Find(o.keyRow); !ok {
					var err error
					if s, ok, err = o.st.Load(o.keys.Key()); err != nil {
						return fmt.Errorf("state of %s: %w", o.name, err)
					}
				}
				if !ok {
					s = o.keys.Insert(o.keyRow)
					o.initSlot(s)
				}
			}
			if err := o.add(s, input, tv.Int(), row, out); err != nil {
				return err
			}
		}
	}
	if err := o.flush(out); err != nil {
		return err
	}
	return o.spillIfOver()
}

// ijWarmRows is how many arriving rows Process reads ahead (warmRows) at a
// time.
const ijWarmRows = 64

// warmRows reads ahead, for rows from to to of b (of input, whose join key
// is their column col), what adding them will read: the key's entry in the
// index (its slot kept in peek, so that Process need not look it up
// again), then its record and the first row of the other input and the last
// of its own; for a key not in the index, the record of the free slot it
// will likely take and the room for rows that slot kept. As in
// warmSweeps, the reads of different rows overlap their cache misses.
// Only for an index of one integer key (KeyIndex.PeekInt).
func (o *intervalJoinOp) warmRows(b *types.Batch, input, col, from, to int) {
	var slots [ijWarmRows]int32
	n, fresh := 0, 0
	sink := int64(0)
	// The keys' entries in the index first, with no branch on what they
	// hold: the lookups below branch on it (found or not, about half the
	// rows of W10 each way), and a mispredicted branch waits on its miss.
	for i := from; i < to; i++ {
		sink += int64(o.keys.TouchInt(b.Vals[i*b.Width+col]))
	}
	for i := from; i < to; i++ {
		if s, ok := o.keys.PeekInt(b.Vals[i*b.Width+col]); ok {
			slots[n] = s
			o.peek[i-from] = s
			n++
		} else {
			o.peek[i-from] = -1
			fresh++
		}
	}
	// The keys not found take free slots, in the order NextFree gives
	// them: what the index keeps of them, their records, and the room
	// kept in them for rows of input.
	for j := range fresh {
		s, ok := o.keys.NextFree(j)
		if !ok {
			break
		}
		k := o.rec(s)
		sink += o.keys.TouchInfo(s) + int64(k.inl[0].Kind()) // both lines
		if r := k.side[input]; cap(r) > 0 {
			sink += int64(r[:1][0].Kind())
		}
	}
	var recs [ijWarmRows]*ijKey
	for j, s := range slots[:n] {
		k := o.rec(s)
		recs[j] = k
		sink += int64(len(k.side[1-input])) + int64(k.inl[0].Kind()) // both lines
	}
	for _, k := range recs[:n] {
		if r := k.side[1-input]; len(r) > 0 {
			sink += int64(r[0].Kind())
		}
		if r := k.side[input]; len(r) > 0 {
			sink += int64(r[len(r)-1].Kind())
		}
	}
	o.warmSink += sink
}

// initSlot readies slot s, which the index just gave a new key, with no
// rows.
func (o *intervalJoinOp) initSlot(s int32) {
	o.grow()
	k := o.rec(s)
	o.reuse(k)
	if cap(k.side[0]) == 0 || cap(k.side[1]) == 0 {
		o.inlineRooms(k)
	}
	k.qat = [2]int64{math.MaxInt64, math.MaxInt64}
	if o.st.Backed() {
		o.born[s] = o.gen
	}
	o.keys.Added(o.st, s)
	o.mem += keyOverhead
}

func (o *intervalJoinOp) rec(s int32) *ijKey { return o.recs.One(s) }

// inlineRooms gives record k, of a slot without rows, its inline room
// (ijKey.inl) for each input of one value a row that has no room.
func (o *intervalJoinOp) inlineRooms(k *ijKey) {
	for i := range k.side {
		if cap(k.side[i]) == 0 && o.lay[i].stride == 1 {
			k.side[i] = k.inline(i)
		}
	}
}

// intKey returns slot s's key as an integer, for expand (0 unless the
// index is of one integer key and the key is held as one).
func (o *intervalJoinOp) intKey(s int32) int64 {
	if o.keys.IntKeyed() {
		return o.keys.IntKey(s)
	}
	return 0
}

// layout returns the layout of side's rows, whose columns have kinds:
// with compact, leaving out the key (an index of one integer key, the
// column of an integer-stored kind) and the time (of an integer-stored
// kind, not the key) where it can; every column otherwise.
func (o *intervalJoinOp) layout(side int, kinds []types.Kind, compact bool) ijLayout {
	l := ijLayout{key: -1, time: -1}
	if compact {
		if kc := o.keyCols[side]; len(kc) == 1 && o.keys.IntKeyed() && state.IntStored(kinds[kc[0]]) {
			l.key, l.keyKind = kc[0], kinds[kc[0]]
		}
		if tc := o.times[side]; tc != l.key && state.IntStored(kinds[tc]) {
			l.time, l.timeKind = tc, kinds[tc]
		}
	}
	for c := range kinds {
		if c != l.key && c != l.time {
			l.kept = append(l.kept, c)
		}
	}
	l.stride = 1 + len(l.kept)
	return l
}

// fits reports whether row's values in the columns that l leaves out are
// made again exactly (plainInt).
func (l *ijLayout) fits(row []types.Value) bool {
	return (l.key < 0 || plainInt(row[l.key], l.keyKind)) && (l.time < 0 || plainInt(row[l.time], l.timeKind))
}

// expand writes a row stored in layout l (its meta value and the columns
// kept) of a key key (its integer, when l leaves the key out) into dst,
// every column.
func (o *intervalJoinOp) expand(l *ijLayout, key int64, stored, dst []types.Value) {
	for j, c := range l.kept {
		dst[c] = stored[1+j]
	}
	if l.key >= 0 {
		dst[l.key] = types.BigIntValue(key).WithKind(l.keyKind)
	}
	if l.time >= 0 {
		dst[l.time] = types.BigIntValue(stored[0].Int()).WithKind(l.timeKind)
	}
}

// store writes row's meta value (time t, matched) and the columns side's
// layout keeps into dst (stride values).
func (o *intervalJoinOp) store(side int, t int64, matched bool, row, dst []types.Value) {
	dst[0] = ijMeta(t, matched)
	for j, c := range o.lay[side].kept {
		dst[1+j] = row[c]
	}
}

// widen turns side's layout to every column: each key's rows of side are
// written again in full, and the pooled room, of the old stride, goes.
// A row whose left-out values would not be made again exactly (a value
// of another kind than its column's) calls it, once: rows of the planner's
// kinds never do.
func (o *intervalJoinOp) widen(side int) {
	old := o.lay[side]
	kinds := [2][]types.Kind{o.spec.Left.Kinds, o.spec.Right.Kinds}
	o.lay[side] = o.layout(side, kinds[side], false)
	stride := o.lay[side].stride
	if old.stride == stride {
		return
	}
	for s := range o.keys.Cap() {
		k := o.rec(s)
		rows := k.side[side]
		if !o.keys.Used(s) || len(rows) == 0 {
			continue
		}
		n := len(rows) / old.stride
		wide := make([]types.Value, n*stride)
		for i := range n {
			stored := rows[i*old.stride : (i+1)*old.stride]
			wide[i*stride] = stored[0]
			o.expand(&old, o.keys.IntKey(s), stored, wide[i*stride+1:(i+1)*stride])
		}
		k.side[side] = wide
		o.mem += int64(n*(stride-old.stride)) * valueBytes
	}
	o.pool[side] = [ijClasses][][]types.Value{}
}

// grow makes the records of every slot below the index's Cap addressable.
func (o *intervalJoinOp) grow() {
	n := int(o.keys.Cap())
	o.recs.Grow(int32(n))
	if n > len(o.born) {
		o.born = append(o.born, make([]int64, n-len(o.born))...)
	}
}

// add joins row (of side, at time t) with the other side's rows of slot s
// in its interval, and keeps it.
func (o *intervalJoinOp) add(s int32, side int, t int64, row []types.Value, out Emitter) error {
	k := o.rec(s)
	// The other side's times in the interval, saturated at the int64
	// range (a row near either end of time).
	lo, hi := satAdd(t, o.spec.Lower), satAdd(t, o.spec.Upper) // for a left row
	if side == 1 {
		lo, hi = satAdd(t, -o.spec.Upper), satAdd(t, -o.spec.Lower)
	}
	other := 1 - side
	rows := k.side[other]
	stride := o.lay[other].stride
	// The key, for the other side's rows that leave it out: row found
	// their slot by it (rows whose key is not a plain integer widened
	// their input's layout, see fits).
	key := int64(0)
	if o.lay[other].key >= 0 {
		key = row[o.keyCols[side][0]].Int()
	}
	matched := false
	for j := lowerBound(rows, stride, lo); j < len(rows); j += stride {
		meta := rows[j]
		if meta.Int() > hi {
			break
		}
		orow := rows[j : j+stride : j+stride]
		ok, err := o.matches(side, row, key, orow)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		matched = true
		if !ijMatched(meta) {
			rows[j] = ijMeta(meta.Int(), true)
		}
		if o.pick != nil {
			if o.spec.Residual == nil { // else matches made it
				o.joinInto(o.joined, side, row, key, orow)
			}
			o.emitPicked()
		} else {
			o.emit(side, row, key, orow)
		}
		if err := o.flushFull(out); err != nil {
			return err
		}
	}
	// Keep the row, in time order (usually at the end).
	if !o.lay[side].fits(row) {
		o.widen(side)
	}
	mine := k.side[side]
	stride = o.lay[side].stride
	n := len(mine)
	i := n
	for i > 0 && mine[i-stride].Int() > t {
		i -= stride
	}
	if n+stride > cap(mine) {
		if n == 0 && stride == 1 {
			mine = k.inline(side) // its room went (sweepSlot)
		} else {
			mine = o.rowRoom(side, mine, n+stride)
		}
	}
	// Stored value by value: append or copy of a few values costs more in
	// the calls of the typed copy than it copies.
	mine = mine[:n+stride]
	if i < n {
		copy(mine[i+stride:], mine[i:n])
	}
	o.store(side, t, matched, row, mine[i:i+stride])
	k.side[side] = mine
	o.mem += int64(stride) * valueBytes
	o.st.Changed(s)
	if i == 0 {
		o.enqueueAt(k, s, side, o.expiry(side, t))
	}
	return nil
}

// lowerBound returns the index of the meta value of the first row at a
// time >= t in rows (stride values a row, ascending by time).
func lowerBound(rows []types.Value, stride int, t int64) int {
	lo, hi := 0, len(rows)/stride
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rows[m*stride].Int() < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo * stride
}

// matches reports whether row (of side) and the other side's row stored
// for the key key meet the residual condition.
func (o *intervalJoinOp) matches(side int, row []types.Value, key int64, stored []types.Value) (bool, error) {
	if o.spec.Residual == nil {
		return true, nil
	}
	o.joinInto(o.joined, side, row, key, stored)
	v, err := o.spec.Residual.Eval(o.joined)
	if err != nil {
		return false, fmt.Errorf("join condition %s: %w", o.spec.Residual, err)
	}
	return !v.IsNull() && v.Bool(), nil
}

// joinInto writes row (of side) joined with the other side's row stored
// for the key key (expand) into dst (left ++ right).
func (o *intervalJoinOp) joinInto(dst []types.Value, side int, row []types.Value, key int64, stored []types.Value) {
	wl := o.w[0]
	if side == 0 {
		copy(dst[:wl], row)
		o.expand(&o.lay[1], key, stored, dst[wl:])
	} else {
		o.expand(&o.lay[0], key, stored, dst[:wl])
		copy(dst[wl:], row)
	}
}

// emit appends row (of side) joined with the other side's row stored for
// the key key.
func (o *intervalJoinOp) emit(side int, row []types.Value, key int64, stored []types.Value) {
	o.joinInto(o.out.AppendEmpty(types.Insert), side, row, key, stored)
}

// emitPicked appends the columns pick of the joined row in joined.
func (o *intervalJoinOp) emitPicked() {
	// growRow, its room check inlined: a call a joined row cost about
	// as much as the pick. Every column is set below.
	b := o.out
	var dst []types.Value
	if n, w := len(b.Vals), len(o.pick); b.Width == w && cap(b.Vals)-n >= w && cap(b.Kinds) > len(b.Kinds) {
		b.Kinds = append(b.Kinds, types.Insert)
		b.Vals = b.Vals[:n+w]
		dst = b.Vals[n : n+w : n+w]
	} else {
		dst = growRow(b, types.Insert)
	}
	for k, c := range o.pick {
		dst[k] = o.joined[c]
	}
}

// pickOutput implements outputPicker: every row the join emits (joined,
// or NULL-padded) is made whole first, then picked (emitPicked), so its
// output is that of a Calc picking cols after it.
func (o *intervalJoinOp) pickOutput(cols []int) bool {
	if o.out.Len() > 0 {
		return false
	}
	for _, c := range cols {
		if c < 0 || c >= len(o.joined) {
			return false
		}
	}
	o.pick = slices.Clone(cols)
	o.out = types.NewBatch(len(cols), 256)
	return true
}

// emitPadded appends side's row, NULL-padded: row, or when nil the row
// stored for the key key.
func (o *intervalJoinOp) emitPadded(side int, row []types.Value, key int64, stored []types.Value) {
	if o.pick != nil {
		o.padInto(o.joined, side, row, key, stored)
		o.emitPicked()
		return
	}
	o.padInto(o.out.AppendEmpty(types.Insert), side, row, key, stored)
}

// padInto writes side's row, NULL-padded, into dst (left ++ right): row,
// or when nil the row stored for the key key.
func (o *intervalJoinOp) padInto(dst []types.Value, side int, row []types.Value, key int64, stored []types.Value) {
	wl := o.w[0]
	mine, pad := dst[:wl], dst[wl:]
	if side == 1 {
		mine, pad = dst[wl:], dst[:wl]
	}
	clear(pad)
	if row != nil {
		copy(mine, row)
	} else {
		o.expand(&o.lay[side], key, stored, mine)
	}
}

// flushFull emits the output batch once it is full.
func (o *intervalJoinOp) flushFull(out Emitter) error {
	if o.out.Len() < 1024 {
		return nil
	}
	return o.flush(out)
}

func (o *intervalJoinOp) flush(out Emitter) error {
	if o.out.Len() == 0 {
		return nil
	}
	err := out.Emit(o.out)
	o.out.Reset()
	return err
}

// enqueue puts slot s's side in the sweep queue at the expiry of its
// first row, unless it is there for an earlier time.
func (o *intervalJoinOp) enqueue(s int32, side int) {
	k := o.rec(s)
	r := k.side[side]
	if len(r) == 0 {
		return
	}
	o.enqueueAt(k, s, side, o.expiry(side, r[0].Int()))
}

// enqueueAt is enqueue given the expiry at of slot s's (record k's) first
// row of side.
func (o *intervalJoinOp) enqueueAt(k *ijKey, s int32, side int, at int64) {
	if at >= k.qat[side] {
		return
	}
	k.qat[side] = at
	o.queue.push(ijSweep{at: at, slot: s, side: uint8(side)})
}

// ProcessWatermark implements WatermarkOperator: it drops the rows whose
// intervals the watermark closed (one sweep over the keys whose earliest
// rows expire), emitting the unmatched ones of a preserved side
// NULL-padded, then passes the watermark on held back by the longest time
// a row waits for its matches, so that no output row (a padded one emitted
// at its interval's end) is behind it.
func (o *intervalJoinOp) ProcessWatermark(wm int64, out Emitter) error {
	if wm > o.wm {
		o.wm = wm
		if err := o.sweep(out); err != nil {
			return err
		}
		o.trimPools()
	}
	if err := o.flush(out); err != nil {
		return err
	}
	if err := o.spillIfOver(); err != nil {
		return err
	}
	if wm != MaxWatermark && wm != NoWatermark {
		wm -= o.delay
	}
	return ForwardWatermark(out, wm)
}

// sweepTo is the expiry up to which the watermark sweeps: the watermark,
// but MaxInt64-2 at MaxInt64-1, since expiry caps MaxInt64 to MaxInt64-1
// (a row of true expiry MaxInt64 may still match a row at MaxInt64-1,
// which is not late then); such rows go at the +∞ watermark.
func (o *intervalJoinOp) sweepTo() int64 {
	if o.wm == math.MaxInt64-1 {
		return math.MaxInt64 - 2
	}
	return o.wm
}

// sweep drops every row that expired at the watermark.
func (o *intervalJoinOp) sweep(out Emitter) error {
	err := o.dues.Due(o.sweepTo(), func(s int32, side int) error {
		// The key may also be queued (it is in memory): its entry goes
		// stale, and sweepSlot queues the key again at its first row's
		// expiry, so that qat stays that expiry (see ijKey).
		k := o.rec(s)
		k.qat[side] = math.MaxInt64
		return o.sweepSlot(s, k, side, false, out)
	})
	if err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return o.queue.due(o.sweepTo(), func(es []ijSweep) error {
		var recs [sweepChunk]*ijKey
		o.warmSweeps(es, &recs)
		for i, e := range es {
			// A slot without a key has no queue time (qat MaxInt64, see
			// ijKey): its entries are stale too.
			k := recs[i]
			if k.qat[e.side] != e.at {
				continue // stale
			}
			k.qat[e.side] = math.MaxInt64
			// e.at is the first row's expiry (qat), at or before the
			// watermark: that row expired.
			if err := o.sweepSlot(e.slot, k, int(e.side), true, out); err != nil {
				return err
			}
		}
		return nil
	})
}

// warmSweeps reads ahead what the sweeps es will read: each slot's record,
// then its first row of the side and, when the key has no row of the
// other side (the sweep will likely remove it), its entry in the index. A
// sweep of a slot not in the CPU's caches costs a few misses one after
// another (the record gives the rows); here the reads of different slots
// do not depend on each other, so the CPU overlaps their misses, and the
// sweeps that follow find them in its caches.
//
// It puts each slot's record in recs, for the sweeps (es holds at most
// sweepChunk).
func (o *intervalJoinOp) warmSweeps(es []ijSweep, recs *[sweepChunk]*ijKey) {
	sink := int64(0)
	es = es[:min(len(es), sweepChunk)]
	for i, e := range es {
		k := o.rec(e.slot)
		recs[i] = k
		sink += k.qat[e.side]
	}
	for i, e := range es {
		k := recs[i]
		if k.qat[e.side] != e.at {
			continue // stale (a slot without a key among them)
		}
		// The rows are read only past the first one, which the sweep
		// knows expired, or for its matched flag (see sweepSlot).
		if r := k.side[e.side]; len(r) > o.lay[e.side].stride || (len(r) > 0 && o.outer[e.side]) {
			sink += int64(r[0].Kind())
		}
		if len(k.side[1-e.side]) == 0 {
			sink += int64(o.keys.Touch(e.slot))
			if o.st.Backed() {
				sink += o.born[e.slot]
			}
		}
	}
	o.warmSink += sink
}

// sweepSlot drops slot s's rows of side that expired, emitting the
// unmatched ones of a preserved side; a key left without rows is removed.
// With first, the caller knows that the first row expired (a queue entry
// at its expiry, qat), which is then not read unless its side is
// preserved: a key of one row (most of W10's) is swept without reading
// its rows' memory.
func (o *intervalJoinOp) sweepSlot(s int32, k *ijKey, side int, first bool, out Emitter) error {
	rows := k.side[side]
	stride := o.lay[side].stride
	n, limit := 0, o.sweepTo()
	for n < len(rows) && ((first && n == 0) || o.expiry(side, rows[n].Int()) <= limit) {
		if o.outer[side] && !ijMatched(rows[n]) {
			o.emitPadded(side, nil, o.intKey(s), rows[n:n+stride:n+stride])
			if err := o.flushFull(out); err != nil {
				return err
			}
		}
		n += stride
	}
	if n > 0 {
		m := len(rows) - n
		if c := cap(rows); c > ijShrinkRows*stride && 4*m < c {
			// Most of the room is empty: a key that buffered many rows
			// and keeps a few gives the rest back, so that a key living
			// on holds memory for its rows, not for its peak.
			// (The old room, past the classes, is not pooled.)
			k.side[side] = nil
			if m > 0 {
				k.side[side] = append(o.take(side, m, 2*m), rows[n:]...)
			}
		} else {
			if m > 0 {
				copy(rows, rows[n:])
			}
			if stride > 1 {
				for j := m; j < len(rows); j++ {
					rows[j] = types.Value{} // drop references
				}
			} // else meta values only, which hold none
			k.side[side] = rows[:m]
		}
		o.mem -= int64(n) * valueBytes
	}
	if len(k.side[0]) == 0 && len(k.side[1]) == 0 {
		return o.removeSlot(s, k)
	}
	if n > 0 {
		o.st.Changed(s)
	}
	if r := k.side[side]; len(r) > 0 {
		o.enqueueAt(k, s, side, o.expiry(side, r[0].Int()))
	}
	return nil
}

// removeSlot forgets slot s (it has no rows), in memory and in the store.
func (o *intervalJoinOp) removeSlot(s int32, k *ijKey) error {
	if o.st.Backed() && o.born[s] == o.gen {
		o.st.Forget(s) // never written
	} else if err := o.st.Removed(s); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	o.keys.Remove(s)
	for i := range k.side {
		r := k.side[i]
		if o.lay[i].stride == 1 {
			// Meta values only, which hold no references: the inline
			// room is kept, room of its own goes (to the pool when for
			// 2 rows or more).
			if cap(r) > 1 {
				o.release(i, r)
			}
			if cap(r) == 1 && &r[:1][0] == &k.inl[i] {
				k.side[i] = k.side[i][:0]
			} else {
				k.side[i] = k.inline(i)
			}
			continue
		}
		if len(r) > 0 {
			clear(r) // drop references
		}
		k.side[i] = r[:0]
		if cap(r) >= 2*o.lay[i].stride {
			// Room for one row, what most new keys take, is kept for the
			// slot's next key; more goes to the pool, for keys that grow.
			// Keeping room for a few rows in the slot let every slot's
			// room creep up to the most any of its keys ever held (W10:
			// the row slices 5.7 MiB after 30 s, 11.9 MiB after 5
			// minutes).
			o.release(i, r)
			k.side[i] = nil
		}
	}
	k.qat = [2]int64{math.MaxInt64, math.MaxInt64}
	o.mem -= keyOverhead
	if k.ownRoom() {
		o.retained++
		if o.retained > o.keys.Len()+retainSlack {
			o.trimFree()
		}
	}
	return nil
}

// retainSlack is how many more free slots than keys may keep their row
// slices.
const retainSlack = 1024

// ijShrinkRows is the room, in rows, above which a key's row slice that a
// sweep leaves three quarters empty is reallocated to fit (sweepSlot).
const ijShrinkRows = 8

// ijClasses bounds the pool's classes: room for 2, 4 and 8 rows.
const ijClasses = 4

// rowRoom returns rows (of side) moved to room for at least need values
// (take); rows' room goes to the pool (release).
func (o *intervalJoinOp) rowRoom(side int, rows []types.Value, need int) []types.Value {
	dst := append(o.take(side, need, 2*cap(rows)), rows...)
	o.release(side, rows)
	return dst
}

// take returns an empty slice with room for at least need values of side:
// the smallest class that fits, from the pool if it has one (room for one
// row is always new); past the classes a new one with room for need or
// more (at least least).
func (o *intervalJoinOp) take(side, need, least int) []types.Value {
	stride := o.lay[side].stride
	c := 0
	for c < ijClasses && stride<<c < need {
		c++
	}
	if c == ijClasses {
		return make([]types.Value, 0, max(need, least))
	}
	p := o.pool[side][c]
	if len(p) == 0 {
		return make([]types.Value, 0, stride<<c)
	}
	dst := p[len(p)-1]
	p[len(p)-1] = nil
	o.pool[side][c] = p[:len(p)-1]
	return dst
}

// release gives room rows (of side), which no key uses any more, to the
// pool, its values cleared, if it is of the size of a class >= 1 and the
// class has room; the garbage collector takes it otherwise.
func (o *intervalJoinOp) release(side int, rows []types.Value) {
	stride := o.lay[side].stride
	c := 1
	for c < ijClasses && stride<<c < cap(rows) {
		c++
	}
	if c == ijClasses || stride<<c != cap(rows) || len(o.pool[side][c]) >= (o.keys.Len()+retainSlack)>>c {
		return
	}
	clear(rows[:cap(rows)])
	o.pool[side][c] = append(o.pool[side][c], rows[:0])
}

// trimPools drops the pooled room each class holds beyond its share of
// the keys held now ((keys + retainSlack) >> c slices).
func (o *intervalJoinOp) trimPools() {
	for side := range o.pool {
		for c, p := range o.pool[side] {
			if limit := (o.keys.Len() + retainSlack) >> c; len(p) > limit {
				clear(p[limit:])
				o.pool[side][c] = p[:limit]
			}
		}
	}
}

// reuse takes slot record k, free until now, for a new key.
func (o *intervalJoinOp) reuse(k *ijKey) {
	if o.retained > 0 && k.ownRoom() {
		o.retained--
	}
}

// trimFree releases the row slices of the free slots that new keys will
// take last (the deepest in the index's free list) until at most half as
// many free slots as keys keep them: the slots taken next keep theirs, so
// a number of keys that rises and falls (W10's, between two watermarks)
// does not make every new key allocate its rows' slice after each trim.
func (o *intervalJoinOp) trimFree() {
	keep := o.keys.Len() / 2
	for j := o.keys.FreeLen() - 1; j >= 0 && o.retained > keep; j-- {
		s, _ := o.keys.NextFree(j)
		if k := o.rec(s); k.ownRoom() {
			k.side = [2][]types.Value{}
			o.retained--
		}
	}
}

// spillIfOver writes every key's rows to the store and drops them from
// memory when they outgrow the state budget (with a store).
func (o *intervalJoinOp) spillIfOver() error {
	if !o.st.Persisted() || o.budget <= 0 || o.mem <= o.budget {
		return nil
	}
	if err := o.dues.Spill(); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	o.gen++
	return nil
}

// Finish implements Operator. At the end of bounded input the +∞
// watermark has swept every row.
func (o *intervalJoinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *intervalJoinOp) Close() error { return nil }

// AppendRecordKey implements state.RecordSource.
func (o *intervalJoinOp) AppendRecordKey(dst []byte, slot int32) []byte {
	return o.keys.AppendKey(dst, slot)
}

// AppendRecord implements state.RecordSource: ijoinRecVersion, then per
// input the number of rows (uvarint) and each row's matched flag (a byte)
// and values (state.AppendValue each), in time order.
func (o *intervalJoinOp) AppendRecord(dst []byte, slot int32) []byte {
	k := o.rec(slot)
	key := o.intKey(slot)
	dst = append(dst, ijoinRecVersion)
	for side := range 2 {
		rows := k.side[side]
		l := &o.lay[side]
		full := o.full[:o.w[side]]
		dst = binary.AppendUvarint(dst, uint64(len(rows)/l.stride))
		for j := 0; j < len(rows); j += l.stride {
			f := byte(0)
			if ijMatched(rows[j]) {
				f = 1
			}
			dst = append(dst, f)
			o.expand(l, key, rows[j:j+l.stride], full)
			for _, v := range full {
				dst = state.AppendValue(dst, v)
			}
		}
	}
	return dst
}

// decodeRecord decodes a stored record into k's rows (appended): slot's,
// in the inputs' layouts (widened if a row does not fit one), or with
// slot < 0 (StoredDues: only the first row's meta is read) every column.
func (o *intervalJoinOp) decodeRecord(k *ijKey, rec []byte, slot int32) error {
	if len(rec) == 0 || rec[0] != ijoinRecVersion {
		return fmt.Errorf("interval join record of unknown version (want %d)", ijoinRecVersion)
	}
	rec = rec[1:]
	kinds := [2][]types.Kind{o.spec.Left.Kinds, o.spec.Right.Kinds}
	for side := range 2 {
		n, m := binary.Uvarint(rec)
		if m <= 0 || n > uint64(len(rec)) {
			return errors.New("malformed row count")
		}
		rec = rec[m:]
		rows := o.dec[:0]
		if slot < 0 {
			rows = k.side[side]
		}
		last := int64(math.MinInt64)
		fits := true
		for range n {
			if len(rec) == 0 {
				return errors.New("truncated row")
			}
			matched := rec[0] != 0
			rec = rec[1:]
			at := len(rows)
			rows = append(rows, types.Value{})
			for c := range o.w[side] {
				v, rest, err := state.DecodeValue(rec)
				if err != nil {
					return fmt.Errorf("row value %d: %w", c, err)
				}
				rows = append(rows, state.WithColumnKind(v, kinds[side][c]))
				rec = rest
			}
			tv := rows[at+1+o.times[side]]
			if tv.IsNull() {
				return errors.New("row without a time")
			}
			if tv.Int() < last {
				return errors.New("rows out of time order")
			}
			last = tv.Int()
			rows[at] = ijMeta(last, matched)
			if l := &o.lay[side]; slot >= 0 && fits {
				row := rows[at+1:]
				fits = l.fits(row) && (l.key < 0 || row[l.key].Int() == o.keys.IntKey(slot))
			}
		}
		if slot < 0 {
			k.side[side] = rows
			continue
		}
		o.dec = rows
		if !fits {
			o.widen(side)
		}
		w := o.w[side]
		dst := k.side[side]
		for j := 0; j < len(rows); j += w + 1 {
			at := len(dst)
			dst = append(dst, make([]types.Value, o.lay[side].stride)...)
			o.store(side, rows[j].Int(), ijMatched(rows[j]), rows[j+1:j+1+w], dst[at:])
		}
		clear(rows)
		if cap(rows) > ijDecKeep {
			o.dec = nil // a key of many rows: its room is not kept
		}
		k.side[side] = dst
	}
	if len(rec) != 0 {
		return fmt.Errorf("%d bytes after the rows", len(rec))
	}
	return nil
}

// ijDecKeep is the most values of room decodeRecord keeps for the next
// record.
const ijDecKeep = 4096

// decodeKey decodes an encoded key into keyRow.
func (o *intervalJoinOp) decodeKey(key []byte) error {
	for i := range o.keyRow {
		v, rest, err := state.DecodeValue(key)
		if err != nil {
			return fmt.Errorf("malformed key %x: %w", key, err)
		}
		o.keyRow[i] = state.WithColumnKind(v, o.keyKind[i])
		key = rest
	}
	if len(key) != 0 {
		return fmt.Errorf("malformed key: %d bytes after its values", len(key))
	}
	return nil
}

// LoadRecord implements state.RecordSource.
func (o *intervalJoinOp) LoadRecord(key, rec []byte) (int32, error) {
	if err := o.decodeKey(key); err != nil {
		return 0, err
	}
	s := o.keys.Insert(o.keyRow)
	o.grow()
	k := o.rec(s)
	o.reuse(k)
	if cap(k.side[0]) == 0 || cap(k.side[1]) == 0 {
		o.inlineRooms(k)
	}
	k.qat = [2]int64{math.MaxInt64, math.MaxInt64}
	o.born[s] = -1
	if err := o.decodeRecord(k, rec, s); err != nil {
		o.keys.Remove(s)
		for i, r := range k.side {
			clear(r)
			k.side[i] = r[:0]
		}
		return 0, err
	}
	o.mem += keyOverhead
	for side := range 2 {
		o.mem += int64(len(k.side[side])) * valueBytes
		o.enqueue(s, side)
	}
	return s, nil
}

// DropRecords implements state.RecordSource: it forgets every in-memory
// key (written to the store; RecordDues kept their sweeps).
func (o *intervalJoinOp) DropRecords() {
	o.queue.reset()
	o.keys.Reset()
	o.recs.Clear()
	o.pool = [2][ijClasses][][]types.Value{}
	o.retained = 0
	o.mem = 0
}

// sweepQueue is a monotone priority queue of sweeps (a radix heap): the
// sweeps due at a watermark are taken out together, and the watermark only
// advances. Bucket 0 holds the sweeps at or before last (never after the
// watermark, so they are due; see nextLast for how it advances); bucket
// i > 0 those whose time differs from last first in bit i-1 (counting from the
// lowest; times of the same sign order as unsigned, and bit 63 separates
// the signs), so a sweep moves to lower buckets a few times at most, each
// move sequential in memory, where a binary heap costs log(n) scattered
// reads per sweep. Start it with last = math.MinInt64.
//
// Buckets 1 to 64 hold their sweeps in fixed-size blocks from one pool,
// which a bucket gives back as it empties: each bucket in turn holds most
// of the sweeps (the one of the highest bit in which the times still
// differ from last, and as event time runs on, every higher bit's bucket
// once), so buckets that kept their own slices would each keep room for
// the peak number of sweeps (W10: 28 buckets, 7 MB a subtask for 40,000
// sweeps); the pool keeps room for the sweeps queued now, once, and due
// gives back what it holds beyond that (trim).
type sweepQueue struct {
	last int64
	b0   []ijSweep // bucket 0
	b    [65]sweepBucket
	n    int
	free []*sweepBlock // blocks no bucket holds
	// blocks counts the blocks held by buckets or free.
	blocks int
	// spare is the room of a bucket's block list that due took out of
	// it, for the next bucket due empties.
	spare []*sweepBlock
}

// sweepBlockLen is the number of sweeps in a block (4 KiB).
const sweepBlockLen = 256

type sweepBlock [sweepBlockLen]ijSweep

// sweepBucket is a bucket's sweeps, in blocks, all full but the last
// (tail, with room for room more); no blocks when empty. min is the
// earliest time of its sweeps (meaningful while it has blocks), so that due
// learns whether the bucket is due without reading it.
type sweepBucket struct {
	blocks []*sweepBlock
	tail   *sweepBlock
	room   int
	min    int64
}

// bucket returns the bucket of time at.
func (q *sweepQueue) bucket(at int64) int {
	if at <= q.last {
		return 0
	}
	return bits.Len64(uint64(at) ^ uint64(q.last)) // same sign: at > last
}

func (q *sweepQueue) push(e ijSweep) {
	q.n++
	i := q.bucket(e.at)
	if i == 0 {
		q.b0 = append(q.b0, e)
		return
	}
	b := &q.b[i]
	q.add(b, e)
	b.min = min(b.min, e.at)
}

// add appends e to bucket b; the caller lowers b.min to e.at (not here,
// so that add is inlined).
func (q *sweepQueue) add(b *sweepBucket, e ijSweep) {
	if b.room == 0 {
		q.grow(b)
	}
	b.tail[sweepBlockLen-b.room] = e
	b.room--
}

// grow gives bucket b a new empty tail block from the pool. Not inlined,
// so that add is.
//
//go:noinline
func (q *sweepQueue) grow(b *sweepBucket) {
	var blk *sweepBlock
	if k := len(q.free); k > 0 {
		blk = q.free[k-1]
		q.free[k-1] = nil
		q.free = q.free[:k-1]
	} else {
		blk = new(sweepBlock)
		q.blocks++
	}
	if len(b.blocks) == 0 {
		b.min = math.MaxInt64
	}
	b.blocks = append(b.blocks, blk)
	b.tail, b.room = blk, sweepBlockLen
}

// empty gives bucket b's blocks back to the pool.
func (q *sweepQueue) empty(b *sweepBucket) {
	q.free = append(q.free, b.blocks...)
	clear(b.blocks)
	b.blocks = b.blocks[:0]
	b.tail, b.room = nil, 0
}

// block returns the sweeps in bucket b's block k.
func (b *sweepBucket) block(k int) []ijSweep {
	if k == len(b.blocks)-1 {
		return b.tail[:sweepBlockLen-b.room]
	}
	return b.blocks[k][:]
}

// sweepChunk is the most sweeps due hands fn at a time.
const sweepChunk = 64

// due calls fn for every sweep at or before wm, up to sweepChunk at a
// time (fn may push more; the slice is due's, valid during the call).
func (q *sweepQueue) due(wm int64, fn func([]ijSweep) error) error {
	var chunk [sweepChunk]ijSweep
	defer q.trim()
	for {
		for len(q.b0) > 0 {
			// A chunk from the end, in the order taken, copied out: fn
			// may push to b0.
			n := min(len(q.b0), sweepChunk)
			c := chunk[:n]
			for i := range c {
				c[i] = q.b0[len(q.b0)-1-i]
			}
			q.b0 = q.b0[:len(q.b0)-n]
			q.n -= n
			if err := fn(c); err != nil {
				return err
			}
		}
		i := 1
		for i < len(q.b) && len(q.b[i].blocks) == 0 {
			i++
		}
		if i == len(q.b) {
			return nil
		}
		b := &q.b[i]
		if b.min > wm {
			return nil
		}
		// Every sweep of bucket i moves to a lower bucket, those due
		// straight to fn in chunks (not through b0, whose room would
		// grow to the most sweeps ever due at once). last goes to the
		// watermark, or to the bucket's highest time if lower: any time
		// from the bucket's min to that keeps the bits of last from bit
		// i on, which place the sweeps of the buckets above, and every
		// sweep of bucket i that is due goes to bucket 0 in this one
		// move. fn may push to bucket i again, so its blocks are taken
		// out of it first; each goes back to the pool once read.
		q.last = q.nextLast(i, wm)
		blocks, tail := b.blocks, sweepBlockLen-b.room
		b.blocks, q.spare = q.spare[:0], nil
		b.tail, b.room = nil, 0
		n := 0
		for k, blk := range blocks {
			es := blk[:]
			if k == len(blocks)-1 {
				es = blk[:tail]
			}
			for _, e := range es {
				j := q.bucket(e.at)
				if j != 0 {
					bj := &q.b[j]
					q.add(bj, e)
					bj.min = min(bj.min, e.at)
					continue
				}
				chunk[n] = e
				if n++; n == sweepChunk {
					q.n -= n
					if err := fn(chunk[:n]); err != nil {
						return err
					}
					n = 0
				}
			}
			q.free = append(q.free, blk)
			blocks[k] = nil
		}
		q.spare = blocks[:0]
		if n > 0 {
			q.n -= n
			if err := fn(chunk[:n]); err != nil {
				return err
			}
		}
	}
}

// trim gives blocks of the pool back to the garbage collector while it
// holds more than the buckets do (plus a few), half the excess at a time:
// the pool follows the sweeps queued now, not the most ever queued.
func (q *sweepQueue) trim() {
	held := q.blocks - len(q.free)
	excess := len(q.free) - held - sweepPoolSlack
	if excess <= 0 {
		return
	}
	drop := (excess + 1) / 2
	k := len(q.free) - drop
	clear(q.free[k:])
	q.free = q.free[:k]
	q.blocks -= drop
}

// sweepPoolSlack is how many more free blocks than blocks in buckets the
// pool keeps.
const sweepPoolSlack = 16

// nextLast returns the time last may advance to when bucket i, the lowest
// holding sweeps, is due at wm: wm, or the highest time bucket i can hold
// (last's bits from bit i on, then ones) if lower. Bucket 64 (the times
// of the other sign than last: last < 0 <= them) goes on to MaxInt64.
func (q *sweepQueue) nextLast(i int, wm int64) int64 {
	if i >= 64 {
		return wm
	}
	mask := uint64(1)<<uint(i) - 1
	return min(wm, int64(uint64(q.last)&^mask|mask))
}

// reset empties the queue.
func (q *sweepQueue) reset() {
	q.b0 = q.b0[:0]
	for i := range q.b {
		q.empty(&q.b[i])
	}
	q.n = 0
}

// timeKey is a map key of rows by time: the time, then the encoded row
// (the temporal join keeps its versions so).
type timeKey struct {
	ts  int64
	row []byte
}

type timeKeyCodec struct{}

func (timeKeyCodec) Append(dst []byte, k timeKey) []byte {
	return append(state.Int64{}.Append(dst, k.ts), k.row...)
}

func (timeKeyCodec) Decode(src []byte) (timeKey, error) {
	if len(src) < 8 {
		return timeKey{}, errors.New("short time key")
	}
	ts, err := state.Int64{}.Decode(src[:8])
	return timeKey{ts: ts, row: src[8:]}, err
}
