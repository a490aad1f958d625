package exec

import (
	"fmt"
	"math"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// Watermarks are event time in milliseconds since the epoch, as TIMESTAMP(3)
// values are. A watermark w travels in-band with the rows of a channel and
// says that no row following it has an event time below w.
const (
	// NoWatermark is the watermark before any: nothing is known yet.
	NoWatermark int64 = math.MinInt64
	// MaxWatermark (+∞) is the watermark a source emits at the end of its
	// input, so that every pending event-time timer fires.
	MaxWatermark int64 = math.MaxInt64
)

// WatermarkOperator is an Operator that reacts to event time. A task calls
// ProcessWatermark, from the goroutine that calls Process, between two
// batches, each time the operator's input watermark advances; the operator
// emits what the watermark completes (for example fires its event-time
// timers up to wm) and then passes a watermark on with ForwardWatermark,
// usually wm itself. An operator that does not implement it passes each
// watermark on unchanged.
type WatermarkOperator interface {
	Operator
	ProcessWatermark(wm int64, out Emitter) error
}

// WatermarkEmitter is an Emitter that also carries watermarks: each emitter
// a task gives to its operators is one.
type WatermarkEmitter interface {
	Emitter
	// EmitWatermark passes watermark wm on, after every batch emitted before it.
	EmitWatermark(wm int64) error
}

// ForwardWatermark passes watermark wm on to out, if out carries watermarks
// (a test's plain Emitter does not; then it does nothing).
func ForwardWatermark(out Emitter, wm int64) error {
	if w, ok := out.(WatermarkEmitter); ok {
		return w.EmitWatermark(wm)
	}
	return nil
}

// WatermarkSpec is a source's WATERMARK FOR column AS expr.
type WatermarkSpec struct {
	// Column is the index of the rowtime column in the source's rows, or
	// -1 when the rowtime is a computed column (computed from them after
	// the source reads them).
	Column int
	// Expr computes the watermark (a TIMESTAMP or TIMESTAMP_LTZ) over a
	// source row, as the source reads it (computed columns substituted).
	Expr expr.Expr
	// Align, if set, puts the source's subtasks in a watermark alignment
	// group.
	Align *WatermarkAlignment
}

// watermarkGen computes a source subtask's watermark from the rows it
// reads. When the expression reads only the rowtime column (as every
// `ts - INTERVAL ...` does), it is taken as non-decreasing in it: the
// generator keeps only the largest event time seen, one comparison per row,
// and evaluates the expression once per emission. So it does when the
// rowtime is computed and the expression provably never decreases as the
// one integer column it reads grows (`TO_TIMESTAMP_LTZ(n / 100, 3) -
// INTERVAL '1' SECOND`; see nonDecreasingIn): it keeps that column's
// largest value. Otherwise it evaluates the expression on every row and
// keeps the largest result.
type watermarkGen struct {
	col      int
	e        expr.Expr
	onlyCol  bool
	maxTS    int64       // onlyCol: largest non-NULL value of column col seen; NoWatermark if none
	maxVal   types.Value // onlyCol: that value
	checked  bool        // onlyCol over a computed rowtime: column col's kind was checked
	maxWM    int64       // otherwise: largest watermark computed; NoWatermark if none
	row      []types.Value
	lastEval int64 // onlyCol: maxTS of the last evaluation
	lastWM   int64
}

func newWatermarkGen(spec *WatermarkSpec, width int) *watermarkGen {
	g := &watermarkGen{col: spec.Column, e: spec.Expr, maxTS: NoWatermark, maxWM: NoWatermark,
		lastEval: NoWatermark, lastWM: NoWatermark, row: make([]types.Value, width)}
	if spec.Column >= 0 {
		g.onlyCol, g.checked = readsOnly(spec.Expr, spec.Column), true
		return g
	}
	if c, ok := nonDecreasingIn(spec.Expr); ok && c < width {
		g.col, g.onlyCol = c, true
	}
	return g
}

// Monotonicity of an expression in a column (nonDecreasingIn).
const (
	monoNo    = iota // no known order, or reads another column
	monoConst        // a constant: reads no column
	monoUp           // non-decreasing in the column
)

// nonDecreasingIn reports whether e reads exactly one column, and which,
// and never decreases when that column's (integer) value grows, so that
// its largest value over rows is its value at the row with the largest
// column value: the column; a sum of such terms and constants; such a term
// minus a constant; multiplied or divided (integer division truncates, a
// non-decreasing step) by a positive integer constant; TO_TIMESTAMP_LTZ
// of one. NULL in gives NULL out in each, so rows whose column is NULL
// count for neither.
func nonDecreasingIn(e expr.Expr) (int, bool) {
	col := -1
	var mono func(x expr.Expr) int
	mono = func(x expr.Expr) int {
		switch x := x.(type) {
		case *expr.Column:
			if col >= 0 && col != x.Index {
				return monoNo
			}
			col = x.Index
			return monoUp
		case *expr.Literal:
			return monoConst
		case *expr.Arith:
			l, r := mono(x.L), mono(x.R)
			if l == monoNo || r == monoNo {
				return monoNo
			}
			switch x.Op {
			case "+":
				return max(l, r)
			case "-":
				if r == monoConst {
					return l
				}
			case "*", "/":
				if lit, ok := x.R.(*expr.Literal); ok && positiveInt(lit) {
					return l
				}
				if lit, ok := x.L.(*expr.Literal); ok && x.Op == "*" && positiveInt(lit) {
					return r
				}
			}
			return monoNo
		case *expr.TimeFunc:
			if x.Name != "TO_TIMESTAMP_LTZ" || len(x.Args) == 0 {
				return monoNo
			}
			for _, a := range x.Args[1:] {
				if _, ok := a.(*expr.Literal); !ok {
					return monoNo
				}
			}
			return mono(x.Args[0])
		}
		return monoNo
	}
	if mono(e) != monoUp || col < 0 {
		return -1, false
	}
	return col, true
}

// positiveInt reports whether l is an integer constant above zero.
func positiveInt(l *expr.Literal) bool {
	return !l.V.IsNull() && l.V.Kind().IsInteger() && l.V.Int() > 0
}

// readsOnly reports whether e reads column col and no other.
func readsOnly(e expr.Expr, col int) bool {
	reads := false
	var walk func(x expr.Expr) bool
	walk = func(x expr.Expr) bool {
		if c, ok := x.(*expr.Column); ok {
			reads = reads || c.Index == col
			return c.Index == col
		}
		n, ok := x.(expr.Node)
		if !ok {
			return false // an expression the generator cannot see into
		}
		for _, k := range n.Children() {
			if !walk(k) {
				return false
			}
		}
		return true
	}
	return walk(e) && reads
}

// observe takes the event times of the rows of b into account.
func (g *watermarkGen) observe(b *types.Batch) error {
	if g.onlyCol && !g.checked {
		if err := g.checkKind(b); err != nil {
			return err
		}
	}
	if g.onlyCol {
		w, mx, at := b.Width, g.maxTS, -1
		vals := b.Vals
		for i := g.col; i < len(vals); i += w {
			if v := vals[i]; !v.IsNull() && v.Int() > mx {
				mx, at = v.Int(), i
			}
		}
		if at >= 0 {
			g.maxTS, g.maxVal = mx, vals[at]
		}
		return nil
	}
	for i := range b.Len() {
		wm, err := g.eval(b.Row(i))
		if err != nil {
			return err
		}
		if wm > g.maxWM {
			g.maxWM = wm
		}
	}
	return nil
}

// checkKind keeps the largest-value shortcut over a computed rowtime only
// for a column of integers or timestamps (the first non-NULL value of b tells; a column
// holds one kind): for any other, it evaluates the expression per row from
// now on, starting from the watermark of the rows seen so far.
func (g *watermarkGen) checkKind(b *types.Batch) error {
	for i := g.col; i < len(b.Vals); i += b.Width {
		v := b.Vals[i]
		if v.IsNull() {
			continue
		}
		g.checked = true
		switch v.Kind() {
		case types.KindInt, types.KindBigInt, types.KindTimestamp, types.KindTimestampLTZ:
			return nil
		}
		wm, err := g.current()
		if err != nil {
			return err
		}
		g.onlyCol, g.maxWM = false, wm
		return nil
	}
	return nil
}

func (g *watermarkGen) eval(row []types.Value) (int64, error) {
	v, err := g.e.Eval(row)
	if err != nil {
		return 0, fmt.Errorf("watermark expression %s: %w", g.e, err)
	}
	if v.IsNull() {
		return NoWatermark, nil
	}
	return v.Int(), nil
}

// current returns the watermark of the rows observed so far.
func (g *watermarkGen) current() (int64, error) {
	if !g.onlyCol {
		return g.maxWM, nil
	}
	if g.maxTS == NoWatermark {
		return NoWatermark, nil
	}
	if g.maxTS == g.lastEval {
		return g.lastWM, nil
	}
	g.row[g.col] = g.maxVal
	wm, err := g.eval(g.row)
	if err != nil {
		return 0, err
	}
	g.lastEval, g.lastWM = g.maxTS, wm
	return wm, nil
}

// watermarkValve is a task's bookkeeping of the watermarks of its input
// channels, as a plain state machine (events in, decisions out). The task's
// input watermark is the minimum over the channels that are open (not
// ended) and active (not idle); it is forwarded only when it advances. A
// channel goes idle with an idle marker and is active again with the next
// data or watermark on it; it then counts again at once, with the watermark
// it had, so the input watermark waits for it to catch up (it never goes
// back). When the last active channel goes idle, the input watermark
// advances to the largest of the channels' watermarks, since nothing is
// left to wait for, and the task goes idle downstream (as Flink's
// StatusWatermarkValve does).
type watermarkValve struct {
	wm    []int64 // per channel, the highest watermark received
	idle  []bool
	ended []bool
	// held marks channels that ended without watermark +∞: their upstream
	// was stopped, not at the end of its input, so event time did not end
	// there; such a channel holds the input watermark at its last value
	// (windows and timers wait for a restore instead of firing early).
	held    []bool
	nIdle   int   // open channels that are idle
	open    int   // channels not ended
	out     int64 // the input watermark last forwarded
	idleOut bool  // every open channel is idle, and the task told downstream
}

func newWatermarkValve(n int) *watermarkValve {
	v := &watermarkValve{wm: make([]int64, n), idle: make([]bool, n), ended: make([]bool, n), held: make([]bool, n), open: n, out: NoWatermark}
	for i := range v.wm {
		v.wm[i] = NoWatermark
	}
	return v
}

// activate makes an idle channel count again (data or a watermark came on
// it). It reports whether the task was idle downstream and is not any more.
func (v *watermarkValve) activate(ch int) bool {
	if !v.idle[ch] {
		return false
	}
	v.idle[ch] = false
	v.nIdle--
	was := v.idleOut
	v.idleOut = false
	return was
}

// Watermark is the arrival of watermark wm on channel ch. It returns the new
// input watermark and true when it advanced.
func (v *watermarkValve) Watermark(ch int, wm int64) (int64, bool) {
	v.activate(ch)
	if wm > v.wm[ch] {
		v.wm[ch] = wm
	}
	return v.advance()
}

// Idle is an idle marker on channel ch. It returns the new input watermark
// and true when it advanced, and whether every open channel is now idle
// (the task then sends an idle marker downstream, after the watermark).
func (v *watermarkValve) Idle(ch int) (wm int64, advanced, allIdle bool) {
	if v.idle[ch] || v.ended[ch] {
		return v.out, false, false
	}
	v.idle[ch] = true
	v.nIdle++
	return v.settle()
}

// End is the end of input on channel ch: after watermark +∞ it no longer
// holds the input watermark back; without it (a stopped upstream) it
// holds it at the channel's last watermark. The results are those of Idle.
func (v *watermarkValve) End(ch int) (wm int64, advanced, allIdle bool) {
	if v.ended[ch] {
		return v.out, false, false
	}
	v.ended[ch] = true
	v.held[ch] = v.wm[ch] != MaxWatermark && v.wm[ch] != NoWatermark
	v.open--
	if v.idle[ch] {
		v.idle[ch] = false
		v.nIdle--
	}
	return v.settle()
}

// settle recomputes the input watermark after a channel stopped counting.
func (v *watermarkValve) settle() (wm int64, advanced, allIdle bool) {
	if v.open == 0 || v.nIdle < v.open || v.idleOut {
		wm, advanced = v.advance()
		return wm, advanced, false
	}
	// Every open channel is idle: nothing is left to wait for, so the
	// largest watermark goes out, and the task goes idle downstream.
	mx, held := NoWatermark, MaxWatermark
	for c := range v.wm {
		if !v.ended[c] && v.wm[c] > mx {
			mx = v.wm[c]
		}
		if v.held[c] {
			held = min(held, v.wm[c])
		}
	}
	mx = min(mx, held) // a stopped input still holds event time back
	v.idleOut = true
	if mx > v.out {
		v.out = mx
		return mx, true, true
	}
	return v.out, false, true
}

// advance recomputes the minimum over the open, active channels.
func (v *watermarkValve) advance() (int64, bool) {
	mn, counted := MaxWatermark, false
	for c, w := range v.wm {
		if (v.ended[c] && !v.held[c]) || v.idle[c] {
			continue
		}
		counted = true
		if w < mn {
			mn = w
		}
	}
	if counted && mn > v.out {
		v.out = mn
		return mn, true
	}
	return v.out, false
}

// Current returns the input watermark last forwarded.
func (v *watermarkValve) Current() int64 { return v.out }

// FormatWatermark renders a watermark for logs and progress lines: "-" for
// NoWatermark, "+inf" for MaxWatermark, else the timestamp.
func FormatWatermark(wm int64) string {
	switch wm {
	case NoWatermark:
		return "-"
	case MaxWatermark:
		return "+inf"
	}
	return types.TimestampValue(wm).String()
}
