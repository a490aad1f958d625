package exec

import (
	"fmt"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// SemiJoinSpec describes a semi join (the left rows that have a match on
// the right: IN and EXISTS subqueries) or, with Anti, an anti join (the
// left rows that have none: NOT IN and NOT EXISTS). Port 0 is the left
// input, port 1 the right one; the output is the left rows.
type SemiJoinSpec struct {
	Anti        bool
	Left, Right JoinSide
	// Residual is the non-equi part of the condition, over left ++ right
	// (nil: none).
	Residual expr.Expr
}

// NewSemiJoin returns the constructor of a semi or anti join operator, a
// StatefulOperator keyed by the join key (the regular join's joinRows per
// side), as Flink's SemiAntiJoinOperator:
// each left row is kept with the number of right rows that match it, each
// right row with its count (both in the layouts of JoinSide). A left row
// goes out with its own kind when it has a match (semi) or none (anti); a
// right row that gives a left row its first match emits that row (+I for
// a semi join, -D for an anti join), and one that takes its last match
// away does the opposite. Rows with a NULL join key never match: a semi
// join drops such a left row, an anti join passes it on.
func NewSemiJoin(spec SemiJoinSpec) func() Operator {
	spec.Residual = expr.CheapFirst(spec.Residual) // cheap operands of AND/OR first
	return func() Operator { return &semiJoinOp{spec: spec} }
}

// semiJoinOp is the semi or anti join (see NewSemiJoin).
type semiJoinOp struct {
	spec SemiJoinSpec
	// proc is the processing time PROCTIME() in the residual reads.
	proc procClock
	joinState
	wl     int
	out    *types.Batch
	joined []types.Value // left ++ right, for the residual
}

var (
	_ StatefulOperator = (*semiJoinOp)(nil)
	_ expiringOperator = (*semiJoinOp)(nil)
	_ InputEndOperator = (*semiJoinOp)(nil)
)

// Open implements Operator.
func (o *semiJoinOp) Open(ctx *OpContext) error {
	o.wl = len(o.spec.Left.Kinds)
	o.out = types.NewBatch(o.wl, 256)
	o.joined = make([]types.Value, o.wl+len(o.spec.Right.Kinds))
	// The left side counts its matches; the right side keeps counts only.
	name := "SemiJoin"
	if o.spec.Anti {
		name = "AntiJoin"
	}
	if err := o.joinState.open(ctx, name, o.spec.Left, o.spec.Right, [2]bool{true, false}); err != nil {
		return err
	}
	if o.spec.Residual != nil && ctx.Watermark != nil {
		o.spec.Residual, _ = expr.BindWatermark(o.spec.Residual, ctx.Watermark)
	}
	o.proc.open(clockOf(ctx))
	o.spec.Residual = o.proc.bind(o.spec.Residual)
	return nil
}

// matches evaluates the residual on left row l with right row r.
func (o *semiJoinOp) matches(l, r []types.Value) (bool, error) {
	if o.spec.Residual == nil {
		return true, nil
	}
	copy(o.joined[:o.wl], l)
	copy(o.joined[o.wl:], r)
	v, err := o.spec.Residual.Eval(o.joined)
	if err != nil {
		return false, fmt.Errorf("semi join condition %s: %w", o.spec.Residual, err)
	}
	return !v.IsNull() && v.Bool(), nil
}

// emit appends left row n times with kind, emitting full batches.
func (o *semiJoinOp) emit(kind types.RowKind, row []types.Value, n int64, out Emitter) error {
	for range n {
		o.out.Append(kind, row)
		if o.out.Len() >= 1024 {
			if err := o.flush(out); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *semiJoinOp) flush(out Emitter) error {
	if o.out.Len() == 0 {
		return nil
	}
	err := out.Emit(o.out)
	o.out.Reset()
	return err
}

// Process implements Operator: port 0 is the left input, port 1 the right.
func (o *semiJoinOp) Process(input int, b *types.Batch, out Emitter) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("semi join: input port %d", input)
	}
	o.proc.tick()
	left, right := o.sides[0], o.sides[1]
	if input == 0 && right.pt != nil && o.ended[1] {
		return o.processProbe(b, out)
	}
	for i := range b.Len() {
		row, kind := b.Row(i), b.Kinds[i]
		if hasNullKey(row, o.sides[input].spec.Keys) {
			if input == 0 && o.spec.Anti {
				if err := o.emit(kind, row, 1, out); err != nil {
					return err
				}
			}
			continue
		}
		kr := o.keyOf(input, row)
		// The arriving side's rows of the key are only written, and
		// not even looked up once the other input ended (keep).
		keep := !o.ended[1-input]
		var (
			ls, rs   int32
			lok, rok bool
			err      error
		)
		if input == 1 {
			ls, lok, err = left.find(kr)
		} else if keep {
			ls, lok, err = left.findWrite(kr)
		}
		if err != nil {
			return err
		}
		if input == 0 {
			rs, rok, err = right.find(kr)
		} else if keep {
			rs, rok, err = right.findWrite(kr)
		}
		if err != nil {
			return err
		}
		if input == 0 {
			err = o.processLeft(kind, row, keep, ls, lok, rs, rok, out)
		} else {
			err = o.processRight(kind, row, keep, ls, lok, rs, rok, out)
		}
		if err != nil {
			return err
		}
	}
	if err := o.flush(out); err != nil {
		return err
	}
	return o.spillIfOver()
}

// processLeft counts the right rows that match row, keeps or removes it
// (if keep), and passes it on with its kind if it has a match (semi) or
// none (anti).
func (o *semiJoinOp) processLeft(kind types.RowKind, row []types.Value, keep bool, ls int32, lok bool, rs int32, rok bool, out Emitter) error {
	left, right := o.sides[0], o.sides[1]
	var matched int64
	if rok {
		l := right.list(rs)
		for j := range l.n() {
			ok, err := o.matches(row, l.row(j, right.w))
			if err != nil {
				return err
			}
			if ok {
				matched += l.metaAt(j).cnt
			}
		}
	}
	switch {
	case !keep:
	case kind.IsRetraction():
		if err := left.remove(ls, lok, row); err != nil {
			return err
		}
	default:
		left.insert(o.kr, ls, lok, row, matched)
	}
	if (matched > 0) != o.spec.Anti {
		return o.emit(kind, row, 1, out)
	}
	return nil
}

// processRight keeps or removes row (if keep) and updates the match
// counts of the left rows it matches: a left row whose count leaves or
// reaches zero comes or goes.
func (o *semiJoinOp) processRight(kind types.RowKind, row []types.Value, keep bool, ls int32, lok bool, rs int32, rok bool, out Emitter) error {
	left, right := o.sides[0], o.sides[1]
	retract := kind.IsRetraction()
	if retract && keep {
		if err := right.remove(rs, rok, row); err != nil {
			return err
		}
	}
	// appear is the kind of a left row that this change makes come out.
	appear, vanish := types.Insert, types.Delete
	if o.spec.Anti {
		appear, vanish = vanish, appear
	}
	if lok {
		l := left.list(ls)
		changed := false
		for j := range l.n() {
			lr := l.row(j, left.w)
			ok, err := o.matches(lr, row)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if !retract {
				if *l.assocAt(j) == 0 {
					if err := o.emit(appear, lr, l.metaAt(j).cnt, out); err != nil {
						return err
					}
				}
				*l.assocAt(j)++
				l.mark(j, left.shift)
				changed = true
				continue
			}
			switch *l.assocAt(j) {
			case 0:
				continue // its state expired; never below zero
			case 1:
				if err := o.emit(vanish, lr, l.metaAt(j).cnt, out); err != nil {
					return err
				}
			}
			*l.assocAt(j)--
			l.mark(j, left.shift)
			changed = true
		}
		if changed {
			left.st.Changed(ls)
		}
	}
	if !retract && keep {
		right.insert(o.kr, rs, rok, row, 0)
	}
	return nil
}

// EndInput implements InputEndOperator: once input port has ended, the
// other side's rows are dropped (in memory and in the state store) and
// its arriving rows are no longer kept, as the regular join does
// (joinOp.EndInput): a left row's matches can no longer change once the
// right input ended, and a right row can no longer match a new left row
// once the left input ended. The ended side's rows stay, the left rows
// with their match counts. When the right input ended, its rows may get
// a probe table (probeTable) for the left rows' probes; the left rows,
// whose match counts change, get none.
func (o *semiJoinOp) EndInput(port int, out Emitter) error {
	o.proc.tick()
	if first, err := o.endInput(port); !first || err != nil {
		return err
	}
	o.probeAfterEnd(port, false)
	return o.flush(out)
}

// Finish implements Operator: a semi join holds nothing back.
func (o *semiJoinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *semiJoinOp) Close() error { return nil }
