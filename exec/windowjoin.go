package exec

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// NewWindowAssign returns the constructor of a stateless operator that
// gives each row of its (insert-only) input the windows of spec (TUMBLE,
// HOP or CUMULATE, by the rowtime column spec.TimeCol, or with
// spec.Proctime by the subtask's clock) its time falls in:
// one output row per window, the input columns followed by window_start,
// window_end and window_time (window_end - 1 ms), as the window TVF's rows
// are. A row with a NULL time is in no window: it is dropped and counted
// as late (OpContext.Late).
func NewWindowAssign(spec WindowSpec) func() Operator {
	return func() Operator { return &windowAssignOp{spec: spec} }
}

type windowAssignOp struct {
	spec WindowSpec
	out  *types.Batch
	late *atomic.Int64
	w    int
	now  func() time.Time // the task's processing-time clock
}

// Open implements Operator.
func (o *windowAssignOp) Open(ctx *OpContext) error {
	if o.spec.Kind == WindowSession {
		return fmt.Errorf("window assign: %s windows are not supported", o.spec.Kind)
	}
	o.late = ctx.Late
	o.now = clockOf(ctx)
	return nil
}

// Process implements Operator.
func (o *windowAssignOp) Process(_ int, b *types.Batch, out Emitter) error {
	if o.out == nil {
		o.w = b.Width
		o.out = types.NewBatch(o.w+3, b.Len()+8)
	}
	ts := types.TimestampValue
	if o.spec.LTZ {
		ts = types.TimestampLTZValue
	}
	// In processing time a row's windows are those of the subtask's clock
	// when it is assigned (read once a batch), as Flink's.
	var now types.Value
	if o.spec.Proctime {
		now = types.TimestampLTZValue(o.now().UnixMilli())
	}
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("window TVF: %s row on an insert-only input", b.Kinds[i])
		}
		row := b.Row(i)
		tv := now
		if !o.spec.Proctime {
			tv = row[o.spec.TimeCol]
		}
		if tv.IsNull() {
			if o.late != nil {
				o.late.Add(1)
			}
			continue
		}
		err := o.spec.windowEnds(o.spec.SliceEnd(tv.Int()), func(end int64) error {
			dst := growRow(o.out, types.Insert) // the row and its window: every value
			copy(dst, row)
			dst[o.w], dst[o.w+1], dst[o.w+2] = ts(o.spec.WindowStart(end)), ts(end), ts(end-1)
			if o.out.Len() >= 1024 {
				return o.flush(out)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return o.flush(out)
}

func (o *windowAssignOp) flush(out Emitter) error {
	if o.out == nil || o.out.Len() == 0 {
		return nil
	}
	err := out.Emit(o.out)
	o.out.Reset()
	return err
}

// Finish implements Operator.
func (o *windowAssignOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *windowAssignOp) Close() error { return nil }

// WindowJoinSpec describes a window join: two inputs whose rows carry
// their window (window_start and window_end columns, as a window TVF
// gives them), joined on equal windows and equi-keys. The keys of each
// side (JoinSide.Keys) include its window_start and window_end columns;
// LeftEnd and RightEnd are the window_end columns.
type WindowJoinSpec struct {
	JoinSpec
	// Semi and Anti make it a semi or anti join (left rows out, Type is
	// then InnerJoin).
	Semi, Anti        bool
	LeftEnd, RightEnd int
}

// NewWindowJoin returns the constructor of a window join operator, a
// KeyedOperator keyed by the join keys with the window: it keeps the rows
// of both inputs of a key and window in list state and registers an
// event-time timer at the window's end; when the watermark passes it, the
// window's rows are joined (inner, outer with NULL padding, semi or anti),
// emitted once (insert-only) and dropped with the timer. A row whose
// window has already fired is late: dropped and counted (OpContext.Late).
// Rows with a NULL key never match.
func NewWindowJoin(spec WindowJoinSpec) func() Operator {
	spec.Residual = expr.CheapFirst(spec.Residual) // cheap operands of AND/OR first
	return func() Operator { return &windowJoinOp{spec: spec} }
}

type windowJoinOp struct {
	spec WindowJoinSpec
	// proc is the processing time PROCTIME() in the residual reads.
	proc  procClock
	k     *state.Keyed
	rk    [2]*RowKey
	lists [2]*state.ListState[[]types.Value]
	late  *atomic.Int64
	rows  [2][][]types.Value
	hit   []bool
	arena []types.Value // the values of the rows OnTimer decodes
	// The key and window end whose timer the last row registered.
	timerKey []byte
	timerEnd int64
	semi     *types.Batch // the output of a semi or anti join
	joinOutput
}

var _ KeyedOperator = (*windowJoinOp)(nil)

// Open implements Operator.
func (o *windowJoinOp) Open(ctx *OpContext) error {
	s := &o.spec
	o.joinOutput.open(len(s.Left.Kinds), len(s.Right.Kinds))
	o.semi = types.NewBatch(len(s.Left.Kinds), 256)
	o.rk[0] = NewRowKey(s.Left.Keys, ctx.MaxParallelism)
	o.rk[1] = NewRowKey(s.Right.Keys, ctx.MaxParallelism)
	o.late = ctx.Late
	o.proc.open(clockOf(ctx))
	s.Residual = o.proc.bind(bindWatermark(ctx, s.Residual))
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *windowJoinOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	for i, side := range []JoinSide{o.spec.Left, o.spec.Right} {
		var err error
		if o.lists[i], err = state.NewListState[[]types.Value](k, []string{"left", "right"}[i], state.ValuesIn{Values: state.Values{Kinds: side.Kinds}, Arena: &o.arena}); err != nil {
			return fmt.Errorf("window join: %w", err)
		}
	}
	return nil
}

// Process implements Operator: port 0 is the left input, port 1 the right.
func (o *windowJoinOp) Process(input int, b *types.Batch, out Emitter) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("window join: input port %d", input)
	}
	endCol := o.spec.LeftEnd
	if input == 1 {
		endCol = o.spec.RightEnd
	}
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("window join: %s row on an insert-only input", b.Kinds[i])
		}
		row := b.Row(i)
		end := row[endCol]
		if end.IsNull() || end.Int()-1 <= o.k.Watermark() {
			if o.late != nil {
				o.late.Add(1)
			}
			continue
		}
		if err := o.rk[input].Set(o.k, row); err != nil {
			return err
		}
		if err := o.lists[input].Add(row); err != nil {
			return err
		}
		// A window's rows come together (a window aggregate fires a
		// window at a time): its timer is registered once per run of
		// them. It stays until the watermark passes it, and rows after
		// that are late, so skipping the registration is safe.
		if e := end.Int(); e != o.timerEnd || !bytes.Equal(o.k.CurrentKey(), o.timerKey) {
			if err := o.k.RegisterTimer(state.EventTime, e-1, nil); err != nil {
				return err
			}
			o.timerEnd, o.timerKey = e, append(o.timerKey[:0], o.k.CurrentKey()...)
		}
	}
	return nil
}

// OnTimer implements KeyedOperator: the window of the timer's key has
// closed; its rows are joined, emitted and dropped.
func (o *windowJoinOp) OnTimer(tm state.Timer, out Emitter) error {
	if tm.Domain != state.EventTime {
		return nil
	}
	o.proc.tick()
	// The rows decode into the blocks of o.arena (the output copies
	// them); the rows of a large window are let go after it.
	o.arena = o.arena[:0]
	defer func() {
		if len(o.rows[0])+len(o.rows[1]) > 1<<12 {
			o.rows = [2][][]types.Value{}
		}
	}()
	for i := range 2 {
		o.rows[i] = o.rows[i][:0]
		err := o.lists[i].Get(func(r []types.Value) (bool, error) {
			o.rows[i] = append(o.rows[i], r)
			return true, nil
		})
		if err != nil {
			return err
		}
		if err := o.lists[i].Clear(); err != nil {
			return err
		}
	}
	left, right := o.rows[0], o.rows[1]
	o.hit = append(o.hit[:0], make([]bool, len(right))...)
	t := o.spec.Type
	for _, l := range left {
		matched := false
		if !hasNullKey(l, o.spec.Left.Keys) {
			for j, r := range right {
				if hasNullKey(r, o.spec.Right.Keys) {
					continue
				}
				ok, err := o.matches(l, r)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				matched, o.hit[j] = true, true
				if o.spec.Semi || o.spec.Anti {
					break
				}
				if err := o.emitRow(types.Insert, 0, l, r, 1, out); err != nil {
					return err
				}
			}
		}
		switch {
		case o.spec.Semi || o.spec.Anti:
			if matched == o.spec.Semi {
				o.semi.Append(types.Insert, l)
			}
		case !matched && (t == LeftOuterJoin || t == FullOuterJoin):
			if err := o.emitRow(types.Insert, 0, l, nil, 1, out); err != nil {
				return err
			}
		}
	}
	if !o.spec.Semi && !o.spec.Anti && (t == RightOuterJoin || t == FullOuterJoin) {
		for j, r := range right {
			if !o.hit[j] {
				if err := o.emitRow(types.Insert, 1, r, nil, 1, out); err != nil {
					return err
				}
			}
		}
	}
	if o.semi.Len() > 0 {
		err := out.Emit(o.semi)
		o.semi.Reset()
		if err != nil {
			return err
		}
	}
	return o.flush(out)
}

// matches evaluates the residual on left row l with right row r.
func (o *windowJoinOp) matches(l, r []types.Value) (bool, error) {
	if o.spec.Residual == nil {
		return true, nil
	}
	copy(o.joined[:o.wl], l)
	copy(o.joined[o.wl:], r)
	v, err := o.spec.Residual.Eval(o.joined)
	if err != nil {
		return false, fmt.Errorf("window join condition %s: %w", o.spec.Residual, err)
	}
	return !v.IsNull() && v.Bool(), nil
}

// Finish implements Operator. At the end of bounded input the +∞
// watermark has fired every window.
func (o *windowJoinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *windowJoinOp) Close() error { return nil }
