package exec

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// OverFrame is the frame of an OVER aggregate: the rows from Rows
// preceding (ROWS) or from Range milliseconds before (RANGE) up to the
// current row; Unbounded for UNBOUNDED PRECEDING.
type OverFrame struct {
	Unbounded bool
	IsRows    bool  // ROWS (else RANGE)
	Rows      int64 // ROWS n PRECEDING
	Range     int64 // RANGE INTERVAL … PRECEDING, in ms
}

// OverSpec configures an OVER aggregate (NewOverAgg).
type OverSpec struct {
	Partition []int
	TimeCol   int  // the time attribute ordered by (ascending)
	Rowtime   bool // event time (else processing time)
	Frame     OverFrame
	Calls     []aggfunc.Call // arguments are input columns (Arg; -1 for COUNT(*))
	Kinds     []types.Kind   // the input's column kinds
	// Order is the ORDER BY of NewOverAggUpdating (any columns).
	Order []SortKey
}

// NewOverAgg returns the OVER aggregate of spec over insert-only input: each
// input row is emitted (+I) with one value per call, aggregated over its
// frame within its partition. On event time a row waits in state until the
// watermark passes its time (an event-time timer), and rows are processed
// in time order, the rows of one time together; a row whose time is not
// after the watermark on arrival is late: dropped and counted. On
// processing time rows are processed on arrival. State is bounded by the
// frame: the last n rows (ROWS), the rows within the range (RANGE), or
// the accumulators alone (UNBOUNDED).
func NewOverAgg(spec OverSpec) func() Operator {
	return func() Operator { return &overAggOp{spec: spec} }
}

type overAggOp struct {
	spec    OverSpec
	rk      *RowKey
	k       *state.Keyed
	accs    []accumulator
	dropped *atomic.Int64
	out     *types.Batch

	pending *state.SortedMapState[[]byte, []byte] // rowtime: time | seq → row, waiting for the watermark
	seq     *state.ValueState[int64]
	acc     *state.ValueState[[]byte]             // UNBOUNDED: the saved accumulators
	rows    *state.ValueState[[]byte]             // ROWS n: the last n rows
	byTime  *state.SortedMapState[[]byte, []byte] // RANGE: time | seq → row within the range

	enc, kb, buf []byte
	frame        [][]types.Value // rows of the current frame, decoded
	group        [][]types.Value // the rows processed together
}

// Open implements Operator.
func (o *overAggOp) Open(ctx *OpContext) error {
	o.rk = NewRowKey(o.spec.Partition, ctx.MaxParallelism)
	o.out = types.NewBatch(len(o.spec.Kinds)+len(o.spec.Calls), 64)
	o.dropped = ctx.Late
	for _, c := range o.spec.Calls {
		a, err := NewAccumulator(c)
		if err != nil {
			return err
		}
		a.grow()
		o.accs = append(o.accs, a)
	}
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *overAggOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	bytesC := state.Codec[[]byte](state.Bytes{})
	var err error
	if o.pending, err = state.NewSortedMapState(k, "pending", bytesC, bytesC); err != nil {
		return err
	}
	if o.seq, err = state.NewValueState(k, "seq", state.Codec[int64](state.Int64{})); err != nil {
		return err
	}
	switch f := o.spec.Frame; {
	case f.Unbounded:
		o.acc, err = state.NewValueState(k, "acc", bytesC)
	case f.IsRows:
		o.rows, err = state.NewValueState(k, "rows", bytesC)
	default:
		o.byTime, err = state.NewSortedMapState(k, "bytime", bytesC, bytesC)
	}
	return err
}

// timeKey is time | seq: sorted by time, then arrival.
func (o *overAggOp) timeKey(ts int64) ([]byte, error) {
	n, _, err := o.seq.Value()
	if err != nil {
		return nil, err
	}
	if err := o.seq.Update(n + 1); err != nil {
		return nil, err
	}
	o.kb = binary.BigEndian.AppendUint64(state.AppendInt64(o.kb[:0], ts), uint64(n))
	return o.kb, nil
}

// Process implements Operator.
func (o *overAggOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("OverAggregate got a %s row: its input must be insert-only", b.Kinds[i])
		}
		row := b.Row(i)
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		tv := row[o.spec.TimeCol]
		if tv.IsNull() {
			return fmt.Errorf("OverAggregate: NULL in the time attribute it is ordered by")
		}
		if !o.spec.Rowtime {
			o.group = append(o.group[:0], row)
			if err := o.processGroup(tv.Int()); err != nil {
				return err
			}
			continue
		}
		if ts := tv.Int(); ts <= o.k.Watermark() {
			if o.dropped != nil {
				o.dropped.Add(1) // late
			}
			continue
		}
		key, err := o.timeKey(tv.Int())
		if err != nil {
			return err
		}
		o.enc = state.Values{}.Append(o.enc[:0], row)
		if err := o.pending.Put(key, o.enc); err != nil {
			return err
		}
		if err := o.k.RegisterTimer(state.EventTime, tv.Int(), nil); err != nil {
			return err
		}
	}
	if o.out.Len() > 0 {
		return out.Emit(o.out)
	}
	return nil
}

// OnTimer processes the partition's rows of the timer's time.
func (o *overAggOp) OnTimer(tm state.Timer, out Emitter) error {
	o.out.Reset()
	lo := state.AppendInt64(nil, tm.Timestamp)
	hi := state.AppendInt64(nil, tm.Timestamp+1)
	var keys [][]byte
	o.group = o.group[:0]
	err := o.pending.Range(lo, hi, func(k, v []byte) (bool, error) {
		row, err := o.decode(v)
		if err != nil {
			return false, err
		}
		keys = append(keys, k)
		o.group = append(o.group, row)
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := o.pending.Remove(k); err != nil {
			return err
		}
	}
	if len(o.group) > 0 {
		if err := o.processGroup(tm.Timestamp); err != nil {
			return err
		}
	}
	if o.out.Len() > 0 {
		return out.Emit(o.out)
	}
	return nil
}

func (o *overAggOp) decode(src []byte) ([]types.Value, error) {
	row := make([]types.Value, len(o.spec.Kinds))
	for i := range row {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return nil, fmt.Errorf("OverAggregate state: row: %w", err)
		}
		if k := o.spec.Kinds[i]; k == types.KindInt && v.Kind() == types.KindBigInt {
			v = v.WithKind(types.KindInt)
		}
		row[i] = v
		src = rest
	}
	return row, nil
}

// arg is call i's argument in row (NULL is skipped by the accumulators;
// COUNT(*) counts the row).
func (o *overAggOp) arg(i int, row []types.Value) types.Value {
	if a := o.spec.Calls[i].Arg; a >= 0 {
		return row[a]
	}
	return types.BigIntValue(1)
}

// emitRow emits row with the accumulators' results.
func (o *overAggOp) emitRow(row []types.Value) {
	r := o.out.AppendEmpty(types.Insert)
	copy(r, row)
	for i, a := range o.accs {
		r[len(row)+i] = a.result(0)
	}
}

// processGroup processes the rows of o.group, all of time ts, in order.
func (o *overAggOp) processGroup(ts int64) error {
	f := o.spec.Frame
	switch {
	case f.Unbounded:
		saved, ok, err := o.acc.Value()
		if err != nil {
			return err
		}
		for _, a := range o.accs {
			a.reset(0)
		}
		if ok {
			src := saved
			for _, a := range o.accs {
				if src, err = a.load(0, src); err != nil {
					return fmt.Errorf("OverAggregate state: %w", err)
				}
			}
		}
		for _, row := range o.group {
			for i, a := range o.accs {
				a.add(0, o.arg(i, row))
			}
			if f.IsRows {
				o.emitRow(row)
			}
		}
		if !f.IsRows { // RANGE: the rows of one time are peers, one result
			for _, row := range o.group {
				o.emitRow(row)
			}
		}
		o.buf = o.buf[:0]
		for _, a := range o.accs {
			o.buf = a.save(0, o.buf)
		}
		return o.acc.Update(o.buf)
	case f.IsRows:
		blob, _, err := o.rows.Value()
		if err != nil {
			return err
		}
		o.frame = o.frame[:0]
		for src := blob; len(src) > 0; {
			n, w := binary.Uvarint(src)
			if w <= 0 || int(n) > len(src)-w {
				return fmt.Errorf("OverAggregate state: malformed rows")
			}
			row, err := o.decode(src[w : w+int(n)])
			if err != nil {
				return err
			}
			o.frame = append(o.frame, row)
			src = src[w+int(n):]
		}
		for _, row := range o.group {
			o.frame = append(o.frame, row)
			if int64(len(o.frame)) > f.Rows+1 {
				o.frame = o.frame[1:]
			}
			for _, a := range o.accs {
				a.reset(0)
			}
			for _, fr := range o.frame {
				for i, a := range o.accs {
					a.add(0, o.arg(i, fr))
				}
			}
			o.emitRow(row)
		}
		// Keep the last n rows (those a later row's frame holds).
		keep := o.frame[max(0, len(o.frame)-int(f.Rows)):]
		o.buf = o.buf[:0]
		for _, row := range keep {
			o.enc = state.Values{}.Append(o.enc[:0], row)
			o.buf = binary.AppendUvarint(o.buf, uint64(len(o.enc)))
			o.buf = append(o.buf, o.enc...)
		}
		return o.rows.Update(o.buf)
	default:
		// RANGE: drop the rows before the range, add this time's rows,
		// aggregate over all kept.
		lo := ts - f.Range
		var old [][]byte
		err := o.byTime.Range(state.AppendInt64(nil, -1<<63), state.AppendInt64(nil, lo), func(k, _ []byte) (bool, error) {
			old = append(old, k)
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, k := range old {
			if err := o.byTime.Remove(k); err != nil {
				return err
			}
		}
		for _, row := range o.group {
			key, err := o.timeKey(ts)
			if err != nil {
				return err
			}
			o.enc = state.Values{}.Append(o.enc[:0], row)
			if err := o.byTime.Put(key, o.enc); err != nil {
				return err
			}
		}
		for _, a := range o.accs {
			a.reset(0)
		}
		err = o.byTime.Ascend(func(_, v []byte) (bool, error) {
			row, err := o.decode(v)
			if err != nil {
				return false, err
			}
			for i, a := range o.accs {
				a.add(0, o.arg(i, row))
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, row := range o.group {
			o.emitRow(row)
		}
		return nil
	}
}

// Finish implements Operator.
func (o *overAggOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *overAggOp) Close() error { return nil }

var _ KeyedOperator = (*overAggOp)(nil)
