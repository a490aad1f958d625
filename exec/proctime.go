package exec

import (
	"time"

	"github.com/weir-sql/weir/expr"
)

// procClock gives the PROCTIME() calls of an operator's expressions (a
// join's residual condition, a lookup table's computed columns) the task's
// processing time, as Calc does: bind points them at ms
// (expr.BindProctime), and the operator calls tick once per batch or
// timer (the lookup join: set, with the time it read for the batch or
// the load), so that the rows of a batch read one time, never a clock per
// row. It must not be copied after bind.
type procClock struct {
	ms    int64
	clock func() time.Time
	bound bool // an expression reads ms
}

// open sets the clock (the task's: clockOf(ctx)).
func (p *procClock) open(clock func() time.Time) {
	p.clock, p.bound = clock, false
}

// bind returns e with its PROCTIME() calls reading p; nil stays nil.
func (p *procClock) bind(e expr.Expr) expr.Expr {
	if e == nil {
		return nil
	}
	b, ok := expr.BindProctime(e, &p.ms)
	p.bound = p.bound || ok
	return b
}

// bindAll binds each of es, in a new slice if any has a PROCTIME() call
// (es itself may be shared by the operator's subtasks).
func (p *procClock) bindAll(es []expr.Expr) []expr.Expr {
	var out []expr.Expr
	for i, e := range es {
		b, ok := expr.BindProctime(e, &p.ms)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]expr.Expr(nil), es...)
		}
		out[i], p.bound = b, true
	}
	if out == nil {
		return es
	}
	return out
}

// bindWatermark returns e with its CURRENT_WATERMARK calls reading the
// task's watermark (ctx.Watermark; none in tests: they stay NULL); nil
// stays nil.
func bindWatermark(ctx *OpContext, e expr.Expr) expr.Expr {
	if e == nil || ctx == nil || ctx.Watermark == nil {
		return e
	}
	b, _ := expr.BindWatermark(e, ctx.Watermark)
	return b
}

// tick reads the clock, if a bound expression reads it.
func (p *procClock) tick() {
	if p.bound {
		p.ms = p.clock().UnixMilli()
	}
}

// set makes now (read from the clock by the operator) the time.
func (p *procClock) set(now time.Time) { p.ms = now.UnixMilli() }
