package exec

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// IntervalJoinSpec describes an interval join: a join of insert-only
// inputs whose condition bounds the right row's rowtime (column RightTime)
// by the left row's (LeftTime): right - left in [Lower, Upper] ms.
type IntervalJoinSpec struct {
	JoinSpec
	LeftTime, RightTime int
	Lower, Upper        int64
}

// NewIntervalJoin returns the constructor of an interval join operator, a
// KeyedOperator keyed by the join key. Each input's rows are kept in a
// SortedMapState by time; a row is joined with the other side's rows in
// its interval when it arrives (output is insert-only), and an event-time
// timer drops it once the watermark passes the end of the interval it can
// still match in, emitting it NULL-padded first if it is on a preserved
// side of an outer join and never matched. A row behind the watermark
// (late: rows it would match may be gone) is dropped and counted in the
// job's dropped rows. The watermark goes on held back by the bounds, so
// that the rows emitted are not late downstream.
func NewIntervalJoin(spec IntervalJoinSpec) func() Operator {
	return func() Operator { return &intervalJoinOp{spec: spec} }
}

// timeKey is a kept row's map key: its time, then the encoded row (so a
// map holds each distinct row at a time once, with a count).
type timeKey struct {
	ts  int64
	row []byte
}

type timeKeyCodec struct{}

func (timeKeyCodec) Append(dst []byte, k timeKey) []byte {
	return append(state.Int64{}.Append(dst, k.ts), k.row...)
}

func (timeKeyCodec) Decode(src []byte) (timeKey, error) {
	if len(src) < 8 {
		return timeKey{}, errors.New("interval join: short time key")
	}
	ts, err := state.Int64{}.Decode(src[:8])
	return timeKey{ts: ts, row: src[8:]}, err
}

type intervalJoinOp struct {
	spec    IntervalJoinSpec
	k       *state.Keyed
	rk      [2]*RowKey
	rows    [2]*state.SortedMapState[timeKey, joinRec]
	outer   [2]bool
	times   [2]int
	dropped *atomic.Int64
	delay   int64
	joinOutput
	kb []byte
	// pending holds the match flags set during a scan (their map keys and
	// rows in pkeys and prows); keys the map keys a cleanup removes (their
	// bytes in pkeys, end offsets in keys). The arenas are reused, so that
	// neither allocates per row once grown.
	pending []trackedRec
	pkeys   []byte
	prows   []types.Value
	keys    []int
}

var (
	_ KeyedOperator     = (*intervalJoinOp)(nil)
	_ WatermarkOperator = (*intervalJoinOp)(nil)
)

// Open implements Operator.
func (o *intervalJoinOp) Open(ctx *OpContext) error {
	s := &o.spec
	o.joinOutput.open(len(s.Left.Kinds), len(s.Right.Kinds))
	o.rk[0] = NewRowKey(s.Left.Keys, ctx.MaxParallelism)
	o.rk[1] = NewRowKey(s.Right.Keys, ctx.MaxParallelism)
	o.outer = [2]bool{s.Type == LeftOuterJoin || s.Type == FullOuterJoin, s.Type == RightOuterJoin || s.Type == FullOuterJoin}
	o.times = [2]int{s.LeftTime, s.RightTime}
	o.dropped = ctx.Dropped
	o.delay = max(s.Upper, -s.Lower, 0) + 1
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *intervalJoinOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	for i, name := range []string{"left", "right"} {
		kinds := o.spec.Left.Kinds
		if i == 1 {
			kinds = o.spec.Right.Kinds
		}
		var err error
		o.rows[i], err = state.NewSortedMapState[timeKey, joinRec](k, name, timeKeyCodec{}, &recCodec{kinds: kinds})
		if err != nil {
			return err
		}
	}
	return nil
}

func (o *intervalJoinOp) drop() {
	if o.dropped != nil {
		o.dropped.Add(1)
	}
}

// Process implements Operator.
func (o *intervalJoinOp) Process(input int, b *types.Batch, out Emitter) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("interval join: input port %d", input)
	}
	keys := o.spec.Left.Keys
	if input == 1 {
		keys = o.spec.Right.Keys
	}
	for i := range b.Len() {
		row := b.Row(i)
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("interval join: %s row on an insert-only input", b.Kinds[i])
		}
		tv := row[o.times[input]]
		if tv.IsNull() || tv.Int() < o.k.Watermark() {
			o.drop() // late, or no time
			continue
		}
		if hasNullKey(row, keys) {
			if o.outer[input] {
				if err := o.emitRow(types.Insert, input, row, nil, 1, out); err != nil {
					return err
				}
			}
			continue
		}
		if err := o.rk[input].Set(o.k, row); err != nil {
			return err
		}
		if err := o.add(input, tv.Int(), row, out); err != nil {
			return err
		}
	}
	return o.flush(out)
}

// add joins row (of side, at time t) with the other side's rows in its
// interval, keeps it and registers its cleanup timer.
func (o *intervalJoinOp) add(side int, t int64, row []types.Value, out Emitter) error {
	lo, hi := t+o.spec.Lower, t+o.spec.Upper // the right rows' times for a left row
	cleanup := t + o.spec.Upper + 1
	if side == 1 {
		lo, hi = t-o.spec.Upper, t-o.spec.Lower
		cleanup = t - o.spec.Lower + 1
	}
	other := 1 - side
	var matched int64
	o.pending, o.pkeys, o.prows = o.pending[:0], o.pkeys[:0], o.prows[:0]
	err := o.rows[other].Range(timeKey{ts: lo}, timeKey{ts: hi + 1}, func(k timeKey, r joinRec) (bool, error) {
		ok, err := o.matches(side, row, r.row)
		if err != nil || !ok {
			return err == nil, err
		}
		matched += r.count
		if o.outer[other] && r.assoc == 0 {
			o.pending = append(o.pending, trackedRec{
				koff: len(o.pkeys), klen: 8 + len(k.row), roff: len(o.prows), rlen: len(r.row),
				count: r.count, assoc: 1,
			})
			o.pkeys = append(state.Int64{}.Append(o.pkeys, k.ts), k.row...)
			o.prows = append(o.prows, r.row...)
		}
		return true, o.emitRow(types.Insert, side, row, r.row, r.count, out)
	})
	if err != nil {
		return err
	}
	for i := range o.pending {
		p := &o.pending[i]
		kk := o.pkeys[p.koff : p.koff+p.klen]
		ts, _ := state.Int64{}.Decode(kk[:8])
		r := joinRec{count: p.count, assoc: p.assoc, row: o.prows[p.roff : p.roff+p.rlen]}
		if err := o.rows[other].Put(timeKey{ts: ts, row: kk[8:]}, r); err != nil {
			return err
		}
	}
	kb := o.kb[:0]
	for _, v := range row {
		kb = types.AppendKey(kb, v)
	}
	o.kb = kb
	key := timeKey{ts: t, row: kb}
	r, ok, err := o.rows[side].Get(key)
	if err != nil {
		return err
	}
	if !ok {
		r = joinRec{row: row}
	}
	r.count++
	if matched > 0 {
		r.assoc = 1
	}
	if err := o.rows[side].Put(key, r); err != nil {
		return err
	}
	return o.k.RegisterTimer(state.EventTime, cleanup, []byte{byte(side)})
}

func (o *intervalJoinOp) matches(side int, row, other []types.Value) (bool, error) {
	if o.spec.Residual == nil {
		return true, nil
	}
	if side == 0 {
		copy(o.joined[:o.wl], row)
		copy(o.joined[o.wl:], other)
	} else {
		copy(o.joined[:o.wl], other)
		copy(o.joined[o.wl:], row)
	}
	v, err := o.spec.Residual.Eval(o.joined)
	if err != nil {
		return false, fmt.Errorf("join condition %s: %w", o.spec.Residual, err)
	}
	return !v.IsNull() && v.Bool(), nil
}

// OnTimer implements KeyedOperator: it drops the rows of one side whose
// interval the watermark has passed, emitting the unmatched ones of a
// preserved side NULL-padded.
func (o *intervalJoinOp) OnTimer(tm state.Timer, out Emitter) error {
	if tm.Domain != state.EventTime || len(tm.Namespace) != 1 || tm.Namespace[0] > 1 {
		return nil
	}
	side := int(tm.Namespace[0])
	bound := tm.Timestamp - o.spec.Upper // rows with t + Upper + 1 <= T
	if side == 1 {
		bound = tm.Timestamp + o.spec.Lower // rows with t - Lower + 1 <= T
	}
	o.keys, o.pkeys = o.keys[:0], o.pkeys[:0]
	err := o.rows[side].Range(timeKey{ts: math.MinInt64}, timeKey{ts: bound}, func(k timeKey, r joinRec) (bool, error) {
		o.pkeys = append(state.Int64{}.Append(o.pkeys, k.ts), k.row...)
		o.keys = append(o.keys, len(o.pkeys))
		if o.outer[side] && r.assoc == 0 {
			if err := o.emitRow(types.Insert, side, r.row, nil, r.count, out); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	start := 0
	for _, end := range o.keys {
		kk := o.pkeys[start:end]
		start = end
		ts, _ := state.Int64{}.Decode(kk[:8])
		if err := o.rows[side].Remove(timeKey{ts: ts, row: kk[8:]}); err != nil {
			return err
		}
	}
	return o.flush(out)
}

// ProcessWatermark implements WatermarkOperator: the watermark goes on
// held back by the longest time a row waits for its matches, so that no
// output row (a padded one emitted at its interval's end) is behind it.
func (o *intervalJoinOp) ProcessWatermark(wm int64, out Emitter) error {
	if err := o.flush(out); err != nil {
		return err
	}
	if wm != MaxWatermark && wm != NoWatermark {
		wm -= o.delay
	}
	return ForwardWatermark(out, wm)
}

// Finish implements Operator. At the end of bounded input the +∞
// watermark has fired every timer.
func (o *intervalJoinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *intervalJoinOp) Close() error { return nil }
