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
	// values (a TIMESTAMP_LTZ time attribute), else TIMESTAMP. A
	// processing-time window aggregate ignores it: as in Flink, its
	// window_start and window_end are TIMESTAMP values, the wall clock in
	// the session time zone (NewWindowAggIn), and its window_time
	// TIMESTAMP_LTZ.
	LTZ bool
}

// wallClock returns instant ms (epoch milliseconds) as a TIMESTAMP value:
// its wall-clock time in zone (nil: UTC).
func wallClock(ms int64, zone *time.Location) types.Value {
	if zone == nil {
		return types.TimestampValue(ms)
	}
	_, off := time.UnixMilli(ms).In(zone).Zone()
	return types.TimestampValue(ms + int64(off)*1000)
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

// floorMod is x mod m in [0, m) (m > 0), with one division.
func floorMod(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	return r
}

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
	return NewWindowAggIn(keys, spec, calls, nil)
}

// NewWindowAggIn is NewWindowAgg with the session time zone (nil: UTC) of
// a processing-time aggregate's window_start and window_end.
func NewWindowAggIn(keys []int, spec WindowSpec, calls []AggCall, zone *time.Location) func() Operator {
	return func() Operator { return &windowAggOp{keys: keys, spec: spec, calls: calls, zone: zone} }
}

// windowAggOp is the window aggregate. Its state per key: for TUMBLE, HOP
// and CUMULATE "slices" (slice end → the key's values, then the
// accumulators' saved state), read and written by point lookups only; for
// SESSION "sessions" (the key's values, then each open session: start,
// end, accumulators). Its timers fire at window_end - 1 in event time (the
// window is complete when the watermark reaches its last millisecond), at
// window_end in processing time; a session's timer has the session's start
// as namespace.
type windowAggOp struct {
	keys  []int
	spec  WindowSpec
	calls []AggCall
	zone  *time.Location // processing time: the zone of window_start/window_end

	accs     []accumulator // groups: 0 scratch, 1 a window's result, 2 a slice being merged
	domain   state.TimeDomain
	rk       *RowKey
	k        *state.Keyed
	slices   *state.MapState[int64, []byte]
	sessions *state.ValueState[[]byte]
	late     *atomic.Int64
	name     string
	now      func() time.Time // the task's processing-time clock

	buf    []byte
	keyEnc []byte // the current window's key values (types.AppendKey), from its state
	nsBuf  [8]byte
	out    *types.Batch
	open   []session // the current key's sessions
	accBuf []byte
}

// session is an open session of the current key; acc aliases the state
// value it was decoded from (or accBuf).
type session struct {
	start, end int64
	acc        []byte
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
	o.now = clockOf(ctx)
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
		setInsertOnly(acc)
		for range 3 {
			acc.grow()
		}
		o.accs[i] = acc
	}
	o.out = types.NewBatch(len(o.keys)+3+len(o.calls), 64)
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *windowAggOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	if o.spec.Kind == WindowSession {
		o.sessions, err = state.NewValueState(k, "sessions", state.Bytes{})
	} else {
		o.slices, err = state.NewMapState(k, "slices", state.Int64{}, state.Bytes{})
	}
	return err
}

// Process implements Operator.
func (o *windowAggOp) Process(_ int, b *types.Batch, out Emitter) error {
	// In processing time a row's windows are those of the task's clock
	// when it comes (read once a batch); its timers fire by that clock.
	now := int64(0)
	if o.spec.Proctime {
		now = o.now().UnixMilli()
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

// appendKey appends the row's key values, length-prefixed, to dst.
func (o *windowAggOp) appendKey(dst []byte, row []types.Value) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, c := range o.keys {
		dst = types.AppendKey(dst, row[c])
	}
	binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// splitKey returns the length-prefixed key values at the start of v and
// the rest.
func splitKey(v []byte) (key, rest []byte, err error) {
	if len(v) < 4 || int(binary.BigEndian.Uint32(v)) > len(v)-4 {
		return nil, nil, fmt.Errorf("window state: bad key values")
	}
	n := 4 + int(binary.BigEndian.Uint32(v))
	return v[4:n], v[n:], nil
}

func (o *windowAggOp) addToSlice(row []types.Value, ts, wm int64) error {
	se := o.spec.SliceEnd(ts)
	if !o.spec.Proctime && o.spec.LastWindowEnd(se)-1 <= wm {
		o.late.Add(1)
		return nil
	}
	old, found, err := o.slices.Get(se)
	if err != nil {
		return err
	}
	o.reset(0)
	o.buf = o.buf[:0]
	if found {
		key, accs, err := splitKey(old)
		if err != nil {
			return err
		}
		if err := o.load(0, accs); err != nil {
			return err
		}
		o.buf = binary.BigEndian.AppendUint32(o.buf, uint32(len(key)))
		o.buf = append(o.buf, key...)
	} else {
		o.buf = o.appendKey(o.buf, row)
	}
	o.addRow(row)
	o.buf = o.save(0, o.buf)
	if err := o.slices.Put(se, o.buf); err != nil {
		return err
	}
	if found {
		return nil
	}
	return o.spec.windowEnds(se, func(end int64) error {
		if !o.spec.Proctime && o.timerAt(end) <= wm {
			return nil // fired already (a HOP or CUMULATE row late for its first windows)
		}
		return o.k.RegisterTimer(o.domain, o.timerAt(end), nil)
	})
}

func (o *windowAggOp) nsOf(start int64) []byte {
	binary.BigEndian.PutUint64(o.nsBuf[:], uint64(start))
	return o.nsBuf[:]
}

// loadSessions decodes the current key's sessions into o.open and returns
// the key values; found is false when the key has none.
func (o *windowAggOp) loadSessions() (key []byte, found bool, err error) {
	o.open = o.open[:0]
	v, found, err := o.sessions.Value()
	if err != nil || !found {
		return nil, false, err
	}
	key, rest, err := splitKey(v)
	if err != nil {
		return nil, false, err
	}
	for len(rest) > 0 {
		var s session
		var n int
		if s.start, n = binary.Varint(rest); n <= 0 {
			return nil, false, fmt.Errorf("window state: bad session")
		}
		rest = rest[n:]
		if s.end, n = binary.Varint(rest); n <= 0 {
			return nil, false, fmt.Errorf("window state: bad session")
		}
		rest = rest[n:]
		l, n := binary.Uvarint(rest)
		if n <= 0 || l > uint64(len(rest)-n) {
			return nil, false, fmt.Errorf("window state: bad session")
		}
		s.acc, rest = rest[n:n+int(l)], rest[n+int(l):]
		o.open = append(o.open, s)
	}
	return key, true, nil
}

// storeSessions writes the key values and o.open as the current key's
// sessions (clearing them when there are none).
func (o *windowAggOp) storeSessions(key []byte) error {
	if len(o.open) == 0 {
		return o.sessions.Clear()
	}
	b := binary.BigEndian.AppendUint32(o.buf[:0], uint32(len(key)))
	b = append(b, key...)
	for _, s := range o.open {
		b = binary.AppendVarint(b, s.start)
		b = binary.AppendVarint(b, s.end)
		b = binary.AppendUvarint(b, uint64(len(s.acc)))
		b = append(b, s.acc...)
	}
	o.buf = b
	return o.sessions.Update(b)
}

// addToSession puts the row's window [ts, ts+gap) into the key's
// sessions, merging every session it overlaps or touches (as Flink's
// TimeWindow.intersects) into one.
func (o *windowAggOp) addToSession(row []types.Value, ts, wm int64) error {
	key, found, err := o.loadSessions()
	if err != nil {
		return err
	}
	if !found {
		o.keyEnc = o.appendKey(o.keyEnc[:0], row)
		key = o.keyEnc[4:]
	}
	start, end := ts, ts+o.spec.Gap
	o.reset(1)
	kept, merged := o.open[:0], 0
	var mergedTimers []int64
	for _, s := range o.open {
		if s.start > ts+o.spec.Gap || s.end < ts {
			kept = append(kept, s)
			continue
		}
		if err := o.load(2, s.acc); err != nil {
			return err
		}
		for _, acc := range o.accs {
			acc.merge(1, 2)
		}
		start, end = min(start, s.start), max(end, s.end)
		mergedTimers = append(mergedTimers, s.start, s.end)
		merged++
	}
	if merged == 0 && !o.spec.Proctime && end-1 <= wm {
		o.late.Add(1)
		return nil
	}
	for i := 0; i < len(mergedTimers); i += 2 {
		if err := o.k.DeleteTimer(o.domain, o.timerAt(mergedTimers[i+1]), o.nsOf(mergedTimers[i])); err != nil {
			return err
		}
	}
	o.reset(0)
	o.addRow(row)
	for _, acc := range o.accs {
		acc.merge(1, 0)
	}
	o.accBuf = o.save(1, o.accBuf[:0])
	o.open = append(kept, session{start: start, end: end, acc: o.accBuf})
	if err := o.storeSessions(key); err != nil {
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

// fireSlices emits the window that ends at end, the merge of its slices,
// found by their ends (no scan), then removes the slices no later window
// takes: the window's first (HOP), its only one (TUMBLE), or the whole
// period's at a CUMULATE period's end.
func (o *windowAggOp) fireSlices(end int64) error {
	start := o.spec.WindowStart(end)
	step := o.spec.sliceSize()
	o.reset(1)
	n := 0
	for se := start + step; se <= end; se += step {
		v, ok, err := o.slices.Get(se)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		key, accs, err := splitKey(v)
		if err != nil {
			return err
		}
		if n == 0 {
			o.keyEnc = append(o.keyEnc[:0], key...)
		}
		if err := o.load(2, accs); err != nil {
			return err
		}
		for _, acc := range o.accs {
			acc.merge(1, 2)
		}
		n++
	}
	if n == 0 {
		return nil
	}
	if err := o.emit(o.keyEnc, start, end); err != nil {
		return err
	}
	for se := start + step; se <= end; se += step {
		if o.spec.LastWindowEnd(se) > end {
			break
		}
		if err := o.slices.Remove(se); err != nil {
			return err
		}
	}
	return nil
}

func (o *windowAggOp) fireSession(t state.Timer, end int64) error {
	if len(t.Namespace) != 8 {
		return fmt.Errorf("session timer without its start")
	}
	start := int64(binary.BigEndian.Uint64(t.Namespace))
	key, found, err := o.loadSessions()
	if err != nil || !found {
		return err
	}
	for i, s := range o.open {
		if s.start != start || s.end != end {
			continue
		}
		if err := o.load(1, s.acc); err != nil {
			return err
		}
		if err := o.emit(key, start, end); err != nil {
			return err
		}
		o.open = append(o.open[:i], o.open[i+1:]...)
		return o.storeSessions(key)
	}
	return nil // merged into another session since
}

// emit appends the window's row, from group 1, to o.out.
func (o *windowAggOp) emit(key []byte, start, end int64) error {
	row := growRow(o.out, types.Insert) // keys, times and results: every value
	for i := range o.keys {
		v, rest, err := types.DecodeKey(key)
		if err != nil {
			return fmt.Errorf("window state: key value %d: %w", i, err)
		}
		row[i], key = v, rest
	}
	ts := types.TimestampValue
	if o.spec.LTZ {
		ts = types.TimestampLTZValue
	}
	nk := len(o.keys)
	if o.spec.Proctime {
		row[nk], row[nk+1], row[nk+2] = wallClock(start, o.zone), wallClock(end, o.zone), types.TimestampLTZValue(end-1)
	} else {
		row[nk], row[nk+1], row[nk+2] = ts(start), ts(end), ts(end-1)
	}
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
