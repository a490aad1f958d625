package planner

import (
	"slices"
	"strings"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// Window-attached aggregation, as Flink's: the output of a window
// aggregate keeps its window properties (its window_start, window_end and
// window_time, and renames of them through projections and filters, are
// known to be the bounds of that aggregate's windows). A GROUP BY over such
// an input that includes both its window_start and window_end (under any
// alias) is itself a window aggregate over the same windows: each input row
// is already in exactly one window, so the windows need no assignment.
// It runs as the window aggregate of a TUMBLE of the windows' step (a
// TUMBLE's size, a HOP's slide, a CUMULATE's step, with their offset) over
// window_end - 1 ms: that tumbling window is [window_end - step,
// window_end), whose end is the row's window_end, so it fires when the
// watermark passes window_end, as the upstream's windows do, and the
// input's window_start rides along as a group key (it is a function of
// window_end). Its output is insert-only, its state dropped per window, and
// it is two-phase as the other window aggregates. The rows the upstream
// emits for a window come before the watermark that fired it (a task
// emits what it fired before it forwards the watermark), so they are never
// late here.

// AttachedWindow marks a WindowAggregate as window-attached.
type AttachedWindow struct {
	// Spec and TimeName are the input's windows and their time attribute
	// (the upstream window aggregate's); WindowAggregate.Spec is the TUMBLE
	// that runs it.
	Spec     exec.WindowSpec
	TimeName string
	// StartName and EndName are the input's window_start and window_end
	// columns.
	StartName, EndName string
	// StartKey is the position in WindowAggregate.Keys of the input's
	// window_start (the real start of each row's window).
	StartKey int
}

// windowText renders the aggregate's windows for EXPLAIN: a window-attached
// one as Flink does, e.g. HOP(win_start=[starttime], win_end=[endtime],
// size=[10 s], slide=[2 s]).
func (n *WindowAggregate) windowText() string {
	if a := n.Attached; a != nil {
		return attachedText(a.Spec, a.StartName, a.EndName)
	}
	return windowText(n.Spec, n.TimeName)
}

// attachedText renders windows attached to the columns start and end.
func attachedText(w exec.WindowSpec, start, end string) string {
	parts := append([]string{"win_start=[" + start + "]", "win_end=[" + end + "]"}, windowParams(w)...)
	return w.Kind.String() + "(" + strings.Join(parts, ", ") + ")"
}

// windowed describes the window columns that a node passes on.
type windowed struct {
	// tvf is the window TVF the rows come from (their windows not yet
	// assigned); nil when they come from a window aggregate.
	tvf      *WindowTVF
	spec     exec.WindowSpec
	timeName string
	// ws, we and wt are the node's window_start, window_end and
	// window_time columns (-1 when it does not pass one on).
	ws, we, wt int
}

// text renders w's windows on the columns of sch, for EXPLAIN.
func (w windowed) text(sch types.Schema) string {
	if w.tvf != nil || w.ws < 0 || w.we < 0 {
		return windowText(w.spec, w.timeName)
	}
	return attachedText(w.spec, sch.Columns[w.ws].Name, sch.Columns[w.we].Name)
}

// windowProps finds the window TVF or the event-time TUMBLE, HOP or
// CUMULATE window aggregate below n (through projections and filters) and
// the columns of n that are its window bounds; ok is false when there is
// none.
func windowProps(n Node) (windowed, bool) {
	switch x := n.(type) {
	case *WindowTVF:
		w := x.Input.Schema().Len()
		return windowed{tvf: x, spec: x.Spec, timeName: x.TimeName, ws: w, we: w + 1, wt: w + 2}, true
	case *WindowAggregate:
		if x.Spec.Proctime || x.Spec.Kind == exec.WindowSession {
			return windowed{}, false
		}
		nk := len(x.Keys)
		w := windowed{spec: x.Spec, timeName: x.TimeName, ws: nk, we: nk + 1, wt: nk + 2}
		if a := x.Attached; a != nil {
			w.spec, w.timeName, w.ws = a.Spec, a.TimeName, a.StartKey
		}
		return w, true
	case *Filter:
		return windowProps(x.Input)
	case *Project:
		w, ok := windowProps(x.Input)
		if !ok {
			return windowed{}, false
		}
		find := func(c int) int {
			if c < 0 {
				return -1
			}
			for i, e := range x.Exprs {
				if col, isCol := e.(*expr.Column); isCol && col.Index == c {
					return i
				}
			}
			return -1
		}
		w.ws, w.we, w.wt = find(w.ws), find(w.we), find(w.wt)
		return w, true
	}
	return windowed{}, false
}

// attachedWindowAggregate turns Aggregate(Project(pre) over an input that
// carries a window aggregate's windows) grouped by that input's
// window_start and window_end into a window-attached WindowAggregate, with
// a projection above it that gives the Aggregate's output layout. ok is
// false when agg is not one (it stays a GroupAggregate).
func attachedWindowAggregate(agg *Aggregate) (Node, bool, error) {
	proj, ok := agg.Input.(*Project)
	if !ok {
		return nil, false, nil // grouping sets (an Expand) stay a GroupAggregate
	}
	w, ok := windowProps(proj.Input)
	if !ok || w.tvf != nil || w.ws < 0 || w.we < 0 {
		return nil, false, nil
	}
	// role of each group key: -1 another key, 0..2 window_start/end/time.
	roles := make([]int, len(agg.Keys))
	var seen [3]bool
	for i, k := range agg.Keys {
		roles[i] = -1
		c, ok := proj.Exprs[k].(*expr.Column)
		if !ok {
			continue
		}
		for r, wc := range [3]int{w.ws, w.we, w.wt} {
			if wc >= 0 && c.Index == wc {
				roles[i] = r
				seen[r] = true
			}
		}
	}
	if !seen[0] || !seen[1] {
		return nil, false, nil
	}
	inSch := proj.Input.Schema()
	endCol := inSch.Columns[w.we]
	one := expr.NewLiteral(types.IntervalValue(1), types.Type{Kind: types.KindInterval, NotNull: true})
	wtime, err := expr.NewArith("-", expr.NewColumn(w.we, endCol.Type, endCol.Name), one)
	if err != nil {
		return nil, false, err
	}
	pre := append(slices.Clip(proj.Exprs), wtime)
	names := append(slices.Clip(proj.Names), "$window_time")
	step := w.spec.Slide
	if w.spec.Kind == exec.WindowTumble {
		step = w.spec.Size
	}
	spec := exec.WindowSpec{Kind: exec.WindowTumble, Size: step, Offset: ((w.spec.Offset % step) + step) % step,
		TimeCol: len(proj.Exprs), LTZ: endCol.Type.Kind == types.KindTimestampLTZ}
	att := &AttachedWindow{Spec: w.spec, TimeName: w.timeName, StartName: inSch.Columns[w.ws].Name, EndName: endCol.Name, StartKey: -1}
	var keys []int
	var wnames []string
	for i, k := range agg.Keys {
		switch roles[i] {
		case 1, 2:
			continue
		case 0:
			if att.StartKey >= 0 {
				continue
			}
			att.StartKey = len(keys)
		}
		keys, wnames = append(keys, k), append(wnames, names[k])
	}
	wnames = append(wnames, agg.Names[len(agg.Keys):]...)
	wa := &WindowAggregate{Input: &Project{Input: proj.Input, Exprs: pre, Names: names}, Keys: keys, Spec: spec,
		TimeName: w.timeName, Aggs: agg.Aggs, Names: wnames, Watermark: watermarkOf(proj.Input), Attached: att}
	ws := wa.Schema()
	nk := len(keys)
	outs := make([]expr.Expr, 0, len(agg.Keys)+len(agg.Aggs))
	outNames := make([]string, 0, cap(outs))
	for i, k := range agg.Keys {
		var idx int
		switch roles[i] {
		case 0:
			idx = att.StartKey
		case 1:
			idx = nk + 1
		case 2:
			idx = nk + 2
		default:
			idx = slices.Index(keys, k)
		}
		c := ws.Columns[idx]
		outs, outNames = append(outs, expr.NewColumn(idx, c.Type, c.Name)), append(outNames, agg.Names[i])
	}
	for j := range agg.Aggs {
		c := ws.Columns[nk+3+j]
		outs, outNames = append(outs, expr.NewColumn(nk+3+j, c.Type, c.Name)), append(outNames, agg.Names[len(agg.Keys)+j])
	}
	return &Project{Input: wa, Exprs: outs, Names: outNames}, true, nil
}
