package exec

import (
	"fmt"

	"github.com/weir-sql/weir/state"
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
func NewDedup(spec DedupSpec) func() Operator {
	return func() Operator { return &dedupOp{spec: spec} }
}

type dedupOp struct {
	spec DedupSpec
	rk   *RowKey
	k    *state.Keyed
	kept *state.ValueState[[]byte] // the key's kept row (state.Values); empty for proctime keep-first
	out  *types.Batch
	buf  []byte
	enc  []byte
}

// Open implements Operator.
func (o *dedupOp) Open(ctx *OpContext) error {
	o.rk = NewRowKey(o.spec.Keys, ctx.MaxParallelism)
	o.out = types.NewBatch(len(o.spec.Kinds), 64)
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *dedupOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	o.kept, err = state.NewValueState(k, "kept", state.Codec[[]byte](bufCodec{&o.buf}))
	return err
}

// insertOnly is keep-first on processing time, which never updates.
func (o *dedupOp) insertOnly() bool { return !o.spec.KeepLast && !o.spec.Rowtime }

// Process implements Operator.
func (o *dedupOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("Deduplicate got a %s row: its input must be insert-only", b.Kinds[i])
		}
		row := b.Row(i)
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		prev, ok, err := o.kept.Value()
		if err != nil {
			return err
		}
		if o.insertOnly() {
			if ok {
				continue
			}
			if err := o.kept.Update(nil); err != nil {
				return err
			}
			o.out.Append(types.Insert, row)
			continue
		}
		if ok {
			old := o.out.AppendEmpty(types.UpdateBefore)
			if err := o.decode(old, prev); err != nil {
				return err
			}
			if o.spec.Rowtime {
				pt, nt := old[o.spec.TimeCol], row[o.spec.TimeCol]
				replace := !nt.IsNull() && (pt.IsNull() || nt.Int() >= pt.Int())
				if !o.spec.KeepLast {
					replace = !nt.IsNull() && !pt.IsNull() && nt.Int() < pt.Int()
				}
				if !replace {
					o.out.Kinds = o.out.Kinds[:len(o.out.Kinds)-1]
					o.out.Vals = o.out.Vals[:len(o.out.Vals)-o.out.Width]
					continue
				}
			}
			o.out.Append(types.UpdateAfter, row)
		} else {
			o.out.Append(types.Insert, row)
		}
		o.enc = state.Values{}.Append(o.enc[:0], row)
		if err := o.kept.Update(o.enc); err != nil {
			return err
		}
	}
	if o.out.Len() > 0 {
		return out.Emit(o.out)
	}
	return nil
}

func (o *dedupOp) decode(dst []types.Value, src []byte) error {
	for i := range dst {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return fmt.Errorf("Deduplicate state: row: %w", err)
		}
		if o.spec.Kinds[i] == types.KindInt && v.Kind() == types.KindBigInt {
			v = v.WithKind(types.KindInt)
		}
		dst[i] = v
		src = rest
	}
	return nil
}

// OnTimer implements KeyedOperator (no timers).
func (o *dedupOp) OnTimer(state.Timer, Emitter) error { return nil }

// Finish implements Operator.
func (o *dedupOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *dedupOp) Close() error { return nil }

var _ KeyedOperator = (*dedupOp)(nil)
