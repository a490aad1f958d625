package exec

import (
	"fmt"
	"math"
	"slices"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// calcOp filters rows and evaluates projections (see NewCalc).
type calcOp struct {
	filter expr.Expr
	proj   []expr.Expr
	out    *types.Batch
	// cols is set when every projection is a plain column reference: the
	// input column of each output column, copied without evaluation.
	cols []int
	// identity is set when cols maps every input column to itself.
	identity bool
	// copyCol is, per projection, the input column it copies when it is
	// a plain column reference, else -1 (evaluated): a projection that
	// mixes copies and expressions copies without an Eval call.
	copyCol []int
	// ltzCol is, per projection, the column it reads when it is
	// TO_TIMESTAMP_LTZ of a column in milliseconds (expr.LTZMillisOf),
	// else -1: an integer there is made an instant without an Eval call
	// (a table's rowtime computed from a BIGINT, as W10's, every row).
	ltzCol []int
	// runs are the plain column references of a projection that mixes
	// them with expressions, as runs of adjacent columns copied to
	// adjacent places; evals are the other projections' indexes; runEnd
	// is one past the last input column the runs, dfs, the one-arm CASEs'
	// result columns and their range conditions read (a narrower input is
	// an error).
	runs   []copyRun
	evals  []int
	runEnd int
	// dfs is, per projection, its last DATE_FORMAT of a column
	// (expr.DateFormatOf) and the range of instants with that text (col
	// -1: not one): rows in time order format once per unit (a day, a
	// minute) here, without an Eval call.
	dfs []dfSlot
	// cases is, per projection, its caseSlot (cond -1: not a CASE of one
	// arm over a column or literal; empty: none is), caseConds their
	// conditions (each once) and caseState the conditions' state on the
	// current row (calc_case.go).
	cases     []caseSlot
	caseConds []expr.Expr
	caseState []caseCond
	// caseRanges is, per condition of caseConds, the integer range it
	// tests (intRange; col -1: none).
	caseRanges []intRange
	// srcFilter and srcProj are the expressions as built (filter and proj
	// are this instance's copies, bound and with common subexpressions
	// shared); memo numbers the rows for the shared ones (nil: none).
	srcFilter expr.Expr
	srcProj   []expr.Expr
	opened    bool
	memo      *expr.RowMemo
	// proc is the processing time the bound PROCTIME() calls read, the
	// task clock's, read once per Process call: a clock read per row cost
	// a sixth of q13's CPU.
	proc procClock
}

var _ Operator = (*calcOp)(nil)

// Open implements Operator. Expressions that read the task's watermark
// (CURRENT_WATERMARK) are bound to this subtask's copy of it, and
// PROCTIME() to the time of the batch being processed.
func (c *calcOp) Open(ctx *OpContext) error {
	if !c.opened {
		c.srcFilter, c.srcProj, c.opened = c.filter, c.proj, true
	}
	c.filter, c.proj = c.srcFilter, c.srcProj
	defer c.setCopyCols()
	defer c.shareCommon()
	if ctx != nil && ctx.Watermark != nil {
		if c.filter != nil {
			c.filter, _ = expr.BindWatermark(c.filter, ctx.Watermark)
		}
		var proj []expr.Expr
		for i, p := range c.proj {
			if b, ok := expr.BindWatermark(p, ctx.Watermark); ok {
				if proj == nil {
					proj = slices.Clone(c.proj)
				}
				proj[i] = b
			}
		}
		if proj != nil {
			c.proj = proj
		}
	}
	c.proc.open(clockOf(ctx))
	c.filter, c.proj = c.proc.bind(c.filter), c.proc.bindAll(c.proj)
	c.cols, c.identity, c.copyCol = nil, false, nil
	if len(c.proj) == 0 {
		return nil
	}
	cols := make([]int, len(c.proj))
	identity := true
	for i, p := range c.proj {
		col, ok := p.(*expr.Column)
		if !ok {
			return nil
		}
		cols[i] = col.Index
		identity = identity && col.Index == i
	}
	c.cols, c.identity = cols, identity
	return nil
}

// copyRun is a run of n input columns from src copied to the output
// columns from dst.
type copyRun struct{ dst, src, n int }

// dfSlot is the last result of a projection DATE_FORMAT(col, f): text for
// the TIMESTAMP instants (and TIMESTAMP_LTZ ones when ltz) from from to
// to (excluded); empty (from == to) before the first.
type dfSlot struct {
	col      int // -1: the projection is not such a call
	unit     int64
	ltz      bool
	from, to int64
	text     types.Value
}

// lookup returns the text of arg if it is in the slot's range.
func (d *dfSlot) lookup(arg *types.Value) (types.Value, bool) {
	if k := arg.Kind(); k == types.KindTimestamp || k == types.KindTimestampLTZ && d.ltz {
		if ms := arg.Int(); d.from <= ms && ms < d.to {
			return d.text, true
		}
	}
	return types.Value{}, false
}

// remember keeps text, Eval's result for arg, with arg's range.
func (d *dfSlot) remember(arg *types.Value, text types.Value) {
	k := arg.Kind()
	if k != types.KindTimestamp && (k != types.KindTimestampLTZ || !d.ltz) || text.Kind() != types.KindVarchar {
		return
	}
	ms, u := arg.Int(), d.unit
	if ms < math.MinInt64+u || ms > math.MaxInt64-u {
		return // the range would overflow
	}
	from := ms / u * u
	if from > ms {
		from -= u
	}
	d.from, d.to, d.text = from, from+u, text
}

// setCopyCols fills copyCol, ltzCol, runs and evals from the projections
// (after shareCommon).
func (c *calcOp) setCopyCols() {
	c.copyCol, c.ltzCol = c.copyCol[:0], c.ltzCol[:0]
	c.runs, c.evals, c.runEnd, c.dfs = c.runs[:0], c.evals[:0], 0, c.dfs[:0]
	for k, p := range c.proj {
		idx, ltz := -1, -1
		df := dfSlot{col: -1}
		if col, ok := p.(*expr.Column); ok && col.Index >= 0 {
			idx = col.Index
		} else if col, ok := expr.LTZMillisOf(p); ok {
			ltz = col
		} else if col, unit, ltz, ok := expr.DateFormatOf(p); ok {
			df = dfSlot{col: col, unit: unit, ltz: ltz}
			c.runEnd = max(c.runEnd, col+1)
		}
		c.copyCol = append(c.copyCol, idx)
		c.ltzCol = append(c.ltzCol, ltz)
		c.dfs = append(c.dfs, df)
		if idx < 0 {
			c.evals = append(c.evals, k)
			continue
		}
		if n := len(c.runs); n > 0 && c.runs[n-1].dst+c.runs[n-1].n == k && c.runs[n-1].src+c.runs[n-1].n == idx {
			c.runs[n-1].n++
		} else {
			c.runs = append(c.runs, copyRun{dst: k, src: idx, n: 1})
		}
		c.runEnd = max(c.runEnd, idx+1)
	}
	c.setCases()
}

// shareCommon makes the subexpressions that the filter and projections
// repeat (q21's REGEXP_EXTRACT, a lower(channel) tested in several WHEN
// branches) evaluate once per row.
func (c *calcOp) shareCommon() {
	c.memo = nil
	if c.cols != nil {
		return // plain column copies
	}
	all := append([]expr.Expr{c.filter}, c.proj...)
	shared, memo := expr.ShareCommon(all)
	if memo == nil {
		return
	}
	c.filter, c.memo = shared[0], memo
	if c.proj != nil {
		c.proj = shared[1:]
	}
}

// Process implements Operator.
func (c *calcOp) Process(_ int, b *types.Batch, out Emitter) error {
	if c.filter == nil && (c.proj == nil || (c.identity && len(c.cols) == b.Width)) {
		return out.Emit(b)
	}
	if c.filter == nil && c.cols != nil {
		return c.project(b, out)
	}
	width := b.Width
	if c.proj != nil {
		width = len(c.proj)
	}
	if c.out == nil || c.out.Width != width {
		c.out = types.NewBatch(width, b.Len())
	}
	o := c.out
	o.Reset()
	c.proc.tick()
	// Room for every row up front, each output row then written in place
	// (every column is set below): a growRow call a row cost more than
	// the row's copy. kinds and vals are o's room, j rows in it so far;
	// o is cut to them before it is emitted (after an error, the next
	// call's Reset empties it).
	n := b.Len()
	kinds, vals := slices.Grow(o.Kinds, n)[:n], slices.Grow(o.Vals, n*width)[:n*width]
	if c.proj != nil && c.runEnd > b.Width {
		return fmt.Errorf("calc: input rows of %d columns, its projections read column %d", b.Width, c.runEnd-1)
	}
	j := 0
	cases, caseState := c.cases, c.caseState
	for i := range n {
		row := b.Row(i)
		if c.memo != nil {
			c.memo.Next()
		}
		if c.filter != nil {
			v, err := c.filter.Eval(row)
			if err != nil {
				return fmt.Errorf("filter %s: %w", c.filter, err)
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		kinds[j] = b.Kinds[i]
		dst := vals[j*width : (j+1)*width : (j+1)*width]
		j++
		if c.proj == nil {
			copy(dst, row)
			continue
		}
		// The copies run by run, then the other projections.
		for _, r := range c.runs {
			if r.n == 1 {
				dst[r.dst] = row[r.src]
			} else {
				copy(dst[r.dst:r.dst+r.n], row[r.src:r.src+r.n])
			}
		}
		if len(cases) > 0 {
			clear(caseState)
		}
		for _, k := range c.evals {
			// A CASE of one arm (calc_case.go), written out here: it is
			// most of q16's projections.
			if k < len(cases) {
				if s := &cases[k]; s.cond >= 0 {
					st := caseState[s.cond]
					if st == caseUnknown {
						var err error
						if st, err = c.evalCaseCond(s.cond, row); err != nil {
							return fmt.Errorf("projection %d (%s): %w", k, c.proj[k], err)
						}
					}
					switch {
					case st != caseTrue:
						dst[k] = types.Value{}
					case s.col >= 0:
						dst[k] = row[s.col]
					default:
						dst[k] = s.lit
					}
					continue
				}
			}
			if from := c.ltzCol[k]; from >= 0 && from < len(row) {
				if v := row[from]; v.Kind().IsInteger() {
					dst[k] = types.TimestampLTZValue(v.Int())
					continue
				}
			}
			df := &c.dfs[k]
			if df.col >= 0 {
				if v, ok := df.lookup(&row[df.col]); ok {
					dst[k] = v
					continue
				}
			}
			p := c.proj[k]
			v, err := p.Eval(row)
			if err != nil {
				return fmt.Errorf("projection %d (%s): %w", k, p, err)
			}
			dst[k] = v
			if df.col >= 0 {
				df.remember(&row[df.col], v)
			}
		}
	}
	o.Kinds, o.Vals = kinds[:j], vals[:j*width]
	if j == 0 {
		return nil
	}
	err := out.Emit(o)
	// Cut, not cleared (Reset): the next call writes every value of the
	// rows it emits, and clearing the batch cost 3% of Nexmark q10's CPU.
	// The strings of this batch stay referenced until then (or Close).
	o.Kinds, o.Vals = o.Kinds[:0], o.Vals[:0]
	return err
}

// project copies the columns cols of every row of b.
func (c *calcOp) project(b *types.Batch, out Emitter) error {
	w := len(c.cols)
	if c.out == nil || c.out.Width != w {
		c.out = types.NewBatch(w, b.Len())
	}
	o := c.out
	o.Reset()
	for _, col := range c.cols {
		if col < 0 || col >= b.Width {
			return fmt.Errorf("column %d out of range of input width %d", col, b.Width)
		}
	}
	for i := range b.Len() {
		row := b.Row(i)
		dst := growRow(o, b.Kinds[i])
		for k, col := range c.cols {
			dst[k] = row[col]
		}
	}
	err := out.Emit(o)
	o.Reset()
	return err
}

// Finish implements Operator.
func (c *calcOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (c *calcOp) Close() error { c.out = nil; return nil }

// fuseCalcs folds a Calc that only picks columns (no filter, no
// expression) into the Calc chained right before it, once both are open:
// the first then evaluates just the projections the second keeps, in its
// order, and the second passes batches on untouched. (The planner puts a
// table's computed columns in a Calc of their own above the scan, so a
// query's projection over them is such a pair.) Likewise into an
// outputPicker before it (the updating OVER, which Nexmark q6 follows
// with such a Calc). ops is a task's chain.
func fuseCalcs(ops []Operator) {
	for i := 0; i+1 < len(ops); i++ {
		a, ok1 := ops[i].(*calcOp)
		b, ok2 := ops[i+1].(*calcOp)
		if !ok1 || !ok2 || a.proj == nil || a.cols != nil || b.filter != nil || b.cols == nil || b.memo != nil {
			continue
		}
		proj := make([]expr.Expr, len(b.cols))
		for k, col := range b.cols {
			if col < 0 || col >= len(a.proj) {
				proj = nil
				break
			}
			proj[k] = a.proj[col]
		}
		if proj == nil {
			continue
		}
		a.proj = proj
		a.setCopyCols()
		b.proj, b.cols, b.identity = nil, nil, false
	}
	for i := 0; i+1 < len(ops); i++ {
		p, ok1 := ops[i].(outputPicker)
		c, ok2 := ops[i+1].(*calcOp)
		if !ok1 || !ok2 || c.filter != nil || c.cols == nil || c.memo != nil {
			continue
		}
		if p.pickOutput(c.cols) {
			c.proj, c.cols, c.identity = nil, nil, false
		}
	}
}

// outputPicker is an operator that can emit only some of its output
// columns: fuseCalcs folds a Calc chained after it that only picks
// columns into it.
type outputPicker interface {
	// pickOutput makes the operator emit, of each row it would emit, the
	// columns cols in that order (the rows emitted stay the same); false:
	// it cannot (nothing changed).
	pickOutput(cols []int) bool
}
