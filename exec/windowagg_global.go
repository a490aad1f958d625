package exec

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// NewGlobalWindowAgg returns a factory for the global phase of a two-phase
// window aggregate (event-time TUMBLE, HOP or CUMULATE): its input is the
// partial rows of NewLocalWindowAgg (nkeys key columns, then the slice
// end, the row count and the accumulators' state), which it merges into
// its slices; it emits each window's row (keys, window_start, window_end,
// window_time, results) once, when the watermark passes the window's end,
// then drops the slices no later window takes. A partial whose slice's
// windows have all fired is late: its rows are dropped and counted.
//
// Unlike the one-phase operator it keeps no keyed state and no timers: its
// keys, their open slices (one accumulator group each, in typed slices) and
// an index from slice end to keys are in memory, and state.Records writes
// a record per key (its slices) back at checkpoints and loads them on
// restore, at any parallelism. Window state is bounded by the open windows,
// so it is never spilled.
func NewGlobalWindowAgg(nkeys int, spec WindowSpec, calls []AggCall) func() Operator {
	return func() Operator { return &globalWindowOp{nk: nkeys, spec: spec, calls: calls} }
}

// globalWindowOp is the global window aggregate. Accumulator groups 0 and
// 1 are scratch (a partial being merged, a window's result); the others
// are cells, a key's slice each.
type globalWindowOp struct {
	nk    int
	spec  WindowSpec
	calls []AggCall
	accs  []accumulator
	name  string
	late  *atomic.Int64
	st    *state.Records

	wkeys    []winKey
	keyVals  []types.Value   // nk per key slot (keys not in ints)
	keyStr   []string        // per key slot: its encoding (keys not in ints)
	ints     *state.IntTable // a single integer-stored key → key slot
	groups   map[string]int32
	freeKeys []int32
	nCells   int32
	free     []int32           // free cells
	slices   map[int64][]int32 // slice end → the key slots with a cell in it
	ends     []int64           // the open slice ends, ascending
	wm       int64
	fired    int64 // every window ending at or before it has fired
	nLive    int   // key slots in use

	firing      []int32
	peaks       [2]int  // the most cells in use at a watermark, this span of watermarks and the one before
	nPeak       int     // watermarks in this span
	compactions int     // maybeCompact's compactions, for tests
	gis         []int32 // Process: per row, its key slot (-1: late)
	cis         []int32 // Process: per row, its cell (-1: late)
	keyBuf      []byte
	partBuf     []byte
	loadRow     []types.Value
	keyOne      [1]types.Value
	out         *types.Batch
}

// winKey is a key's slot: its open slices (sorted by end) and, for a key restored from a
// checkpoint, the end of the last window it fired then.
type winKey struct {
	cells   []winCell
	fired   int64
	stamp   int64 // the window end that last collected the key (fire)
	keyInt  int64
	keyKind types.Kind
	inInts  bool
	live    bool
}

// winCell is a key's slice: its end and its accumulator group.
type winCell struct {
	end int64
	acc int32
}

// globalWindowStateVersion leads every stored key record.
const globalWindowStateVersion = 1

var (
	_ StatefulOperator   = (*globalWindowOp)(nil)
	_ WatermarkOperator  = (*globalWindowOp)(nil)
	_ state.RecordSource = (*globalWindowOp)(nil)
)

// Open implements Operator.
func (o *globalWindowOp) Open(ctx *OpContext) error {
	if err := o.spec.Validate(); err != nil {
		return fmt.Errorf("%s: %w", ctx.Name, err)
	}
	if o.spec.Kind == WindowSession || o.spec.Proctime {
		return fmt.Errorf("%s: a global window aggregate takes event-time TUMBLE, HOP or CUMULATE windows", ctx.Name)
	}
	o.name = ctx.Name
	o.late = ctx.Late
	if o.late == nil {
		o.late = new(atomic.Int64)
	}
	o.accs = make([]accumulator, len(o.calls))
	for i, c := range o.calls {
		acc, err := newAccumulator(c)
		if err != nil {
			return err
		}
		setInsertOnly(acc)
		acc.grow()
		acc.grow()
		o.accs[i] = acc
	}
	o.nCells = 2
	o.ints, o.groups, o.slices = state.NewIntTable(), make(map[string]int32), make(map[int64][]int32)
	o.wm, o.fired = NoWatermark, math.MinInt64
	o.loadRow = make([]types.Value, o.nk)
	o.out = types.NewBatch(o.nk+3+len(o.calls), 256)
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	st, err := state.NewRecords(state.RecordOptions{
		Name: "windows", OperatorID: ctx.ID, MaxParallelism: maxPar, Subtask: ctx.Subtask, Parallelism: ctx.Parallelism,
		// Never spilled: the open windows bound the state, and firing
		// needs every key of a slice in memory.
		Budget: math.MaxInt64 / 4, RecordBytes: 64, Exclusive: true,
	}, o)
	if err != nil {
		return fmt.Errorf("%s: %w", ctx.Name, err)
	}
	o.st = st
	return nil
}

// InitState implements StatefulOperator.
func (o *globalWindowOp) InitState(store *statestore.Store, restored bool) error {
	if o.nLive > 0 {
		return fmt.Errorf("state of %s: store given after keys were made", o.name)
	}
	if err := o.st.Attach(store, restored); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// PrepareSnapshot implements StatefulOperator: the keys whose slices
// changed are written back.
func (o *globalWindowOp) PrepareSnapshot() error {
	if err := o.st.Snapshot(); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// Process implements Operator: it merges each partial row into its key's
// slice, a batch at a time in three passes (the keys, then their slices'
// cells, then the accumulators), so that the memory reads of different
// rows, independent within a pass, overlap.
func (o *globalWindowOp) Process(_ int, b *types.Batch, _ Emitter) error {
	nk, w := o.nk, b.Width
	if w != nk+PartialWindowCols {
		return fmt.Errorf("%s: partial rows of %d columns, want %d", o.name, w, nk+PartialWindowCols)
	}
	n := b.Len()
	gis := slices.Grow(o.gis[:0], n)[:n]
	cis := slices.Grow(o.cis[:0], n)[:n]
	o.gis, o.cis = gis, cis
	for i := range gis {
		if b.Kinds[i].IsRetraction() {
			return fmt.Errorf("%s: a window aggregate takes insert-only input, got %s", o.name, b.Kinds[i])
		}
		row := b.Vals[i*w : (i+1)*w]
		if o.spec.LastWindowEnd(row[nk].Int())-1 <= o.wm {
			o.late.Add(row[nk+1].Int())
			gis[i] = -1
			continue
		}
		gis[i] = o.key(row)
	}
	for i, gi := range gis {
		cis[i] = -1
		if gi < 0 {
			continue
		}
		se := b.Vals[i*w+nk].Int()
		k := &o.wkeys[gi]
		j, ok := o.findCell(k.cells, se)
		if ok {
			cis[i] = k.cells[j].acc
			continue
		}
		ci := o.newCell()
		k = &o.wkeys[gi]
		k.cells = slices.Insert(k.cells, j, winCell{end: se, acc: ci})
		o.addToSlice(se, gi)
		cis[i] = ci
	}
	for i, ci := range cis {
		if ci < 0 {
			continue
		}
		o.partBuf = append(o.partBuf[:0], b.Vals[i*w+nk+2].Str()...)
		src := o.partBuf
		for _, acc := range o.accs {
			var err error
			if src, err = mergeSaved(acc, ci, 0, src); err != nil {
				return fmt.Errorf("%s: partial row: %w", o.name, err)
			}
		}
		o.st.Changed(gis[i])
	}
	return nil
}

// findCell returns the index of the cell of the slice ending at se in
// cells (sorted by end), or where it goes and false. A key's slices are
// usually consecutive on the slice grid, so the index is first guessed
// from the first slice's end, then the last is tried, then a binary search
// finds it.
func (o *globalWindowOp) findCell(cells []winCell, se int64) (int, bool) {
	n := len(cells)
	if n == 0 {
		return 0, false
	}
	switch last := cells[n-1].end; {
	case se == last:
		return n - 1, true
	case se > last:
		return n, false
	}
	if d := se - cells[0].end; d >= 0 {
		if i := d / o.spec.sliceSize(); i < int64(n) && cells[i].end == se {
			return int(i), true
		}
	}
	return slices.BinarySearchFunc(cells, se, func(c winCell, se int64) int {
		return cmp.Compare(c.end, se)
	})
}

// key returns the slot of row's key (its first nk columns), making it if
// need be.
func (o *globalWindowOp) key(row []types.Value) int32 {
	inInts := o.nk == 1 && state.IntStored(row[0].Kind())
	if inInts {
		if gi, ok := o.ints.Get(row[0].Int()); ok {
			return gi
		}
	} else {
		o.keyBuf = o.keyBuf[:0]
		for _, v := range row[:o.nk] {
			o.keyBuf = state.AppendValue(o.keyBuf, v)
		}
		if gi, ok := o.groups[string(o.keyBuf)]; ok {
			return gi
		}
	}
	gi := o.newKey(row, inInts, o.keyBuf)
	if inInts {
		o.st.AddedInt(gi, row[0].Kind(), row[0].Int())
	} else {
		o.st.AddedKey(gi, o.keyBuf)
	}
	return gi
}

// newKey makes a key slot for the key values row[:nk] (encoded: their
// encoding, for a key not in ints) and registers it.
func (o *globalWindowOp) newKey(row []types.Value, inInts bool, encoded []byte) int32 {
	var gi int32
	if n := len(o.freeKeys); n > 0 {
		gi = o.freeKeys[n-1]
		o.freeKeys = o.freeKeys[:n-1]
	} else {
		gi = int32(len(o.wkeys))
		o.wkeys = append(o.wkeys, winKey{})
	}
	k := &o.wkeys[gi]
	k.cells, k.fired, k.stamp, k.live, k.inInts = k.cells[:0], math.MinInt64, math.MinInt64, true, inInts
	o.nLive++
	if inInts {
		k.keyInt, k.keyKind = row[0].Int(), row[0].Kind()
		o.ints.Put(k.keyInt, gi)
		return gi
	}
	for len(o.keyStr) <= int(gi) {
		o.keyStr = append(o.keyStr, "")
		o.keyVals = append(o.keyVals, make([]types.Value, o.nk)...)
	}
	s := string(encoded)
	o.keyStr[gi] = s
	copy(o.keyVals[int(gi)*o.nk:], row[:o.nk])
	o.groups[s] = gi
	return gi
}

// keyValues returns slot gi's key values (for a key in ints, valid until
// the next call).
func (o *globalWindowOp) keyValues(gi int32) []types.Value {
	if k := &o.wkeys[gi]; k.inInts {
		o.keyOne[0] = types.BigIntValue(k.keyInt).WithKind(k.keyKind)
		return o.keyOne[:]
	}
	return o.keyVals[int(gi)*o.nk : int(gi+1)*o.nk]
}

// removeKey forgets slot gi, which has no slices left.
func (o *globalWindowOp) removeKey(gi int32) error {
	if err := o.st.Removed(gi); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	k := &o.wkeys[gi]
	if k.inInts {
		o.ints.Del(k.keyInt)
	} else {
		delete(o.groups, o.keyStr[gi])
		o.keyStr[gi] = ""
		clear(o.keyVals[int(gi)*o.nk : int(gi+1)*o.nk])
	}
	k.live, k.cells = false, k.cells[:0]
	if cap(k.cells) > 8 {
		k.cells = nil // a burst's list: not kept for the slot's next key
	}
	o.freeKeys = append(o.freeKeys, gi)
	o.nLive--
	return nil
}

// newCell returns a free accumulator group.
func (o *globalWindowOp) newCell() int32 {
	if n := len(o.free); n > 0 {
		ci := o.free[n-1]
		o.free = o.free[:n-1]
		return ci
	}
	ci := o.nCells
	o.nCells++
	for _, acc := range o.accs {
		acc.grow()
	}
	return ci
}

// addToSlice records that key slot gi has a cell in the slice ending at se.
func (o *globalWindowOp) addToSlice(se int64, gi int32) {
	ks, ok := o.slices[se]
	if !ok {
		at, _ := slices.BinarySearch(o.ends, se)
		o.ends = slices.Insert(o.ends, at, se)
	}
	o.slices[se] = append(ks, gi)
}

// ProcessWatermark implements WatermarkOperator: it fires, in order, the
// windows whose end - 1 this watermark reached and the previous one did
// not (a slice that came after a window's end passed is not in it, as in
// one phase), then passes the watermark on.
func (o *globalWindowOp) ProcessWatermark(wm int64, out Emitter) error {
	prev := o.wm
	if wm <= prev {
		return ForwardWatermark(out, wm)
	}
	o.wm = wm
	o.notePeak()
	o.out.Reset()
	step := o.spec.sliceSize()
	e := int64(math.MinInt64)
	if prev != NoWatermark && prev < math.MaxInt64-1 {
		e = o.spec.SliceEnd(prev + 1) // the first window end after prev + 1 (window ends are on the slice grid)
	}
	for len(o.ends) > 0 {
		e = max(e, o.ends[0]) // no window before the first slice's has rows
		if e-1 > wm {
			break
		}
		if err := o.fire(e, out); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		o.fired = e
		e += step
	}
	if o.out.Len() > 0 {
		if err := out.Emit(o.out); err != nil {
			return err
		}
		o.out.Reset()
	}
	if err := o.maybeCompact(); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return ForwardWatermark(out, wm)
}

// globalWindowMinCells is the number of cells below which the global
// window aggregate never compacts its accumulators.
const globalWindowMinCells = 1 << 12

// globalWindowPeakSpan is the number of watermarks over which the global
// window aggregate keeps its peak of cells in use (twice: the current span
// and the one before).
const globalWindowPeakSpan = 64

// notePeak records the cells in use before a watermark fires windows.
func (o *globalWindowOp) notePeak() {
	live := int(o.nCells) - 2 - len(o.free)
	o.peaks[0] = max(o.peaks[0], live)
	if o.nPeak++; o.nPeak >= globalWindowPeakSpan {
		o.peaks[1], o.peaks[0], o.nPeak = o.peaks[0], 0, 0
	}
}

// maybeCompact gives memory back after a burst of open slices (a watermark
// held back, one input ahead of another): when the cells in use have
// stayed at a quarter or less of the cells the accumulators have room for
// over the last 64 to 128 watermarks, it moves the live cells into new
// accumulators of their size, trims the keys' cell lists and remakes the
// slice index, so that the state shrinks back with the open windows
// instead of staying at its largest. (The peak keeps the steady swing
// between watermarks, which fire many slices at once, from compacting
// after every one.)
func (o *globalWindowOp) maybeCompact() error {
	live := int(o.nCells) - 2 - len(o.free)
	if o.nCells <= globalWindowMinCells || 4*max(live, o.peaks[0], o.peaks[1]) > int(o.nCells) {
		return nil
	}
	accs := make([]accumulator, len(o.calls))
	for i, c := range o.calls {
		acc, err := newAccumulator(c)
		if err != nil {
			return err
		}
		setInsertOnly(acc)
		for range live + 2 {
			acc.grow()
		}
		accs[i] = acc
	}
	next := int32(2)
	for gi := range o.wkeys {
		k := &o.wkeys[gi]
		if !k.live {
			if cap(k.cells) > 0 {
				k.cells = nil
			}
			continue
		}
		if cap(k.cells) > 2*len(k.cells)+4 {
			k.cells = slices.Clone(k.cells)
		}
		for j := range k.cells {
			c := &k.cells[j]
			for i, acc := range o.accs {
				o.partBuf = acc.save(c.acc, o.partBuf[:0])
				if _, err := accs[i].load(next, o.partBuf); err != nil {
					return fmt.Errorf("window state: %w", err)
				}
			}
			c.acc = next
			next++
		}
	}
	o.accs, o.nCells, o.free = accs, next, nil
	o.peaks = [2]int{}
	o.compactions++
	ends := make(map[int64][]int32, len(o.ends))
	for _, se := range o.ends {
		ends[se] = o.slices[se]
	}
	o.slices, o.ends = ends, slices.Clone(o.ends)
	return nil
}

// fire emits the window that ends at end for every key with a slice in it
// (the merge of the key's slices in the window) and then drops the slices
// no later window takes.
func (o *globalWindowOp) fire(end int64, out Emitter) error {
	start := o.spec.WindowStart(end)
	step := o.spec.sliceSize()
	o.firing = o.firing[:0]
	for se := start + step; se <= end; se += step {
		for _, gi := range o.slices[se] {
			if k := &o.wkeys[gi]; k.stamp != end {
				k.stamp = end
				o.firing = append(o.firing, gi)
			}
		}
	}
	ts := types.TimestampValue
	if o.spec.LTZ {
		ts = types.TimestampLTZValue
	}
	for _, gi := range o.firing {
		k := &o.wkeys[gi]
		if end <= k.fired {
			continue // fired before the checkpoint this key was restored from
		}
		for _, acc := range o.accs {
			acc.reset(1)
			for _, c := range k.cells {
				if c.end > start && c.end <= end {
					acc.merge(1, c.acc)
				}
			}
		}
		row := growRow(o.out, types.Insert)
		copy(row, o.keyValues(gi))
		row[o.nk], row[o.nk+1], row[o.nk+2] = ts(start), ts(end), ts(end-1)
		for j, acc := range o.accs {
			row[o.nk+3+j] = acc.result(1)
		}
		if o.out.Len() >= 1024 {
			if err := out.Emit(o.out); err != nil {
				return err
			}
			o.out.Reset()
		}
	}
	for len(o.ends) > 0 && o.ends[0] <= end && o.spec.LastWindowEnd(o.ends[0]) <= end {
		if err := o.dropSlice(o.ends[0]); err != nil {
			return err
		}
		o.ends = o.ends[1:]
	}
	return nil
}

// dropSlice removes every key's cell of the slice that ends at se.
func (o *globalWindowOp) dropSlice(se int64) error {
	for _, gi := range o.slices[se] {
		k := &o.wkeys[gi]
		if j, ok := o.findCell(k.cells, se); ok {
			c := k.cells[j]
			for _, acc := range o.accs {
				acc.reset(c.acc)
			}
			o.free = append(o.free, c.acc)
			k.cells = slices.Delete(k.cells, j, j+1)
		}
		if len(k.cells) == 0 {
			if err := o.removeKey(gi); err != nil {
				return err
			}
		} else {
			o.st.Changed(gi)
		}
	}
	delete(o.slices, se)
	return nil
}

// AppendRecordKey implements state.RecordSource: slot gi's key in the
// order-preserving encoding.
func (o *globalWindowOp) AppendRecordKey(dst []byte, gi int32) []byte {
	if k := &o.wkeys[gi]; k.inInts {
		if k.keyKind == types.KindInt || k.keyKind == types.KindBigInt {
			return state.AppendInt64(dst, k.keyInt)
		}
		return state.AppendValue(dst, types.BigIntValue(k.keyInt).WithKind(k.keyKind))
	}
	return append(dst, o.keyStr[gi]...)
}

// AppendRecord implements state.RecordSource: the version; masks of the
// key columns of kind INT and TIMESTAMP_LTZ (which the key encoding does
// not tell from BIGINT and TIMESTAMP); the end of the last window the key
// has fired; the number of its slices, and each slice's end and
// accumulators' state.
func (o *globalWindowOp) AppendRecord(dst []byte, gi int32) []byte {
	var ints, ltz uint64
	for i, v := range o.keyValues(gi) {
		switch v.Kind() {
		case types.KindInt:
			ints |= 1 << i
		case types.KindTimestampLTZ:
			ltz |= 1 << i
		}
	}
	k := &o.wkeys[gi]
	dst = append(dst, globalWindowStateVersion)
	dst = binary.AppendUvarint(dst, ints)
	dst = binary.AppendUvarint(dst, ltz)
	dst = binary.AppendVarint(dst, max(k.fired, o.fired))
	dst = binary.AppendUvarint(dst, uint64(len(k.cells)))
	for _, c := range k.cells {
		dst = binary.AppendVarint(dst, c.end)
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for _, acc := range o.accs {
			dst = acc.save(c.acc, dst)
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst
}

var errWindowRecord = errors.New("bad window record")

// LoadRecord implements state.RecordSource: a restored key with its
// slices (a slice all of whose windows the key fired is dropped).
func (o *globalWindowOp) LoadRecord(key, rec []byte) (int32, error) {
	if len(rec) == 0 || rec[0] != globalWindowStateVersion {
		return 0, errors.New("window record of unknown version")
	}
	rest := rec[1:]
	ints, rest, err := readUvarint(rest)
	if err != nil {
		return 0, err
	}
	ltz, rest, err := readUvarint(rest)
	if err != nil {
		return 0, err
	}
	fired, rest, err := readVarint(rest)
	if err != nil {
		return 0, err
	}
	n, rest, err := readUvarint(rest)
	if err != nil {
		return 0, err
	}
	row := o.loadRow
	if err := decodeKeyColumns(key, row[:o.nk], nil, ints, ltz, "window key"); err != nil {
		return 0, err
	}
	gi := o.newKey(row, o.nk == 1 && state.IntStored(row[0].Kind()), key)
	o.wkeys[gi].fired = fired
	for range n {
		var end int64
		if end, rest, err = readVarint(rest); err != nil {
			return 0, err
		}
		if len(rest) < 4 || int(binary.BigEndian.Uint32(rest)) > len(rest)-4 {
			return 0, errWindowRecord
		}
		l := int(binary.BigEndian.Uint32(rest))
		src := rest[4 : 4+l]
		rest = rest[4+l:]
		if o.spec.LastWindowEnd(end) <= fired {
			continue
		}
		ci := o.newCell()
		for _, acc := range o.accs {
			if src, err = acc.load(ci, src); err != nil {
				return 0, err
			}
		}
		j, dup := o.findCell(o.wkeys[gi].cells, end)
		if dup {
			return 0, fmt.Errorf("%w: slice %d twice", errWindowRecord, end)
		}
		o.wkeys[gi].cells = slices.Insert(o.wkeys[gi].cells, j, winCell{end: end, acc: ci})
		o.addToSlice(end, gi)
	}
	return gi, nil
}

// DropRecords implements state.RecordSource; never called, as the
// records are never spilled.
func (o *globalWindowOp) DropRecords() {}

// stateSize returns the keys and slices (cells) the operator holds, for
// tests of bounded state.
func (o *globalWindowOp) stateSize() (keys, cells int) {
	return o.nLive, int(o.nCells) - 2 - len(o.free)
}

// Finish implements Operator: the final watermark fired every window.
func (o *globalWindowOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *globalWindowOp) Close() error {
	o.wkeys, o.keyVals, o.keyStr, o.slices, o.accs = nil, nil, nil, nil, nil
	return nil
}
