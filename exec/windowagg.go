package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// WindowKind is the kind of a window aggregate's windows.
type WindowKind uint8

// The window kinds (numbered for good: they are part of operator ids).
const (
	WindowTumble WindowKind = iota + 1
	WindowHop
	WindowCumulate
	WindowSession
)

func (k WindowKind) String() string {
	switch k {
	case WindowTumble:
		return "TUMBLE"
	case WindowHop:
		return "HOP"
	case WindowCumulate:
		return "CUMULATE"
	case WindowSession:
		return "SESSION"
	}
	return fmt.Sprintf("WindowKind(%d)", uint8(k))
}

// WindowSpec describes the windows of a window aggregate; times are in
// milliseconds.
type WindowSpec struct {
	Kind   WindowKind
	Size   int64 // TUMBLE, HOP, CUMULATE: the window's size
	Slide  int64 // HOP: the slide; CUMULATE: the step
	Offset int64 // TUMBLE, HOP, CUMULATE: the windows' shift from the epoch
	Gap    int64 // SESSION: the gap that closes a session
	// TimeCol is the input column of the time attribute (unused in
	// processing time).
	TimeCol int
	// Proctime assigns rows by the task's clock and fires windows on
	// processing-time timers; else by TimeCol and the watermark.
	Proctime bool
	// LTZ makes window_start, window_end and window_time TIMESTAMP_LTZ
	// values (a TIMESTAMP_LTZ time attribute), else TIMESTAMP.
	LTZ bool
}

// Validate says what is wrong with the spec, if anything (Flink's rules:
// a HOP's size and a CUMULATE's size are whole multiples of the slide or
// step).
func (w WindowSpec) Validate() error {
	switch w.Kind {
	case WindowTumble:
		if w.Size <= 0 {
			return fmt.Errorf("TUMBLE: the size must be positive, got %d ms", w.Size)
		}
	case WindowHop, WindowCumulate:
		what := "slide"
		if w.Kind == WindowCumulate {
			what = "step"
		}
		if w.Size <= 0 || w.Slide <= 0 {
			return fmt.Errorf("%s: the size and %s must be positive, got %d ms and %d ms", w.Kind, what, w.Size, w.Slide)
		}
		if w.Size%w.Slide != 0 {
			return fmt.Errorf("%s: the size (%d ms) must be a whole multiple of the %s (%d ms)", w.Kind, w.Size, what, w.Slide)
		}
	case WindowSession:
		if w.Gap <= 0 {
			return fmt.Errorf("SESSION: the gap must be positive, got %d ms", w.Gap)
		}
	default:
		return fmt.Errorf("unknown window kind %d", w.Kind)
	}
	if w.Offset != 0 && w.Kind != WindowSession && (w.Offset >= w.Size || w.Offset <= -w.Size) {
		return fmt.Errorf("%s: the offset (%d ms) must be smaller than the size (%d ms)", w.Kind, w.Offset, w.Size)
	}
	return nil
}

// floorMod is x mod m in [0, m).
func floorMod(x, m int64) int64 { return ((x % m) + m) % m }

// sliceSize is the size of the slices rows are added to: a window is the
// union of whole slices.
func (w WindowSpec) sliceSize() int64 {
	if w.Kind == WindowTumble {
		return w.Size
	}
	return w.Slide
}

// SliceEnd returns the end (exclusive) of the slice that holds time ts.
func (w WindowSpec) SliceEnd(ts int64) int64 {
	s := w.sliceSize()
	return ts - floorMod(ts-w.Offset, s) + s
}

// periodStart is the start of the CUMULATE period (or TUMBLE window) that
// holds ts.
func (w WindowSpec) periodStart(ts int64) int64 { return ts - floorMod(ts-w.Offset, w.Size) }

// WindowStart returns the start of the window that ends at end.
func (w WindowSpec) WindowStart(end int64) int64 {
	if w.Kind == WindowCumulate {
		return w.periodStart(end - 1)
	}
	return end - w.Size
}

// LastWindowEnd returns the end of the last window that the slice ending
// at sliceEnd is part of: the slice is needed until that window fires.
func (w WindowSpec) LastWindowEnd(sliceEnd int64) int64 {
	switch w.Kind {
	case WindowHop:
		return sliceEnd + w.Size - w.Slide
	case WindowCumulate:
		return w.periodStart(sliceEnd-1) + w.Size
	}
	return sliceEnd
}

// windowEnds calls fn with the end of every window the slice ending at
// sliceEnd is part of, in order.
func (w WindowSpec) windowEnds(sliceEnd int64, fn func(end int64) error) error {
	last := w.LastWindowEnd(sliceEnd)
	step := w.sliceSize()
	for e := sliceEnd; e <= last; e += step {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// NewWindowAgg returns a factory for the window aggregate: the rows
// (insert-only) are grouped by the key columns keys and by window, and
// each window's row (keys, window_start, window_end, window_time,
// results of calls) is emitted once, when the watermark (in processing
// time: the clock) passes the window's end; then its state and timer are
// dropped. TUMBLE, HOP and CUMULATE add each row to one slice (a window is
// the merge of its slices); SESSION keeps each key's open sessions and
// merges them when a row bridges them. Rows of windows that have already
// fired are late: dropped and counted (OpContext.Late).
func NewWindowAgg(keys []int, spec WindowSpec, calls []AggCall) func() Operator {
	return func() Operator { return &windowAggOp{keys: keys, spec: spec, calls: calls} }
}

// windowAggOp is the window aggregate. Its state per key: "keys" (the
// key's values, for the output) and "slices" (slice end → the
// accumulators' saved state) or "sessions" (session start → end as a
// varint, then the accumulators' state). Its timers fire at window_end - 1
// in event time (the window is complete when the watermark reaches its
// last millisecond), at window_end in processing time; a session's timer
// has the session's start as namespace.
type windowAggOp struct {
	keys  []int
	spec  WindowSpec
	calls []AggCall

	accs   []accumulator // groups: 0 scratch, 1 a window's result, 2 a slice being merged
	domain state.TimeDomain
	rk     *RowKey
	k      *state.Keyed
	keyVal *state.ValueState[[]types.Value]
	parts  *state.MapState[int64, []byte] // slices or sessions
	late   *atomic.Int64
	name   string

	buf    []byte
	nsBuf  [8]byte
	keyRow []types.Value
	out    *types.Batch
	ends   []int64 // scratch: slice or session keys to remove
	merged []int64
}

// Open implements Operator.
func (o *windowAggOp) Open(ctx *OpContext) error {
	if err := o.spec.Validate(); err != nil {
		return fmt.Errorf("%s: %w", ctx.Name, err)
	}
	o.name = ctx.Name
	o.late = ctx.Late
	if o.late == nil {
		o.late = new(atomic.Int64)
	}
	o.rk = NewRowKey(o.keys, ctx.MaxParallelism)
	o.domain = state.EventTime
	if o.spec.Proctime {
		o.domain = state.ProcessingTime
	}
	o.accs = make([]accumulator, len(o.calls))
	for i, c := range o.calls {
		acc, err := newAccumulator(c)
		if err != nil {
			return err
		}
		for range 3 {
			acc.grow()
		}
		o.accs[i] = acc
	}
	o.out = types.NewBatch(len(o.keys)+3+len(o.calls), 64)
	o.keyRow = make([]types.Value, len(o.keys))
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *windowAggOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	if o.keyVal, err = state.NewValueState(k, "keys", keyValuesCodec{}); err != nil {
		return err
	}
	name := "slices"
	if o.spec.Kind == WindowSession {
		name = "sessions"
	}
	o.parts, err = state.NewMapState(k, name, state.Int64{}, state.Bytes{})
	return err
}

// Process implements Operator.
func (o *windowAggOp) Process(_ int, b *types.Batch, out Emitter) error {
	now := int64(0)
	if o.spec.Proctime {
		now = time.Now().UnixMilli()
	}
	wm := o.k.Watermark()
	for i := range b.Len() {
		if b.Kinds[i].IsRetraction() {
			return fmt.Errorf("%s: a window aggregate takes insert-only input, got %s", o.name, b.Kinds[i])
		}
		row := b.Row(i)
		ts := now
		if !o.spec.Proctime {
			v := row[o.spec.TimeCol]
			if v.IsNull() {
				o.late.Add(1) // no event time: no window takes it
				continue
			}
			ts = v.Int()
		}
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		var err error
		if o.spec.Kind == WindowSession {
			err = o.addToSession(row, ts, wm)
		} else {
			err = o.addToSlice(row, ts, wm)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	return nil
}

// timerAt is the timer time of a window that ends at end.
func (o *windowAggOp) timerAt(end int64) int64 {
	if o.spec.Proctime {
		return end
	}
	return end - 1
}

// addRow adds row's arguments into group 0.
func (o *windowAggOp) addRow(row []types.Value) {
	for j, acc := range o.accs {
		var v types.Value
		if a := o.calls[j].Arg; a >= 0 {
			v = row[a]
		}
		acc.add(0, v)
	}
}

// load sets group g of every accumulator from src, written by save.
func (o *windowAggOp) load(g int32, src []byte) error {
	for _, acc := range o.accs {
		acc.reset(g)
		var err error
		if src, err = acc.load(g, src); err != nil {
			return fmt.Errorf("window state: %w", err)
		}
	}
	return nil
}

// save appends group g of every accumulator to dst.
func (o *windowAggOp) save(g int32, dst []byte) []byte {
	for _, acc := range o.accs {
		dst = acc.save(g, dst)
	}
	return dst
}

func (o *windowAggOp) reset(g int32) {
	for _, acc := range o.accs {
		acc.reset(g)
	}
}

func (o *windowAggOp) addToSlice(row []types.Value, ts, wm int64) error {
	se := o.spec.SliceEnd(ts)
	if !o.spec.Proctime && o.spec.LastWindowEnd(se)-1 <= wm {
		o.late.Add(1)
		return nil
	}
	old, found, err := o.parts.Get(se)
	if err != nil {
		return err
	}
	o.reset(0)
	if found {
		if err := o.load(0, old); err != nil {
			return err
		}
	}
	o.addRow(row)
	o.buf = o.save(0, o.buf[:0])
	if err := o.parts.Put(se, o.buf); err != nil {
		return err
	}
	if found {
		return nil
	}
	if err := o.rememberKey(row); err != nil {
		return err
	}
	return o.spec.windowEnds(se, func(end int64) error {
		if !o.spec.Proctime && o.timerAt(end) <= wm {
			return nil // fired already (a HOP or CUMULATE row late for its first windows)
		}
		return o.k.RegisterTimer(o.domain, o.timerAt(end), nil)
	})
}

// rememberKey stores the current key's values for the output rows.
func (o *windowAggOp) rememberKey(row []types.Value) error {
	for i, c := range o.keys {
		o.keyRow[i] = row[c]
	}
	return o.keyVal.Update(o.keyRow)
}

// sessionValue encodes a session: its end, then the accumulators of group g.
func (o *windowAggOp) sessionValue(end int64, g int32) []byte {
	o.buf = binary.AppendVarint(o.buf[:0], end)
	return o.save(g, o.buf)
}

func (o *windowAggOp) nsOf(start int64) []byte {
	binary.BigEndian.PutUint64(o.nsBuf[:], uint64(start))
	return o.nsBuf[:]
}

// addToSession puts the row's window [ts, ts+gap) into the key's
// sessions, merging every session it overlaps or touches (as Flink's
// TimeWindow.intersects) into one.
func (o *windowAggOp) addToSession(row []types.Value, ts, wm int64) error {
	start, end := ts, ts+o.spec.Gap
	o.reset(1)
	o.merged = o.merged[:0]
	var loadErr error
	err := o.parts.All(func(s int64, v []byte) (bool, error) {
		e, rest := binary.Varint(v)
		if rest <= 0 {
			return false, fmt.Errorf("session state: bad end")
		}
		if s > ts+o.spec.Gap || e < ts {
			return true, nil
		}
		if loadErr = o.load(2, v[rest:]); loadErr != nil {
			return false, loadErr
		}
		for _, acc := range o.accs {
			acc.merge(1, 2)
		}
		start, end = min(start, s), max(end, e)
		o.merged = append(o.merged, s, e)
		return true, nil
	})
	if err != nil {
		return err
	}
	if len(o.merged) == 0 && !o.spec.Proctime && end-1 <= wm {
		o.late.Add(1)
		return nil
	}

	for i := 0; i < len(o.merged); i += 2 {
		s, e := o.merged[i], o.merged[i+1]
		if err := o.k.DeleteTimer(o.domain, o.timerAt(e), o.nsOf(s)); err != nil {
			return err
		}
		if err := o.parts.Remove(s); err != nil {
			return err
		}
	}
	o.reset(0)
	o.addRow(row)
	for _, acc := range o.accs {
		acc.merge(1, 0)
	}
	if len(o.merged) == 0 {
		if err := o.rememberKey(row); err != nil {
			return err
		}
	}
	if err := o.parts.Put(start, o.sessionValue(end, 1)); err != nil {
		return err
	}
	return o.k.RegisterTimer(o.domain, o.timerAt(end), o.nsOf(start))
}

// OnTimer implements KeyedOperator: it emits the window that ends at the
// timer and drops the state no later window needs.
func (o *windowAggOp) OnTimer(t state.Timer, out Emitter) error {
	end := t.Timestamp + 1
	if o.spec.Proctime {
		end = t.Timestamp
	}
	o.out.Reset()
	var err error
	if o.spec.Kind == WindowSession {
		err = o.fireSession(t, end)
	} else {
		err = o.fireSlices(end)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if o.out.Len() == 0 {
		return nil
	}
	return out.Emit(o.out)
}

func (o *windowAggOp) fireSlices(end int64) error {
	start := o.spec.WindowStart(end)
	o.reset(1)
	n := 0
	o.ends = o.ends[:0]
	remaining := 0
	err := o.parts.All(func(se int64, v []byte) (bool, error) {
		if se > start && se <= end {
			if err := o.load(2, v); err != nil {
				return false, err
			}
			for _, acc := range o.accs {
				acc.merge(1, 2)
			}
			n++
		}
		if o.spec.LastWindowEnd(se) <= end {
			o.ends = append(o.ends, se)
		} else {
			remaining++
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if n > 0 {
		if err := o.emit(start, end); err != nil {
			return err
		}
	}
	for _, se := range o.ends {
		if err := o.parts.Remove(se); err != nil {
			return err
		}
	}
	if remaining == 0 {
		return o.keyVal.Clear()
	}
	return nil
}

func (o *windowAggOp) fireSession(t state.Timer, end int64) error {
	if len(t.Namespace) != 8 {
		return fmt.Errorf("session timer without its start")
	}
	start := int64(binary.BigEndian.Uint64(t.Namespace))
	v, ok, err := o.parts.Get(start)
	if err != nil || !ok {
		return err // merged away (its timer deleted) or gone
	}
	e, rest := binary.Varint(v)
	if rest <= 0 {
		return fmt.Errorf("session state: bad end")
	}
	if e != end {
		return nil // a stale timer of a session since extended
	}
	if err := o.load(1, v[rest:]); err != nil {
		return err
	}
	if err := o.emit(start, end); err != nil {
		return err
	}
	if err := o.parts.Remove(start); err != nil {
		return err
	}
	empty, err := o.parts.IsEmpty()
	if err != nil || !empty {
		return err
	}
	return o.keyVal.Clear()
}

// emit appends the window's row, from group 1, to o.out.
func (o *windowAggOp) emit(start, end int64) error {
	keys, ok, err := o.keyVal.Value()
	if err != nil {
		return err
	}
	if !ok || len(keys) != len(o.keys) {
		return fmt.Errorf("window state: the key's values are missing")
	}
	row := o.out.AppendEmpty(types.Insert)
	copy(row, keys)
	ts := types.TimestampValue
	if o.spec.LTZ {
		ts = types.TimestampLTZValue
	}
	nk := len(o.keys)
	row[nk], row[nk+1], row[nk+2] = ts(start), ts(end), ts(end-1)
	for j, acc := range o.accs {
		row[nk+3+j] = acc.result(1)
	}
	return nil
}

// Finish implements Operator. In event time, the windows still open at the
// end of a bounded input fired when the final watermark (+∞) arrived; in
// processing time they fire now, so that a bounded input's last windows
// are not lost.
func (o *windowAggOp) Finish(out Emitter) error {
	if !o.spec.Proctime {
		return nil
	}
	return o.k.AdvanceProcessingTime(math.MaxInt64, func(t state.Timer) error { return o.OnTimer(t, out) })
}

// Close implements Operator.
func (o *windowAggOp) Close() error { return nil }

var _ KeyedOperator = (*windowAggOp)(nil)

// keyValuesCodec stores a row of values with their kinds
// (types.AppendKey), so that the output has the key columns' types.
type keyValuesCodec struct{}

func (keyValuesCodec) Append(dst []byte, row []types.Value) []byte {
	for _, v := range row {
		dst = types.AppendKey(dst, v)
	}
	return dst
}

func (keyValuesCodec) Decode(src []byte) ([]types.Value, error) {
	var row []types.Value
	for len(src) > 0 {
		v, rest, err := types.DecodeKey(src)
		if err != nil {
			return nil, fmt.Errorf("window key: %w", err)
		}
		row, src = append(row, v), rest
	}
	return row, nil
}
