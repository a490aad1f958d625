package exec

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// Two-phase window aggregation (the planner's
// 'table.optimizer.agg-phase-strategy'): a local operator before the hash
// exchange pre-aggregates the rows of each key and slice in memory and
// sends one partial row per key and slice (keys, slice end, row count,
// the accumulators' saved state); the global window aggregate
// (NewGlobalWindowAgg) merges the partials into its slices. The local
// operator holds a slice until rows come more slices after it than any row
// has come behind the newest slice (in-order input: until the next slice
// starts, so it holds about two slices), the watermark reaches the slice's
// first window (slice end - 1), a checkpoint barrier comes, its input ends
// or it holds localWindowMaxGroups groups (then the slices before the
// newest go out, so a slice whose rows are in order goes out once); it
// flushes before it passes the watermark or the barrier on, so it needs no
// state of its own and the global operator fires and checkpoints exactly
// what one phase would. A row for a slice that went out already makes a
// second partial row of that key and slice, which the global phase merges.

// PartialWindowCols is the number of columns a local window aggregate adds
// after the key columns: the slice end (BIGINT), the row count (BIGINT)
// and the accumulators' state (BYTES).
const PartialWindowCols = 3

// localWindowMaxGroups bounds the key-and-slice groups a local window
// aggregate holds before it flushes them all.
const localWindowMaxGroups = 1 << 16

// NewLocalWindowAgg returns a factory for the local phase of a two-phase
// window aggregate (TUMBLE, HOP or CUMULATE in event time) over rows of
// key columns keys: it emits partial rows of len(keys)+PartialWindowCols
// columns (see PartialWindowCols) for NewGlobalWindowAgg.
func NewLocalWindowAgg(keys []int, spec WindowSpec, calls []AggCall) func() Operator {
	return func() Operator { return &localWindowAggOp{keys: keys, spec: spec, calls: calls} }
}

// PartialGroupCols is the number of columns a local group aggregate adds
// after the key columns: the row count (BIGINT) and the accumulators'
// state (BYTES).
const PartialGroupCols = 2

// NewLocalGroupAgg returns a factory for the local phase of a two-phase
// GroupAggregate over insert-only rows: it pre-aggregates the rows of each
// key of keys in memory and emits, when the task flushes (every few
// milliseconds, when the input is idle, before a watermark or a barrier,
// at the end) or when it holds localWindowMaxGroups keys, a partial row
// per key of len(keys)+PartialGroupCols columns (the keys, the row count,
// the accumulators' state) for a GroupAggregate made with
// NewGlobalGroupAgg. It has no state.
func NewLocalGroupAgg(keys []int, calls []AggCall) func() Operator {
	return func() Operator { return &localWindowAggOp{keys: keys, calls: calls, group: true} }
}

// localWindowAggOp is the local window aggregate, and with group set the
// local group aggregate (one slice, no window). Its groups (a key in a
// slice) are numbered; accumulators keep their state in typed slices
// indexed by group number, as the GroupAgg's do.
type localWindowAggOp struct {
	keys  []int
	spec  WindowSpec
	group bool // the local phase of a GroupAggregate
	calls []AggCall
	accs  []accumulator
	args  []int
	fast  []fastAgg // COUNT and integer SUM/AVG, added in the row loop
	slow  []int     // the other accumulators (indexes of accs), updated a batch at a time
	name  string
	late  *atomic.Int64

	open      []*localSlice // the slices held, in no order
	spare     []*localSlice // flushed slices, for reuse
	last      *localSlice   // the slice of the previous row
	rows      []int64       // per group: rows accumulated
	free      []int32       // numbers of flushed groups, for reuse
	held      int           // groups held
	maxGroups int           // groups held before a flush (localWindowMaxGroups; tests lower it)
	newest    int64         // the end of the newest slice made
	reach     int64         // how many slices behind the newest a row not yet behind the watermark came, at most
	advanced  bool          // Process made a slice newer than every held one
	wm        int64         // the last watermark

	step    int64 // the slice size
	intKey  int   // the key column when there is exactly one, else -1
	maxCol  int
	gis     []int32
	keyBuf  []byte
	buf     []byte
	offs    []int
	out     *types.Batch
	lastOut Emitter // the emitter of the last Process call (emitPending)
}

// localSlice is a slice's groups: their index by key, and their numbers
// and key values in the order they were made (read in that order when the
// slice goes out, not by group number).
type localSlice struct {
	end     int64
	ints    *state.IntTable  // single integer-stored key → group
	groups  map[string]int32 // encoded key (state.AppendValue) → group
	members []int32
	keyVals []types.Value // len(keys) per member
}

// Open implements Operator.
func (o *localWindowAggOp) Open(ctx *OpContext) error {
	if !o.group {
		if err := o.spec.Validate(); err != nil {
			return fmt.Errorf("%s: %w", ctx.Name, err)
		}
		if o.spec.Kind == WindowSession || o.spec.Proctime {
			return fmt.Errorf("%s: a local window aggregate takes event-time TUMBLE, HOP or CUMULATE windows", ctx.Name)
		}
	}
	o.name = ctx.Name
	o.late = ctx.Late
	if o.late == nil {
		o.late = new(atomic.Int64)
	}
	o.maxGroups = localWindowMaxGroups
	o.newest, o.wm = math.MinInt64, NoWatermark
	o.maxCol = -1
	if !o.group {
		o.maxCol, o.step = o.spec.TimeCol, o.spec.sliceSize()
	}
	for _, k := range o.keys {
		o.maxCol = max(o.maxCol, k)
	}
	o.accs = make([]accumulator, len(o.calls))
	o.args = make([]int, len(o.calls))
	for i, c := range o.calls {
		acc, err := newAccumulator(c)
		if err != nil {
			return err
		}
		setInsertOnly(acc)
		o.accs[i] = acc
		o.args[i] = c.Arg
		if c.Func == AggCountStar {
			o.args[i] = -1
		}
		o.maxCol = max(o.maxCol, o.args[i])
		switch a := acc.(type) {
		case *countAcc:
			o.fast = append(o.fast, fastAgg{col: o.args[i], cnt: a})
		case *sumAcc:
			if !a.floatIn {
				o.fast = append(o.fast, fastAgg{col: o.args[i], sum: a})
				break
			}
			o.slow = append(o.slow, i)
		default:
			o.slow = append(o.slow, i)
		}
	}
	o.intKey = -1
	if len(o.keys) == 1 {
		o.intKey = o.keys[0]
	}
	extra := PartialWindowCols
	if o.group {
		extra = PartialGroupCols
	}
	o.out = types.NewBatch(len(o.keys)+extra, 256)
	return nil
}

// slice returns the held slice that ends at end, making it if need be.
func (o *localWindowAggOp) slice(end int64) *localSlice {
	if o.last != nil && o.last.end == end {
		return o.last
	}
	for _, s := range o.open {
		if s.end == end {
			o.last = s
			return s
		}
	}
	var s *localSlice
	if n := len(o.spare); n > 0 {
		s = o.spare[n-1]
		o.spare = o.spare[:n-1]
	} else {
		s = &localSlice{ints: state.NewIntTable(), groups: make(map[string]int32)}
	}
	s.end = end
	o.open = append(o.open, s)
	o.last = s
	if end > o.newest {
		o.newest, o.advanced = end, true
	}
	return s
}

// group1 returns the group of row's key in slice s, making it if need be.
func (o *localWindowAggOp) group1(s *localSlice, row []types.Value) int32 {
	inInts := o.intKey >= 0 && state.IntStored(row[o.intKey].Kind())
	if inInts {
		if gi, ok := s.ints.Get(row[o.intKey].Int()); ok {
			return gi
		}
	} else {
		o.keyBuf = o.keyBuf[:0]
		for _, k := range o.keys {
			o.keyBuf = state.AppendValue(o.keyBuf, row[k])
		}
		if gi, ok := s.groups[string(o.keyBuf)]; ok {
			return gi
		}
	}
	var gi int32
	if n := len(o.free); n > 0 {
		gi = o.free[n-1]
		o.free = o.free[:n-1]
	} else {
		gi = int32(len(o.rows))
		o.rows = append(o.rows, 0)
		for _, acc := range o.accs {
			acc.grow()
		}
	}
	for _, k := range o.keys {
		s.keyVals = append(s.keyVals, row[k])
	}
	if inInts {
		s.ints.Put(row[o.intKey].Int(), gi)
	} else {
		s.groups[string(o.keyBuf)] = gi
	}
	s.members = append(s.members, gi)
	o.held++
	return gi
}

// fastAgg is a COUNT, or a SUM or AVG of integers, that the local phase
// adds each row into as it finds the row's group (its state is typed, one
// slot per group), instead of in a later pass over the batch.
type fastAgg struct {
	col int // the argument column; -1 for COUNT(*)
	cnt *countAcc
	sum *sumAcc
}

// addFast adds row into group gi of the fast aggregates.
func (o *localWindowAggOp) addFast(gi int32, row []types.Value) {
	for i := range o.fast {
		f := &o.fast[i]
		if f.col >= 0 {
			v := &row[f.col]
			if v.IsNull() {
				continue
			}
			if f.sum != nil {
				st := &f.sum.s[gi]
				st.sum += uint64(v.Int())
				st.n++
				continue
			}
		}
		f.cnt.n[gi]++
	}
}

// retractionError is the error for a retraction row (kind) in the input:
// the local phase of a two-phase aggregation cannot take a row back.
func (o *localWindowAggOp) retractionError(kind types.RowKind) error {
	if o.group {
		return fmt.Errorf("%s: the local phase of a two-phase group aggregation takes insert-only input, got a %s row: "+
			"aggregate this updating input in one phase (SET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE')", o.name, kind)
	}
	return fmt.Errorf("%s: a local window aggregate takes insert-only input, got a %s row: window aggregates need an append-only input", o.name, kind)
}

// Process implements Operator: it finds every row's group and adds the
// row into the fast aggregates' state, then updates each other
// accumulator over the batch.
func (o *localWindowAggOp) Process(_ int, b *types.Batch, out Emitter) error {
	if o.maxCol >= b.Width {
		return fmt.Errorf("%s: column %d out of range of input width %d", o.name, o.maxCol, b.Width)
	}
	n := b.Len()
	gis := slices.Grow(o.gis[:0], n)[:n]
	o.gis = gis
	for i := range gis {
		if b.Kinds[i].IsRetraction() {
			return o.retractionError(b.Kinds[i])
		}
		gis[i] = -1
		row := b.Row(i)
		if o.group {
			gi := o.group1(o.slice(0), row)
			o.rows[gi]++
			gis[i] = gi
			o.addFast(gi, row)
			continue
		}
		v := row[o.spec.TimeCol]
		if v.IsNull() {
			o.late.Add(1) // no event time: no window takes it
			continue
		}
		ts := v.Int()
		sl := o.last
		if sl == nil || ts >= sl.end || ts < sl.end-o.step {
			sl = o.slice(o.spec.SliceEnd(ts)) // not the previous row's slice
			if sl.end < o.newest && sl.end-1 > o.wm {
				d := (uint64(o.newest) - uint64(sl.end)) / uint64(o.step)
				o.reach = max(o.reach, int64(min(d, localWindowMaxReach)))
			}
		}
		gi := o.group1(sl, row)
		o.rows[gi]++
		gis[i] = gi
		o.addFast(gi, row)
	}
	for _, a := range o.slow {
		o.accs[a].update(gis, b, o.args[a])
	}
	o.lastOut = out
	if o.held >= o.maxGroups {
		return o.flushFull(out)
	}
	if o.advanced && !o.group {
		o.advanced = false
		if done, ok := o.completeBefore(); ok && len(o.open) > 1 {
			return o.flush(out, func(end int64) bool { return end <= done })
		}
	}
	return nil
}

// localWindowMaxReach caps localWindowAggOp.reach: rows that far behind
// the newest slice turn the early flush off.
const localWindowMaxReach = 1 << 16

// completeBefore returns the end of the newest slice that no more rows are
// expected in: rows have come at most reach slices behind the newest
// slice, so the slices further behind are complete. ok is false when rows
// came too far behind for that to tell (or the times are at the ends of
// int64).
func (o *localWindowAggOp) completeBefore() (end int64, ok bool) {
	if o.reach >= localWindowMaxReach || o.step > math.MaxInt64/(o.reach+1) {
		return 0, false
	}
	back := (o.reach + 1) * o.step
	if o.newest < math.MinInt64+back {
		return 0, false
	}
	return o.newest - back, true
}

// flushFull makes room when the operator holds maxGroups groups: it
// flushes the slices before the newest (rows come mostly in time order,
// so those are complete and go out once, as at the watermark), or every
// slice if the newest holds half the groups or more.
func (o *localWindowAggOp) flushFull(out Emitter) error {
	var newest *localSlice
	for _, s := range o.open {
		if newest == nil || s.end > newest.end {
			newest = s
		}
	}
	if o.group || newest == nil || 2*len(newest.members) >= o.maxGroups {
		return o.flush(out, func(int64) bool { return true })
	}
	last := newest.end
	return o.flush(out, func(end int64) bool { return end < last })
}

// hasPending implements bufferingOperator: the local group aggregate holds
// partials until the task flushes. (The local window aggregate holds its
// slices until the watermark or a barrier, not a flush.)
func (o *localWindowAggOp) hasPending() bool { return o.group && o.held > 0 }

// emitPending implements bufferingOperator.
func (o *localWindowAggOp) emitPending() error {
	if !o.group || o.lastOut == nil {
		return nil
	}
	return o.flush(o.lastOut, func(int64) bool { return true })
}

// enableMiniBatch implements bufferingOperator: the local group aggregate
// always holds partials until the task flushes.
func (o *localWindowAggOp) enableMiniBatch(int) {}

// ProcessWatermark implements WatermarkOperator: the slices whose first
// window the watermark completes go out before the watermark does.
func (o *localWindowAggOp) ProcessWatermark(wm int64, out Emitter) error {
	o.wm = max(o.wm, wm)
	if err := o.flush(out, func(end int64) bool { return end-1 <= wm }); err != nil {
		return err
	}
	return ForwardWatermark(out, wm)
}

// flushBeforeBarrier implements barrierFlusher: everything held goes out
// before the checkpoint barrier, so the operator has no state to snapshot.
func (o *localWindowAggOp) flushBeforeBarrier(out Emitter) error {
	return o.flush(out, func(int64) bool { return true })
}

// flush emits a partial row per group of every held slice whose end
// satisfies due and forgets those slices.
func (o *localWindowAggOp) flush(out Emitter, due func(end int64) bool) error {
	kept := o.open[:0]
	var err error
	for _, s := range o.open {
		if err != nil || !due(s.end) {
			kept = append(kept, s)
			continue
		}
		err = o.emitSlice(s, out)
		o.release(s)
	}
	clear(o.open[len(kept):])
	o.open = kept
	o.last = nil
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

// emitSlice emits slice s's partial rows, a batch at a time. The
// accumulators' states of a batch share one string.
func (o *localWindowAggOp) emitSlice(s *localSlice, out Emitter) error {
	nk := len(o.keys)
	const chunk = 1024
	for from := 0; from < len(s.members); from += chunk {
		part := s.members[from:min(from+chunk, len(s.members))]
		o.buf, o.offs = o.buf[:0], o.offs[:0]
		for _, gi := range part {
			for _, acc := range o.accs {
				o.buf = acc.save(gi, o.buf)
			}
			o.offs = append(o.offs, len(o.buf))
		}
		all := string(o.buf)
		o.out.Reset()
		at := 0
		for j, gi := range part {
			row := growRow(o.out, types.Insert)
			m := from + j
			copy(row, s.keyVals[m*nk:(m+1)*nk])
			if o.group {
				row[nk] = types.BigIntValue(o.rows[gi])
				row[nk+1] = types.BytesValue(all[at:o.offs[j]])
			} else {
				row[nk] = types.BigIntValue(s.end)
				row[nk+1] = types.BigIntValue(o.rows[gi])
				row[nk+2] = types.BytesValue(all[at:o.offs[j]])
			}
			at = o.offs[j]
		}
		if err := out.Emit(o.out); err != nil {
			return err
		}
	}
	return nil
}

// release frees slice s's groups and keeps s for reuse.
func (o *localWindowAggOp) release(s *localSlice) {
	for _, gi := range s.members {
		for _, acc := range o.accs {
			acc.reset(gi)
		}
		o.rows[gi] = 0
		o.free = append(o.free, gi)
	}
	o.held -= len(s.members)
	clear(s.keyVals)
	if n := len(s.members); cap(s.members) > 4*max(n, 256) {
		// Much more than this slice needed: do not keep a burst's arrays.
		s.members, s.keyVals = nil, nil
	}
	s.members, s.keyVals = s.members[:0], s.keyVals[:0]
	s.ints.Reset()
	if len(s.groups) > 0 {
		clear(s.groups)
	}
	if len(o.spare) < localWindowSpareSlices {
		o.spare = append(o.spare, s)
	}
}

// localWindowSpareSlices bounds the flushed slices a local window
// aggregate keeps for reuse: a burst of open slices does not stay.
const localWindowSpareSlices = 8

// Finish implements Operator: what is still held goes out.
func (o *localWindowAggOp) Finish(out Emitter) error {
	return o.flush(out, func(int64) bool { return true })
}

// Close implements Operator.
func (o *localWindowAggOp) Close() error {
	o.open, o.spare, o.accs = nil, nil, nil
	return nil
}

var (
	_ WatermarkOperator = (*localWindowAggOp)(nil)
	_ barrierFlusher    = (*localWindowAggOp)(nil)
	_ bufferingOperator = (*localWindowAggOp)(nil)
)
