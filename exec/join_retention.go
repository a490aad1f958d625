package exec

import (
	"fmt"
	"math"

	"github.com/weir-sql/weir/types"
)

// JoinRetention bounds how long a regular join keeps the rows of one
// input, by the other input's watermark. The planner sets it when the
// join's residual bounds a column of the other input that is
// watermark-monotone (every row that input emits after its watermark W
// has the column > W - lag: a window aggregate's window_end, passed
// through Calcs) from above by a time column of this side: other.m <=
// this.t + b. Such a row can never match again once t + Offset (b plus
// the lag) is below the other input's watermark, so it is dropped
// without output: the join's results do not change.
type JoinRetention struct {
	// TimeCol is the side's column t; a row with NULL there is kept.
	TimeCol int
	// Offset is added to t (milliseconds).
	Offset int64
}

// retention is a side's retention at run time.
type retention struct {
	spec *JoinRetention
	// minDue is at most the smallest t + Offset of the side's rows in
	// memory (math.MinInt64 when unknown: after a restore, or while keys
	// are spilled and may be loaded back): nothing is due before it.
	minDue int64
	// swept is the watermark of the last sweep, and every the advance of
	// the watermark that makes the next one: a sweep reads all the
	// side's rows in memory, so sweeping every Offset/4 or so costs a few
	// reads a row over its life (and watermarks come only every so often).
	swept, every int64
	// dropped counts the rows dropped, for tests.
	dropped int64
}

// InputWatermarkOperator is an operator of several inputs that wants each
// input's watermark apart, not only their minimum: the task calls
// ProcessInputWatermark, before the operator sees the combined watermark,
// whenever the minimum over an input port's channels of the highest
// watermark each has sent advances (an idle channel holds its port's
// watermark at its last one).
type InputWatermarkOperator interface {
	ProcessInputWatermark(port int, wm int64) error
}

var _ InputWatermarkOperator = (*joinOp)(nil)

// openRetention sets up the sides' retention (after the state is open).
func (o *joinOp) openRetention() {
	o.inWM = [2]int64{NoWatermark, NoWatermark}
	for side, r := range o.spec.Retention {
		if r == nil {
			o.retain[side] = nil
			continue
		}
		o.retain[side] = &retention{spec: r, minDue: math.MinInt64, swept: math.MinInt64,
			every: max(r.Offset/4, 1)}
	}
}

// noteDue lowers side's minDue by the due time of row, which it keeps.
func (o *joinOp) noteDue(side int, row []types.Value) {
	r := o.retain[side]
	if r == nil {
		return
	}
	if v := row[r.spec.TimeCol]; !v.IsNull() {
		r.minDue = min(r.minDue, satAdd(v.Int(), r.spec.Offset))
	}
}

// outOfReach reports whether row, arriving on side, can never match a
// future row of the other side (its due time is below the other input's
// watermark already), so that it need not be kept: a late row, or any row
// once the other input ended. Only for NoUniqueKey: a side keeping one
// row per unique key replaces the kept row by an arriving one, which must
// then be kept (and swept) for the old row to go.
func (o *joinOp) outOfReach(side int, row []types.Value) bool {
	r := o.retain[side]
	if r == nil || o.spec.sideSpec(side).Layout != NoUniqueKey {
		return false
	}
	v := row[r.spec.TimeCol]
	return !v.IsNull() && satAdd(v.Int(), r.spec.Offset) < o.inWM[1-side]
}

// sideSpec returns the spec of side 0 (left) or 1 (right).
func (s *JoinSpec) sideSpec(side int) *JoinSide {
	if side == 0 {
		return &s.Left
	}
	return &s.Right
}

// ProcessInputWatermark implements InputWatermarkOperator: input port's
// watermark wm drops the other side's rows it puts out of reach.
func (o *joinOp) ProcessInputWatermark(port int, wm int64) error {
	if port != 0 && port != 1 {
		return fmt.Errorf("join: input port %d", port)
	}
	o.inWM[port] = max(o.inWM[port], wm)
	side := 1 - port
	r := o.retain[side]
	if r == nil || wm <= r.minDue || (wm < r.swept+r.every && wm != MaxWatermark) {
		return nil
	}
	return o.sweep(side, wm)
}

// sweep drops the rows of side whose t + Offset is below wm, from the
// keys in memory (a key spilled to the store, or holding only its blind
// writes since, is swept once it is loaded again), and forgets a key left
// without rows.
func (o *joinOp) sweep(side int, wm int64) error {
	r, s := o.retain[side], o.sides[side]
	s.unprobe() // (a side with retention has none)
	col, off := r.spec.TimeCol, r.spec.Offset
	next := int64(math.MaxInt64)
	for slot := range s.keys.Cap() {
		if !s.keys.Used(slot) {
			continue
		}
		if s.st.IsDelta(slot) {
			// Holds only the rows written since the key spilled (blind
			// writes): its stored rows are not here, and removing the key
			// would delete them. Swept once it is completed.
			next = math.MinInt64
			continue
		}
		l := s.list(slot)
		n0 := l.n()
		for j := n0 - 1; j >= 0; j-- {
			v := l.row(j, s.w)[col]
			if v.IsNull() {
				continue
			}
			if due := satAdd(v.Int(), off); due < wm {
				l.drop(j, s.w, s.shift) // the last row, kept, takes j's place
			} else {
				next = min(next, due)
			}
		}
		n := l.n()
		if n == n0 {
			continue
		}
		r.dropped += int64(n0 - n)
		s.rows -= int64(n0 - n)
		if n == 0 {
			if err := s.removeSlot(slot); err != nil {
				return err
			}
			continue
		}
		s.st.Changed(slot)
	}
	if s.st.Backed() {
		// Keys loaded back from the store bring rows noteDue did not
		// see: sweep again after every quarter of the bound.
		next = math.MinInt64
	}
	r.minDue, r.swept = next, wm
	return nil
}
