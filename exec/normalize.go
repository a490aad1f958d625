package exec

import (
	"fmt"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// NormalizeSpec configures a ChangelogNormalize (NewChangelogNormalize).
type NormalizeSpec struct {
	Keys  []int        // the primary key
	Kinds []types.Kind // the input's column kinds
}

// NewChangelogNormalize returns Flink's ChangelogNormalize: it turns an
// upsert changelog keyed by spec.Keys (+I or +U: the key's row is now
// this one; -D: the key is gone, its other columns possibly NULL) into a
// retract changelog, keeping each key's last row in keyed state: the
// first row of a key is +I, a different later one -U of the kept row and
// +U of the new one (an equal one nothing), a delete -D of the kept row
// (nothing for a key without one).
func NewChangelogNormalize(spec NormalizeSpec) func() Operator {
	return func() Operator { return &normalizeOp{spec: spec} }
}

type normalizeOp struct {
	spec NormalizeSpec
	rk   *RowKey
	k    *state.Keyed
	last *state.ValueState[[]byte] // the key's row (state.Values)
	out  *types.Batch
	buf  []byte
	enc  []byte
}

// Open implements Operator.
func (o *normalizeOp) Open(ctx *OpContext) error {
	o.rk = NewRowKey(o.spec.Keys, ctx.MaxParallelism)
	o.out = types.NewBatch(len(o.spec.Kinds), 64)
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *normalizeOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	o.last, err = state.NewValueState(k, "last", state.Codec[[]byte](bufCodec{&o.buf}))
	return err
}

// Process implements Operator.
func (o *normalizeOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	for i := range b.Len() {
		kind, row := b.Kinds[i], b.Row(i)
		if kind == types.UpdateBefore {
			continue // an upsert changelog has none; the +U that follows says it all
		}
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		prev, ok, err := o.last.Value()
		if err != nil {
			return err
		}
		if kind == types.Delete {
			if !ok {
				continue
			}
			if err := o.decode(o.out.AppendEmpty(types.Delete), prev); err != nil {
				return err
			}
			if err := o.last.Clear(); err != nil {
				return err
			}
			continue
		}
		o.enc = state.Values{}.Append(o.enc[:0], row)
		if ok {
			if string(prev) == string(o.enc) {
				continue // the same row again: nothing changed
			}
			if err := o.decode(o.out.AppendEmpty(types.UpdateBefore), prev); err != nil {
				return err
			}
			o.out.Append(types.UpdateAfter, row)
		} else {
			o.out.Append(types.Insert, row)
		}
		if err := o.last.Update(o.enc); err != nil {
			return err
		}
	}
	if o.out.Len() > 0 {
		return out.Emit(o.out)
	}
	return nil
}

func (o *normalizeOp) decode(dst []types.Value, src []byte) error {
	for i := range dst {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return fmt.Errorf("ChangelogNormalize state: row: %w", err)
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
func (o *normalizeOp) OnTimer(state.Timer, Emitter) error { return nil }

// Finish implements Operator.
func (o *normalizeOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *normalizeOp) Close() error { return nil }

var _ KeyedOperator = (*normalizeOp)(nil)
