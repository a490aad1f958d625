package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/weir-sql/weir/internal/minheap"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// NewSessionWindowAgg returns a factory for the event-time SESSION window
// aggregate over rows grouped by the key columns keys: each key's open
// sessions are in memory (an accumulator group each, in typed slices), a
// row's window [ts, ts + gap) merges every session it overlaps or touches
// (as Flink's), and a session's row is emitted when the watermark passes
// its end - 1, then dropped. A row that touches no open session and whose
// own window the watermark has passed is late: dropped and counted.
// state.Records writes each changed key's sessions back at checkpoints
// and loads them on restore, at any parallelism (sessions merge across a
// restore too); the open sessions bound the state, so it is never spilled.
func NewSessionWindowAgg(keys []int, spec WindowSpec, calls []AggCall) func() Operator {
	return func() Operator { return &sessionWindowOp{keys: keys, spec: spec, calls: calls} }
}

// sessionWindowOp is the event-time session window aggregate. Accumulator
// group 0 is scratch; the others are sessions. When every call is COUNT or
// an integer SUM or AVG (fused), a session's state is in the session itself
// (openSession.f) instead: a row updates the cache line it already read
// to find its session, not one more per call; the accumulators' group 0
// then only converts that state to results and records.
type sessionWindowOp struct {
	keys  []int
	spec  WindowSpec
	calls []AggCall
	accs  []accumulator
	fused []fusedCall // nil unless every call is fused
	name  string
	late  *atomic.Int64
	st    *state.Records

	skeys    []sessKey
	keyVals  []types.Value // len(keys) per key slot (keys not in ints)
	keyStr   []string      // per key slot: its encoding (keys not in ints)
	ints     *state.IntTable
	groups   map[string]int32
	freeKeys []int32
	nLive    int
	nCells   int32
	free     []int32
	nSess    int       // open sessions
	slots    []int32   // per row of the batch in Process: its key slot, or -1
	touched  int64     // sink of findSlots' reads, so they are not dropped
	due      sessQueue // (end, key slot) of sessions, some stale, by end
	wm       int64
	maxCol   int

	keyBuf  []byte
	loadRow []types.Value
	keyOne  [1]types.Value
	out     *types.Batch
}

// sessKey is a key's slot: its open sessions, in no order (see at). A key
// usually has one, which is kept in the slot itself (first), so that a row
// or a firing reads one place, not two.
type sessKey struct {
	first   openSession
	more    []openSession // sessions 1..n-1
	n       int32         // open sessions
	keyInt  int64
	keyKind types.Kind
	inInts  bool
}

// at returns the key's session j (j < n).
func (k *sessKey) at(j int) *openSession {
	if j == 0 {
		return &k.first
	}
	return &k.more[j-1]
}

// add appends session s and returns its index.
func (k *sessKey) add(s openSession) int {
	if k.n == 0 {
		k.first = s
	} else {
		k.more = append(k.more, s)
	}
	k.n++
	return int(k.n) - 1
}

// remove deletes session j; the later ones move down one.
func (k *sessKey) remove(j int) {
	switch {
	case j > 0:
		k.more = append(k.more[:j-1], k.more[j:]...)
	case k.n > 1:
		k.first = k.more[0]
		k.more = append(k.more[:0], k.more[1:]...)
	}
	k.n--
}

// reset forgets every session.
func (k *sessKey) reset() { k.n, k.more = 0, k.more[:0] }

// openSession is a key's open session [start, end) and its accumulator
// group, or with fused calls its state f (see fusedCall). due is the end
// of its timer in the queue: the end it had when it opened or its timer
// last came due; a session that grows keeps its timer, which when it
// comes finds due < end and is pushed again at the end. due is in
// (start, end], so the key's disjoint sessions have distinct dues.
type openSession struct {
	start, end int64
	due        int64
	f          [sessFusedMax]int64
	acc        int32
}

// sessFusedMax is the int64 words of state a session holds in itself: a
// COUNT takes one, an integer SUM or AVG two (sum and non-NULL inputs).
const sessFusedMax = 3

// fusedCall is a call whose per-session state is in openSession.f from
// word at: COUNT (count), or integer SUM or AVG (sum). Merging two
// sessions adds their words.
type fusedCall struct {
	count *countAcc
	sum   *sumAcc
	col   int // input column; -1 for COUNT(*)
	at    int
}

// fuseCalls returns the fused form of accs, or nil if one of them is not
// COUNT or an integer SUM or AVG, or their state does not fit in a session.
func fuseCalls(calls []AggCall, accs []accumulator) []fusedCall {
	var out []fusedCall
	at := 0
	for i, acc := range accs {
		f := fusedCall{col: calls[i].Arg, at: at}
		switch a := acc.(type) {
		case *countAcc:
			f.count = a
			if a.star {
				f.col = -1
			}
			at++
		case *sumAcc:
			if a.floatIn {
				return nil
			}
			f.sum = a
			at += 2
		default:
			return nil
		}
		if at > sessFusedMax {
			return nil
		}
		out = append(out, f)
	}
	return out
}

// addFused accumulates row into the fused state f.
func addFused(calls []fusedCall, f *[sessFusedMax]int64, row []types.Value) {
	for _, c := range calls {
		switch {
		case c.col < 0:
			f[c.at]++
		case row[c.col].IsNull():
		case c.count != nil:
			f[c.at]++
		default:
			f[c.at] += row[c.col].Int()
			f[c.at+1]++
		}
	}
}

// toScratch puts the fused state f in the accumulators' scratch group 0,
// in the form their result and save read.
func toScratch(calls []fusedCall, f *[sessFusedMax]int64) {
	for _, c := range calls {
		if c.count != nil {
			c.count.n[0] = f[c.at]
		} else {
			c.sum.s[0] = sumState{sum: uint64(f[c.at]), n: f[c.at+1]}
		}
	}
}

// fromScratch reads the fused state f back from scratch group 0 (after
// the accumulators' load).
func fromScratch(calls []fusedCall, f *[sessFusedMax]int64) {
	for _, c := range calls {
		if c.count != nil {
			f[c.at] = c.count.n[0]
		} else {
			s := c.sum.s[0]
			f[c.at], f[c.at+1] = int64(s.sum), s.n
		}
	}
}

// sessTimer says that key slot's session whose due is end may be due;
// stale once that session merged into another or fired.
type sessTimer struct {
	end  int64
	slot int32
}

// Less orders the timer heap (minheap.Ordered).
func (t sessTimer) Less(o sessTimer) bool { return t.end < o.end }

// sessTimers is a min-heap of sessTimer by end (typed: no allocation per
// push, as container/heap's interface would make).
type sessTimers []sessTimer

func (h *sessTimers) push(t sessTimer) { *h = minheap.Push(*h, t) }

// sessQueue orders session timers by end. The rows of each input channel
// come mostly in event-time order, and the channels' batches interleave,
// so the timers come as a few interleaved runs in order of end: a timer is
// appended to the run whose last end is the greatest not above its own
// (no heap work), starts a run when there are fewer than sessQueueRuns,
// else goes to a heap. The next timer is the least of the runs' heads and
// the heap's top.
type sessQueue struct {
	heap  sessTimers
	runs  [][]sessTimer // timers in order of end, each from heads[i]
	heads []int
}

// sessQueueRuns bounds the runs of a sessQueue.
const sessQueueRuns = 4

// push adds timer t.
func (q *sessQueue) push(t sessTimer) {
	best, empty := -1, -1
	for i, r := range q.runs {
		if len(r) == q.heads[i] {
			empty = i
			continue
		}
		if tail := r[len(r)-1].end; tail <= t.end && (best < 0 || tail > q.runs[best][len(q.runs[best])-1].end) {
			best = i
		}
	}
	switch {
	case best >= 0:
	case empty >= 0:
		best = empty
	case len(q.runs) < sessQueueRuns:
		q.runs, q.heads = append(q.runs, nil), append(q.heads, 0)
		best = len(q.runs) - 1
	default:
		q.heap.push(t)
		return
	}
	q.runs[best] = append(q.runs[best], t)
}

// next returns the timer with the least end and where it is (-1: the
// heap, else a run), or false if there is none.
func (q *sessQueue) next() (sessTimer, int, bool) {
	var best sessTimer
	from, ok := -1, false
	if len(q.heap) > 0 {
		best, ok = q.heap[0], true
	}
	for ch, r := range q.runs {
		if h := q.heads[ch]; h < len(r) && (!ok || r[h].end < best.end) {
			best, from, ok = r[h], ch, true
		}
	}
	return best, from, ok
}

// drop removes the timer next returned from from.
func (q *sessQueue) drop(from int) {
	if from < 0 {
		q.heap.pop()
		return
	}
	h := q.heads[from] + 1
	r := q.runs[from]
	switch {
	case h == len(r):
		q.runs[from], h = r[:0], 0
	case h >= 1024 && 2*h >= len(r):
		n := copy(r, r[h:])
		q.runs[from], h = r[:n], 0
	}
	q.heads[from] = h
}

// len returns the number of timers.
func (q *sessQueue) len() int {
	n := len(q.heap)
	for ch, r := range q.runs {
		n += len(r) - q.heads[ch]
	}
	return n
}

func (h *sessTimers) pop() sessTimer {
	top, q := minheap.Pop(*h)
	*h = q
	return top
}

// sessionStateVersion leads every stored key record.
const sessionStateVersion = 1

var (
	_ StatefulOperator   = (*sessionWindowOp)(nil)
	_ WatermarkOperator  = (*sessionWindowOp)(nil)
	_ state.RecordSource = (*sessionWindowOp)(nil)
)

// Open implements Operator.
func (o *sessionWindowOp) Open(ctx *OpContext) error {
	if err := o.spec.Validate(); err != nil {
		return fmt.Errorf("%s: %w", ctx.Name, err)
	}
	if o.spec.Kind != WindowSession || o.spec.Proctime {
		return fmt.Errorf("%s: the session window aggregate takes event-time SESSION windows", ctx.Name)
	}
	o.name = ctx.Name
	o.late = ctx.Late
	if o.late == nil {
		o.late = new(atomic.Int64)
	}
	o.maxCol = o.spec.TimeCol
	for _, k := range o.keys {
		o.maxCol = max(o.maxCol, k)
	}
	o.accs = make([]accumulator, len(o.calls))
	for i, c := range o.calls {
		acc, err := newAccumulator(c)
		if err != nil {
			return err
		}
		setInsertOnly(acc)
		acc.grow()
		o.accs[i] = acc
		o.maxCol = max(o.maxCol, c.Arg)
	}
	o.fused = fuseCalls(o.calls, o.accs)
	o.nCells = 1
	o.ints, o.groups = state.NewIntTable(), make(map[string]int32)
	o.wm = NoWatermark
	o.loadRow = make([]types.Value, o.maxCol+1)
	o.out = types.NewBatch(len(o.keys)+3+len(o.calls), 256)
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	st, err := state.NewRecords(state.RecordOptions{
		Name: "sessions", OperatorID: ctx.ID, MaxParallelism: maxPar, Subtask: ctx.Subtask, Parallelism: ctx.Parallelism,
		// Never spilled: firing needs every open session in memory, and
		// the open sessions bound the state.
		Budget: math.MaxInt64 / 4, RecordBytes: 96, Exclusive: true,
	}, o)
	if err != nil {
		return fmt.Errorf("%s: %w", ctx.Name, err)
	}
	o.st = st
	return nil
}

// InitState implements StatefulOperator.
func (o *sessionWindowOp) InitState(store *statestore.Store, restored bool) error {
	if o.nLive > 0 {
		return fmt.Errorf("state of %s: store given after keys were made", o.name)
	}
	if err := o.st.Attach(store, restored); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// PrepareSnapshot implements StatefulOperator.
func (o *sessionWindowOp) PrepareSnapshot() error {
	if err := o.st.Snapshot(); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// Process implements Operator.
func (o *sessionWindowOp) Process(_ int, b *types.Batch, _ Emitter) error {
	if o.maxCol >= b.Width {
		return fmt.Errorf("%s: column %d out of range of input width %d", o.name, o.maxCol, b.Width)
	}
	gap := o.spec.Gap
	o.findSlots(b)
	for i := range b.Len() {
		if b.Kinds[i].IsRetraction() {
			return fmt.Errorf("%s: a window aggregate takes insert-only input, got %s", o.name, b.Kinds[i])
		}
		row := b.Row(i)
		v := row[o.spec.TimeCol]
		if v.IsNull() {
			o.late.Add(1) // no event time: no window takes it
			continue
		}
		ts := v.Int()
		gi := o.slots[i]
		found := gi >= 0
		if !found {
			// Not found before the batch (or not an integer key): an
			// earlier row of the batch may have added it since.
			gi, found = o.findKey(row)
		}
		first := -1 // the first session the row's window overlaps or touches
		if found {
			k := &o.skeys[gi]
			for j := range int(k.n) {
				if s := k.at(j); s.start <= ts+gap && s.end >= ts {
					first = j
					break
				}
			}
		}
		if first < 0 && ts+gap-1 <= o.wm {
			o.late.Add(1)
			continue
		}
		if !found {
			gi = o.addKey(row)
		}
		k := &o.skeys[gi]
		if first < 0 {
			s := openSession{start: ts, end: ts + gap, due: ts + gap}
			if o.fused == nil {
				s.acc = o.newCell()
				k = &o.skeys[gi]
			}
			first = k.add(s)
			o.nSess++
			o.due.push(sessTimer{end: ts + gap, slot: gi})
		} else {
			// The session keeps its timer (due) as it grows: no push.
			s := k.at(first)
			s.start, s.end = min(s.start, ts), max(s.end, ts+gap)
			// Merge the later sessions the grown window now touches.
			for j := first + 1; j < int(k.n); {
				t := k.at(j)
				if t.start > s.end || t.end < s.start {
					j++
					continue
				}
				o.mergeInto(s, t)
				k.remove(j)
				o.nSess--
				s = k.at(first)
			}
		}
		s := k.at(first)
		if o.fused != nil {
			addFused(o.fused, &s.f, row)
		} else {
			for j, acc := range o.accs {
				var v types.Value
				if a := o.calls[j].Arg; a >= 0 {
					v = row[a]
				}
				acc.add(s.acc, v)
			}
		}
		o.st.Changed(gi)
	}
	return nil
}

// mergeInto adds session t's state into session s's (s's bounds are the
// caller's) and frees t's accumulator group. s keeps its timer; t's is
// stale.
func (o *sessionWindowOp) mergeInto(s, t *openSession) {
	s.start, s.end = min(s.start, t.start), max(s.end, t.end)
	if o.fused != nil {
		for w := range s.f {
			s.f[w] += t.f[w]
		}
		return
	}
	for _, acc := range o.accs {
		acc.merge(s.acc, t.acc)
		acc.reset(t.acc)
	}
	o.free = append(o.free, t.acc)
}

// findSlots looks up the slot of each row of b with a single integer key,
// before any row is handled, into o.slots (-1 if the key has no slot, or
// is not an integer key), and then reads each slot found. With 100,000
// keys both the table and the slots miss the CPU cache: done in loops of
// independent iterations, the misses of a batch overlap instead of
// following one another, and Process finds them in cache. The slots found
// stay valid through the batch: Process adds keys but removes none.
func (o *sessionWindowOp) findSlots(b *types.Batch) {
	n := b.Len()
	if cap(o.slots) < n {
		o.slots = make([]int32, n, max(n, 2*cap(o.slots)))
	}
	o.slots = o.slots[:n]
	if len(o.keys) != 1 {
		for i := range o.slots {
			o.slots[i] = -1
		}
		return
	}
	c, w := o.keys[0], b.Width
	for i := range n {
		o.slots[i] = -1
		if v := &b.Vals[i*w+c]; state.IntStored(v.Kind()) {
			if gi, ok := o.ints.Get(v.Int()); ok {
				o.slots[i] = gi
			}
		}
	}
	var t int64
	for _, gi := range o.slots {
		if gi >= 0 {
			t += o.skeys[gi].first.end
		}
	}
	o.touched += t
}

// findKey returns the slot of row's key, if it has one.
func (o *sessionWindowOp) findKey(row []types.Value) (int32, bool) {
	if len(o.keys) == 1 && state.IntStored(row[o.keys[0]].Kind()) {
		return o.ints.Get(row[o.keys[0]].Int())
	}
	o.keyBuf = o.keyBuf[:0]
	for _, c := range o.keys {
		o.keyBuf = state.AppendValue(o.keyBuf, row[c])
	}
	gi, ok := o.groups[string(o.keyBuf)]
	return gi, ok
}

// addKey makes a slot for row's key (after findKey, which left a key not
// in ints encoded in keyBuf) and tells Records.
func (o *sessionWindowOp) addKey(row []types.Value) int32 {
	inInts := len(o.keys) == 1 && state.IntStored(row[o.keys[0]].Kind())
	gi := o.newKey(row, inInts, o.keyBuf)
	if inInts {
		v := row[o.keys[0]]
		o.st.AddedInt(gi, v.Kind(), v.Int())
	} else {
		o.st.AddedKey(gi, o.keyBuf)
	}
	return gi
}

// newKey makes and registers a key slot for the key columns of row.
func (o *sessionWindowOp) newKey(row []types.Value, inInts bool, encoded []byte) int32 {
	var gi int32
	if n := len(o.freeKeys); n > 0 {
		gi = o.freeKeys[n-1]
		o.freeKeys = o.freeKeys[:n-1]
	} else {
		gi = int32(len(o.skeys))
		o.skeys = append(o.skeys, sessKey{})
	}
	k := &o.skeys[gi]
	k.reset()
	k.inInts = inInts
	o.nLive++
	if inInts {
		v := row[o.keys[0]]
		k.keyInt, k.keyKind = v.Int(), v.Kind()
		o.ints.Put(k.keyInt, gi)
		return gi
	}
	nk := len(o.keys)
	for len(o.keyStr) <= int(gi) {
		o.keyStr = append(o.keyStr, "")
		o.keyVals = append(o.keyVals, make([]types.Value, nk)...)
	}
	s := string(encoded)
	o.keyStr[gi] = s
	kv := o.keyVals[int(gi)*nk : int(gi+1)*nk]
	for i, c := range o.keys {
		kv[i] = row[c]
	}
	o.groups[s] = gi
	return gi
}

// keyValues returns slot gi's key values (for a key in ints, valid until
// the next call).
func (o *sessionWindowOp) keyValues(gi int32) []types.Value {
	if k := &o.skeys[gi]; k.inInts {
		o.keyOne[0] = types.BigIntValue(k.keyInt).WithKind(k.keyKind)
		return o.keyOne[:]
	}
	nk := len(o.keys)
	return o.keyVals[int(gi)*nk : int(gi+1)*nk]
}

// removeKey forgets slot gi, which has no sessions left.
func (o *sessionWindowOp) removeKey(gi int32) error {
	if err := o.st.Removed(gi); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	k := &o.skeys[gi]
	if k.inInts {
		o.ints.Del(k.keyInt)
	} else {
		nk := len(o.keys)
		delete(o.groups, o.keyStr[gi])
		o.keyStr[gi] = ""
		clear(o.keyVals[int(gi)*nk : int(gi+1)*nk])
	}
	k.reset()
	o.freeKeys = append(o.freeKeys, gi)
	o.nLive--
	return nil
}

// newCell returns a free accumulator group.
func (o *sessionWindowOp) newCell() int32 {
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

// ProcessWatermark implements WatermarkOperator: it emits and drops every
// session whose end - 1 the watermark reached, then passes it on.
func (o *sessionWindowOp) ProcessWatermark(wm int64, out Emitter) error {
	if wm > o.wm {
		o.wm = wm
	}
	o.out.Reset()
	ts := types.TimestampValue
	if o.spec.LTZ {
		ts = types.TimestampLTZValue
	}
	nk := len(o.keys)
	for {
		t, from, ok := o.due.next()
		if !ok || t.end-1 > o.wm {
			break
		}
		o.due.drop(from)
		k := &o.skeys[t.slot]
		at := -1
		for j := range int(k.n) {
			if k.at(j).due == t.end {
				at = j
				break
			}
		}
		if at < 0 {
			continue // stale: the session merged into another
		}
		s := k.at(at)
		if s.end-1 > o.wm {
			// It grew since: due again at its end.
			s.due = s.end
			o.due.push(sessTimer{end: s.end, slot: t.slot})
			continue
		}
		row := growRow(o.out, types.Insert)
		copy(row, o.keyValues(t.slot))
		row[nk], row[nk+1], row[nk+2] = ts(s.start), ts(s.end), ts(s.end-1)
		if o.fused != nil {
			toScratch(o.fused, &s.f)
			for j, acc := range o.accs {
				row[nk+3+j] = acc.result(0)
			}
		} else {
			for j, acc := range o.accs {
				row[nk+3+j] = acc.result(s.acc)
				acc.reset(s.acc)
			}
			o.free = append(o.free, s.acc)
		}
		k.remove(at)
		o.nSess--
		if k.n == 0 {
			if err := o.removeKey(t.slot); err != nil {
				return err
			}
		} else {
			o.st.Changed(t.slot)
		}
		if o.out.Len() >= 1024 {
			if err := out.Emit(o.out); err != nil {
				return err
			}
			o.out.Reset()
		}
	}
	if o.out.Len() > 0 {
		if err := out.Emit(o.out); err != nil {
			return err
		}
		o.out.Reset()
	}
	return ForwardWatermark(out, wm)
}

// AppendRecordKey implements state.RecordSource.
func (o *sessionWindowOp) AppendRecordKey(dst []byte, gi int32) []byte {
	if k := &o.skeys[gi]; k.inInts {
		if k.keyKind == types.KindInt || k.keyKind == types.KindBigInt {
			return state.AppendInt64(dst, k.keyInt)
		}
		return state.AppendValue(dst, types.BigIntValue(k.keyInt).WithKind(k.keyKind))
	}
	return append(dst, o.keyStr[gi]...)
}

// AppendRecord implements state.RecordSource: the version; masks of the
// key columns of kind INT and TIMESTAMP_LTZ; the number of sessions, and
// each one's start, end and accumulators' state.
func (o *sessionWindowOp) AppendRecord(dst []byte, gi int32) []byte {
	var ints, ltz uint64
	for i, v := range o.keyValues(gi) {
		switch v.Kind() {
		case types.KindInt:
			ints |= 1 << i
		case types.KindTimestampLTZ:
			ltz |= 1 << i
		}
	}
	k := &o.skeys[gi]
	dst = append(dst, sessionStateVersion)
	dst = binary.AppendUvarint(dst, ints)
	dst = binary.AppendUvarint(dst, ltz)
	dst = binary.AppendUvarint(dst, uint64(k.n))
	for j := range int(k.n) {
		s := k.at(j)
		dst = binary.AppendVarint(dst, s.start)
		dst = binary.AppendVarint(dst, s.end)
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		g := s.acc
		if o.fused != nil {
			toScratch(o.fused, &s.f)
			g = 0
		}
		for _, acc := range o.accs {
			dst = acc.save(g, dst)
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst
}

var errSessionRecord = errors.New("bad session record")

// LoadRecord implements state.RecordSource: a restored key and its
// sessions, each due again at its end.
func (o *sessionWindowOp) LoadRecord(key, rec []byte) (int32, error) {
	if len(rec) == 0 || rec[0] != sessionStateVersion {
		return 0, errors.New("session record of unknown version")
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
	n, rest, err := readUvarint(rest)
	if err != nil {
		return 0, err
	}
	row := o.loadRow
	if err := decodeKeyColumns(key, row, o.keys, ints, ltz, "session key"); err != nil {
		return 0, err
	}
	gi := o.newKey(row, len(o.keys) == 1 && state.IntStored(row[o.keys[0]].Kind()), key)
	for range n {
		var s openSession
		if s.start, rest, err = readVarint(rest); err != nil {
			return 0, err
		}
		if s.end, rest, err = readVarint(rest); err != nil {
			return 0, err
		}
		s.due = s.end
		if len(rest) < 4 || int(binary.BigEndian.Uint32(rest)) > len(rest)-4 {
			return 0, errSessionRecord
		}
		l := int(binary.BigEndian.Uint32(rest))
		src := rest[4 : 4+l]
		rest = rest[4+l:]
		var g int32
		if o.fused == nil {
			s.acc = o.newCell()
			g = s.acc
		}
		for _, acc := range o.accs {
			if src, err = acc.load(g, src); err != nil {
				return 0, err
			}
		}
		if o.fused != nil {
			fromScratch(o.fused, &s.f)
		}
		o.skeys[gi].add(s)
		o.nSess++
		o.due.push(sessTimer{end: s.end, slot: gi})
	}
	return gi, nil
}

// DropRecords implements state.RecordSource; never called, as the
// records are never spilled.
func (o *sessionWindowOp) DropRecords() {}

// stateSize returns the keys and sessions the operator holds, for tests of
// bounded state.
func (o *sessionWindowOp) stateSize() (keys, sessions int) {
	return o.nLive, o.nSess
}

// Finish implements Operator: the final watermark fired every session.
func (o *sessionWindowOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *sessionWindowOp) Close() error {
	o.skeys, o.keyVals, o.keyStr, o.accs, o.due = nil, nil, nil, nil, sessQueue{}
	return nil
}
