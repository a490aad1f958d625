package exec

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// SortSpec configures a sort (NewSort) of an insert-only input on one
// subtask.
type SortSpec struct {
	Order []SortKey
	// TimeCol is the rowtime column the order starts with (ascending), or
	// -1: then rows are held until the end of input (a bounded input).
	TimeCol int
	// Arrival: the order starts with a proctime attribute, ascending, so
	// rows go out as they come.
	Arrival bool
	// Limit > 0 keeps only the first Limit rows (of a bounded input, at
	// its end: ORDER BY … LIMIT n in batch).
	Limit int64
	// Offset > 0 leaves out the first Offset rows it would emit (OFFSET m
	// on a bounded input; with a Limit, it counts them).
	Offset int64
	Kinds  []types.Kind // the input's column kinds
}

// NewSort returns the operator of ORDER BY without LIMIT. With a rowtime
// (TimeCol ≥ 0) it keeps each row in state until the watermark passes its
// time and then emits the rows in ORDER BY order (Flink's streaming sort
// on a time attribute); a row not after the watermark when it arrives is
// late: dropped and counted. Without one it emits every row, sorted, at
// the end of its (bounded) input. Ties keep arrival order. Its state is
// keyed state under one key, so it is checkpointed and restored as any.
func NewSort(spec SortSpec) func() Operator {
	return func() Operator { return &sortOp{spec: spec} }
}

type sortOp struct {
	spec SortSpec
	rk   *RowKey
	k    *state.Keyed
	out  *types.Batch
	late *atomic.Int64

	rows *state.SortedMapState[[]byte, []byte] // sort key | seq → row
	seq  *state.ValueState[int64]
	kept *state.ValueState[int64] // with a Limit: the rows kept

	key, enc []byte
	done     [][]byte
}

// Open implements Operator.
func (o *sortOp) Open(ctx *OpContext) error {
	o.rk = NewRowKey(nil, ctx.MaxParallelism)
	o.out = types.NewBatch(len(o.spec.Kinds), 64)
	o.late = ctx.Late
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *sortOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	if o.rows, err = state.NewSortedMapState(k, "rows", state.Codec[[]byte](state.Bytes{}), state.Codec[[]byte](state.Bytes{})); err != nil {
		return err
	}
	if o.seq, err = state.NewValueState(k, "seq", state.Codec[int64](state.Int64{})); err != nil {
		return err
	}
	o.kept, err = state.NewValueState(k, "kept", state.Codec[int64](state.Int64{}))
	return err
}

// Process implements Operator.
func (o *sortOp) Process(_ int, b *types.Batch, out Emitter) error {
	if b.Len() == 0 {
		return nil
	}
	if o.spec.Arrival {
		return out.Emit(b)
	}
	if err := o.rk.Set(o.k, nil); err != nil {
		return err
	}
	seq, _, err := o.seq.Value()
	if err != nil {
		return err
	}
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("ORDER BY: input row of kind %s: a sort takes insert-only input", b.Kinds[i])
		}
		row := b.Row(i)
		if tc := o.spec.TimeCol; tc >= 0 {
			tv := row[tc]
			if tv.IsNull() || tv.Int() <= o.k.Watermark() {
				if o.late != nil {
					o.late.Add(1)
				}
				continue
			}
			if err := o.k.RegisterTimer(state.EventTime, tv.Int(), nil); err != nil {
				return err
			}
		}
		seq++
		o.key = binary.BigEndian.AppendUint64(encodeSortKey(o.key[:0], o.spec.Order, row), uint64(seq))
		o.enc = state.Values{}.Append(o.enc[:0], row)
		if err := o.rows.Put(o.key, o.enc); err != nil {
			return err
		}
		if err := o.limit(); err != nil {
			return err
		}
	}
	return o.seq.Update(seq)
}

// limit drops the last kept row when there are more than Limit.
func (o *sortOp) limit() error {
	if o.spec.Limit <= 0 {
		return nil
	}
	n, _, err := o.kept.Value()
	if err != nil {
		return err
	}
	if n < o.spec.Limit {
		return o.kept.Update(n + 1)
	}
	last, _, ok, err := o.rows.Last()
	if err != nil || !ok {
		return err
	}
	return o.rows.Remove(last)
}

// OnTimer implements KeyedOperator: the watermark passed the timer's
// time, so the rows up to it go out in order.
func (o *sortOp) OnTimer(tm state.Timer, out Emitter) error {
	return o.emitUpTo(tm.Timestamp, out)
}

// emitUpTo emits, in order, the kept rows whose time is at most upTo
// (every row when the sort has no time column) and drops them.
func (o *sortOp) emitUpTo(upTo int64, out Emitter) error {
	o.out.Reset()
	o.done = o.done[:0]
	codec := state.Values{Kinds: o.spec.Kinds}
	var emitErr error
	skip := int64(0)
	if o.spec.TimeCol < 0 {
		// Without a time column this runs once, at the end of input.
		skip = o.spec.Offset
	}
	err := o.rows.Ascend(func(k, v []byte) (bool, error) {
		row, err := codec.Decode(v)
		if err != nil {
			return false, err
		}
		if tc := o.spec.TimeCol; tc >= 0 && row[tc].Int() > upTo {
			return false, nil
		}
		o.done = append(o.done, append([]byte(nil), k...))
		if skip > 0 {
			skip--
			return true, nil
		}
		o.out.Append(types.Insert, row)
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
		return out.Emit(o.out)
	}
	return nil
}

// Finish implements Operator: what is still kept goes out, in order.
func (o *sortOp) Finish(out Emitter) error {
	if err := o.rk.Set(o.k, nil); err != nil {
		return err
	}
	return o.emitUpTo(int64(^uint64(0)>>1), out)
}

// Close implements Operator.
func (o *sortOp) Close() error { return nil }
