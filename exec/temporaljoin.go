package exec

import (
	"fmt"
	"sync/atomic"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// TemporalJoinSpec describes an event-time temporal join (FOR SYSTEM_TIME
// AS OF a left rowtime) of an insert-only left input with a versioned
// right input (a changelog with a primary key within the join key and a
// rowtime, the version time). Type is InnerJoin or LeftOuterJoin.
type TemporalJoinSpec struct {
	JoinSpec
	// LeftTime is the left rowtime column, RightTime the right one.
	LeftTime, RightTime int
}

// NewTemporalJoin returns the constructor of an event-time temporal join
// operator, a KeyedOperator keyed by the join key, as Flink's
// TemporalRowTimeJoinOperator: left rows wait in a SortedMapState by time
// until the watermark passes their time; then each joins the right version
// valid at its time, the latest one with version time <= its time (an
// insert or update after; a delete ends a version, an update before is
// ignored). The versions of a key are a SortedMapState by version time;
// when the watermark passes, all but the latest version at or before it are
// purged (and that one too when it is a delete). Output is insert-only.
func NewTemporalJoin(spec TemporalJoinSpec) func() Operator {
	spec.Residual = expr.CheapFirst(spec.Residual) // cheap operands of AND/OR first
	return func() Operator { return &temporalJoinOp{spec: spec} }
}

// version is a right version kept in the operator's state.
type version struct {
	ts  int64
	del bool
	row []types.Value
}

type temporalJoinOp struct {
	spec TemporalJoinSpec
	// proc is the processing time PROCTIME() in the residual reads.
	proc     procClock
	k        *state.Keyed
	rk       [2]*RowKey
	left     *state.SortedMapState[timeKey, joinRec]
	right    *state.SortedMapState[int64, joinRec]
	dropped  *atomic.Int64
	outer    bool
	kb       []byte
	versions []version
	done     [][]byte
	joinOutput
}

var _ KeyedOperator = (*temporalJoinOp)(nil)

// Open implements Operator.
func (o *temporalJoinOp) Open(ctx *OpContext) error {
	s := &o.spec
	if s.Type != InnerJoin && s.Type != LeftOuterJoin {
		return fmt.Errorf("temporal join: join type %d (INNER or LEFT only)", s.Type)
	}
	o.joinOutput.open(len(s.Left.Kinds), len(s.Right.Kinds))
	o.rk[0] = NewRowKey(s.Left.Keys, ctx.MaxParallelism)
	o.rk[1] = NewRowKey(s.Right.Keys, ctx.MaxParallelism)
	o.outer = s.Type == LeftOuterJoin
	o.dropped = ctx.Dropped
	o.proc.open(clockOf(ctx))
	s.Residual = o.proc.bind(bindWatermark(ctx, s.Residual))
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *temporalJoinOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	if o.left, err = state.NewSortedMapState[timeKey, joinRec](k, "left", timeKeyCodec{}, &recCodec{kinds: o.spec.Left.Kinds}); err != nil {
		return err
	}
	o.right, err = state.NewSortedMapState[int64, joinRec](k, "versions", state.Int64{}, &recCodec{kinds: o.spec.Right.Kinds})
	return err
}

func (o *temporalJoinOp) drop() {
	if o.dropped != nil {
		o.dropped.Add(1)
	}
}

// Process implements Operator.
func (o *temporalJoinOp) Process(input int, b *types.Batch, out Emitter) error {
	switch input {
	case 0:
		for i := range b.Len() {
			if b.Kinds[i] != types.Insert {
				return fmt.Errorf("temporal join: %s row on the insert-only left input", b.Kinds[i])
			}
			if err := o.addLeft(b.Row(i), out); err != nil {
				return err
			}
		}
	case 1:
		for i := range b.Len() {
			if err := o.addRight(b.Kinds[i], b.Row(i)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("temporal join: input port %d", input)
	}
	return o.flush(out)
}

// addLeft keeps a left row until the watermark passes its time.
func (o *temporalJoinOp) addLeft(row []types.Value, out Emitter) error {
	tv := row[o.spec.LeftTime]
	if tv.IsNull() {
		o.drop()
		return nil
	}
	if hasNullKey(row, o.spec.Left.Keys) {
		if o.outer {
			return o.emitRow(types.Insert, 0, row, nil, 1, out)
		}
		return nil
	}
	if err := o.rk[0].Set(o.k, row); err != nil {
		return err
	}
	kb := o.kb[:0]
	for _, v := range row {
		kb = types.AppendKey(kb, v)
	}
	o.kb = kb
	key := timeKey{ts: tv.Int(), row: kb}
	r, ok, err := o.left.Get(key)
	if err != nil {
		return err
	}
	if !ok {
		r = joinRec{row: row}
	}
	r.count++
	if err := o.left.Put(key, r); err != nil {
		return err
	}
	return o.k.RegisterTimer(state.EventTime, key.ts, nil)
}

// addRight records a version of the right input: an insert or update
// after starts one at the row's time, a delete ends the current one there.
func (o *temporalJoinOp) addRight(kind types.RowKind, row []types.Value) error {
	if kind == types.UpdateBefore {
		return nil // the update after that follows replaces the version
	}
	tv := row[o.spec.RightTime]
	if tv.IsNull() {
		o.drop()
		return nil
	}
	if hasNullKey(row, o.spec.Right.Keys) {
		return nil // matches no left row
	}
	if err := o.rk[1].Set(o.k, row); err != nil {
		return err
	}
	r := joinRec{count: 1, row: row}
	if kind == types.Delete {
		r.count = 0
	}
	if err := o.right.Put(tv.Int(), r); err != nil {
		return err
	}
	return o.k.RegisterTimer(state.EventTime, tv.Int(), nil)
}

// OnTimer implements KeyedOperator: the watermark passed t for the current
// key, so its left rows up to t join the versions valid at their times,
// and the versions that no later left row can see are purged.
func (o *temporalJoinOp) OnTimer(tm state.Timer, out Emitter) error {
	if tm.Domain != state.EventTime {
		return nil
	}
	o.proc.tick()
	t := tm.Timestamp
	o.versions = o.versions[:0]
	err := o.right.Ascend(func(ts int64, r joinRec) (bool, error) {
		if ts > t {
			return false, nil
		}
		o.versions = append(o.versions, version{ts: ts, del: r.count == 0, row: append([]types.Value(nil), r.row...)})
		return true, nil
	})
	if err != nil {
		return err
	}
	o.done = o.done[:0]
	next := 0 // versions[:next] have ts <= the current left row's
	err = o.left.Ascend(func(k timeKey, r joinRec) (bool, error) {
		if k.ts > t {
			return false, nil
		}
		o.done = append(o.done, append(state.Int64{}.Append(nil, k.ts), k.row...))
		for next < len(o.versions) && o.versions[next].ts <= k.ts {
			next++
		}
		var match []types.Value
		if next > 0 && !o.versions[next-1].del {
			match = o.versions[next-1].row
			ok, err := o.matches(r.row, match)
			if err != nil {
				return false, err
			}
			if !ok {
				match = nil
			}
		}
		if match == nil && !o.outer {
			return true, nil
		}
		return true, o.emitRow(types.Insert, 0, r.row, match, r.count, out)
	})
	if err != nil {
		return err
	}
	for _, kk := range o.done {
		ts, _ := state.Int64{}.Decode(kk[:8])
		if err := o.left.Remove(timeKey{ts: ts, row: kk[8:]}); err != nil {
			return err
		}
	}
	// Purge: a left row still to come has a time after the watermark (or
	// is late and sees what is left), so only the latest version at or
	// before t can still match, unless it is a delete.
	n := len(o.versions)
	if n > 0 && !o.versions[n-1].del {
		n--
	}
	for _, v := range o.versions[:n] {
		if err := o.right.Remove(v.ts); err != nil {
			return err
		}
	}
	return o.flush(out)
}

// matches evaluates the residual on a left row with a version.
func (o *temporalJoinOp) matches(row, other []types.Value) (bool, error) {
	if o.spec.Residual == nil {
		return true, nil
	}
	copy(o.joined[:o.wl], row)
	copy(o.joined[o.wl:], other)
	v, err := o.spec.Residual.Eval(o.joined)
	if err != nil {
		return false, fmt.Errorf("join condition %s: %w", o.spec.Residual, err)
	}
	return !v.IsNull() && v.Bool(), nil
}

// Finish implements Operator. At the end of bounded input the +∞
// watermark has fired every timer.
func (o *temporalJoinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *temporalJoinOp) Close() error { return nil }
