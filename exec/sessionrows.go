package exec

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// NewSessionRows returns a factory for the rows of an event-time SESSION
// window TVF without aggregation, per key of the columns keys (SESSION's
// PARTITION BY; none: one key): each row is held in keyed state with the
// key's open sessions; a row's window [ts, ts + gap) merges every session
// it overlaps or touches (as the session window aggregate does), and when
// the watermark passes a session's end - 1 its rows are emitted in time
// order (ties in arrival order), each with the session's window_start,
// window_end and window_time (end - 1), and dropped. A row whose own
// window the watermark has passed and that touches no open session is
// late: dropped and counted. kinds are the input's column kinds.
func NewSessionRows(keys []int, spec WindowSpec, kinds []types.Kind) func() Operator {
	return func() Operator { return &sessionRowsOp{keys: keys, spec: spec, kinds: kinds} }
}

type sessionRowsOp struct {
	keys  []int
	spec  WindowSpec
	kinds []types.Kind
	rk    *RowKey
	k     *state.Keyed
	late  *atomic.Int64
	out   *types.Batch

	sess *state.ValueState[[]byte]             // the key's sessions: start, end pairs
	rows *state.SortedMapState[[]byte, []byte] // time | seq → row
	seq  *state.ValueState[int64]              // the key's last row number
	list []int64                               // decoded sessions, reused
	enc  []byte
	key  []byte
	sb   []byte
	done [][]byte
}

// Open implements Operator.
func (o *sessionRowsOp) Open(ctx *OpContext) error {
	if o.spec.Kind != WindowSession || o.spec.Proctime {
		return fmt.Errorf("%s: session rows need an event-time SESSION window", ctx.Name)
	}
	o.rk = NewRowKey(o.keys, ctx.MaxParallelism)
	o.late = ctx.Late
	if o.late == nil {
		o.late = new(atomic.Int64)
	}
	o.out = types.NewBatch(len(o.kinds)+3, 64)
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *sessionRowsOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	if o.sess, err = state.NewValueState(k, "sessions", state.Codec[[]byte](state.Bytes{})); err != nil {
		return err
	}
	if o.rows, err = state.NewSortedMapState(k, "rows", state.Codec[[]byte](state.Bytes{}), state.Codec[[]byte](state.Bytes{})); err != nil {
		return err
	}
	o.seq, err = state.NewValueState(k, "seq", state.Codec[int64](state.Int64{}))
	return err
}

// load decodes the current key's sessions into o.list.
func (o *sessionRowsOp) load() error {
	b, _, err := o.sess.Value()
	if err != nil {
		return err
	}
	o.list = o.list[:0]
	for i := 0; i+16 <= len(b); i += 16 {
		o.list = append(o.list, int64(binary.BigEndian.Uint64(b[i:])), int64(binary.BigEndian.Uint64(b[i+8:])))
	}
	return nil
}

// store writes o.list back for the current key (none: cleared).
func (o *sessionRowsOp) store() error {
	if len(o.list) == 0 {
		return o.sess.Clear()
	}
	o.sb = o.sb[:0]
	for _, v := range o.list {
		o.sb = binary.BigEndian.AppendUint64(o.sb, uint64(v))
	}
	return o.sess.Update(o.sb)
}

// sessionRowKey appends a row key ordered by time, then by seq.
func sessionRowKey(dst []byte, ts, seq int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(ts)^(1<<63))
	return binary.BigEndian.AppendUint64(dst, uint64(seq)^(1<<63))
}

// Process implements Operator.
func (o *sessionRowsOp) Process(_ int, b *types.Batch, out Emitter) error {
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("SESSION window TVF: %s row on an insert-only input", b.Kinds[i])
		}
		row := b.Row(i)
		tv := row[o.spec.TimeCol]
		if tv.IsNull() {
			o.late.Add(1)
			continue
		}
		ts := tv.Int()
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		if err := o.load(); err != nil {
			return err
		}
		start, end := ts, ts+o.spec.Gap
		merged := false
		kept := o.list[:0]
		for j := 0; j+1 < len(o.list); j += 2 {
			s, e := o.list[j], o.list[j+1]
			if s <= end && e >= start {
				start, end, merged = min(start, s), max(end, e), true
				continue
			}
			kept = append(kept, s, e)
		}
		o.list = kept
		if !merged && end-1 <= o.k.Watermark() {
			o.late.Add(1)
			if err := o.store(); err != nil {
				return err
			}
			continue
		}
		o.list = append(o.list, start, end)
		if err := o.k.RegisterTimer(state.EventTime, end-1, nil); err != nil {
			return err
		}
		if err := o.store(); err != nil {
			return err
		}
		seq, _, err := o.seq.Value()
		if err != nil {
			return err
		}
		seq++
		if err := o.seq.Update(seq); err != nil {
			return err
		}
		o.key = sessionRowKey(o.key[:0], ts, seq)
		o.enc = state.Values{}.Append(o.enc[:0], row)
		if err := o.rows.Put(o.key, o.enc); err != nil {
			return err
		}
	}
	return nil
}

// OnTimer implements KeyedOperator: the session ending at the timer's
// time + 1, if it is still open with that end (else it merged or grew and
// a later timer is its), emits its rows.
func (o *sessionRowsOp) OnTimer(tm state.Timer, out Emitter) error {
	if err := o.load(); err != nil {
		return err
	}
	at := -1
	for j := 0; j+1 < len(o.list); j += 2 {
		if o.list[j+1]-1 == tm.Timestamp {
			at = j
		}
	}
	if at < 0 {
		return nil
	}
	start, end := o.list[at], o.list[at+1]
	o.list = append(o.list[:at], o.list[at+2:]...)
	if err := o.store(); err != nil {
		return err
	}
	if len(o.list) == 0 {
		// No open session, so no row is kept: the key leaves no state.
		if err := o.seq.Clear(); err != nil {
			return err
		}
	}
	ts := types.TimestampValue
	if o.spec.LTZ {
		ts = types.TimestampLTZValue
	}
	w := len(o.kinds)
	codec := state.Values{Kinds: o.kinds}
	o.out.Reset()
	o.done = o.done[:0]
	var emitErr error
	lo, hi := sessionRowKey(nil, start, -1<<63), sessionRowKey(nil, end, -1<<63)
	err := o.rows.Range(lo, hi, func(k, v []byte) (bool, error) {
		row, err := codec.Decode(v)
		if err != nil {
			return false, err
		}
		o.done = append(o.done, append([]byte(nil), k...))
		dst := o.out.AppendEmpty(types.Insert)
		copy(dst, row)
		dst[w], dst[w+1], dst[w+2] = ts(start), ts(end), ts(end-1)
		if o.out.Len() >= 1024 {
			if emitErr = out.Emit(o.out); emitErr != nil {
				return false, nil
			}
			o.out.Reset()
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if emitErr != nil {
		return emitErr
	}
	for _, k := range o.done {
		if err := o.rows.Remove(k); err != nil {
			return err
		}
	}
	if o.out.Len() > 0 {
		err := out.Emit(o.out)
		o.out.Reset()
		return err
	}
	return nil
}

// Finish implements Operator: the end of input's watermark fired every
// session already.
func (o *sessionRowsOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *sessionRowsOp) Close() error { return nil }
