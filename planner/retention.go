package planner

import (
	"math"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// This file gives a regular join a state-retention bound per side where
// exact regular-join semantics allow dropping rows: when the other input
// is insert-only and has a watermark-monotone column m (every row it
// emits after its watermark W has m > W - lag), and the residual bounds m
// from above by a time column t of this side (m <= t + b: `t BETWEEN m -
// b AND …`, `m - b <= t`, …), a row of this side can never match again
// once t + b + lag < W, so the join drops it (exec.JoinRetention). Nexmark
// q7's bids joined with the windows' highest prices are the case in
// point: the right side's dateTime is a window aggregate's window_end.

// monotoneCols returns the watermark-monotone columns of p's output with
// their lag (ms): every row p emits after it emitted watermark W has the
// column > W - lag. An event-time window aggregate (tumbling, hopping or
// cumulative; not a session or window-attached one) fires a window once
// its watermark passes window_end - 1 and drops the later rows of fired
// windows, so its window_end and window_time have lag 0 and its
// window_start the window's size; Calcs pass such columns on, plus or
// minus an interval; exchanges keep them (the receiver's watermark is the
// least of its senders').
func monotoneCols(p physNode) map[int]int64 {
	switch n := p.(type) {
	case *exchangeNode:
		return monotoneCols(n.kids[0])
	case *calcNode:
		in := monotoneCols(n.kids[0])
		if len(in) == 0 {
			return nil
		}
		out := map[int]int64{}
		for i, e := range n.calc.Exprs {
			if t, ok := asTimeTerm(e, func(c int) bool { _, ok := in[c]; return ok }); ok {
				if lag, ok := lagMinus(in[t.col], t.off); ok {
					out[i] = lag
				}
			}
		}
		return out
	case *windowAggNode:
		s := n.agg.Spec
		if s.Proctime || n.agg.Attached != nil || (s.Kind != exec.WindowTumble && s.Kind != exec.WindowHop && s.Kind != exec.WindowCumulate) {
			return nil
		}
		k := len(n.agg.Keys)
		return map[int]int64{k: s.Size, k + 1: 0, k + 2: 0}
	}
	return nil
}

// lagMinus is the lag of a column of lag lag plus off: (c + off) > W -
// (lag - off); ok false on overflow.
func lagMinus(lag, off int64) (int64, bool) {
	if (off < 0 && lag > math.MaxInt64+off) || (off > 0 && lag < math.MinInt64+off) {
		return 0, false
	}
	return lag - off, true
}

// sideRetention is a side's bound: exec's, and its EXPLAIN text.
type sideRetention struct {
	spec exec.JoinRetention
	text string
}

// joinRetention finds the retention bound of each side of a regular join
// x over inputs kids (before their exchanges; modes are what they emit).
func joinRetention(x *Join, kids []physNode) [2]*sideRetention {
	var out [2]*sideRetention
	if x.Cond == nil || x.Interval != nil || x.Window != nil || x.Kind.semi() {
		return out
	}
	lsch, rsch := kids[0].traits().schema, kids[1].traits().schema
	wl := lsch.Len()
	cols := append(append([]types.Column(nil), lsch.Columns...), rsch.Columns...)
	mono := [2]map[int]int64{monotoneCols(kids[0]), monotoneCols(kids[1])}
	sideOf := func(c int) int {
		if c < wl {
			return 0
		}
		return 1
	}
	timeCol := func(c int) bool {
		if c < 0 || c >= len(cols) {
			return false
		}
		k := cols[c].Type.Kind
		return k == types.KindTimestamp || k == types.KindTimestampLTZ
	}
	// bound notes m + om <= t + ot (a column of each side, one of them
	// monotone in its input).
	bound := func(m, t timeTerm) {
		ms, ts := sideOf(m.col), sideOf(t.col)
		if ms == ts || cols[m.col].Type.Kind != cols[t.col].Type.Kind || !kids[ms].traits().mode.IsInsertOnly() {
			return
		}
		lag, ok := mono[ms][m.col-ms*wl]
		if !ok {
			return
		}
		// m <= t + (ot - om); rows after W have m > W - lag: no match
		// once t + (ot - om) + lag < W.
		b, ok := lagMinus(t.off, m.off) // t.off - m.off
		if !ok {
			return
		}
		off, ok := lagMinus(b, -lag) // b + lag
		if !ok {
			return
		}
		if cur := out[ts]; cur != nil && cur.spec.Offset <= off {
			return
		}
		tc := t.col - ts*wl
		text := cols[t.col].Name
		switch {
		case off > 0:
			text += " + " + durText(off)
		case off < 0:
			text += " - " + durText(-off)
		}
		text += " < " + [...]string{"left", "right"}[ms] + " watermark"
		out[ts] = &sideRetention{spec: exec.JoinRetention{TimeCol: tc, Offset: off}, text: text}
	}
	// le notes a <= c (or a < c, which implies it).
	le := func(a, c expr.Expr) {
		ta, ok1 := asTimeTerm(a, timeCol)
		tc, ok2 := asTimeTerm(c, timeCol)
		if ok1 && ok2 {
			bound(ta, tc)
		}
	}
	for _, cj := range conjuncts(x.Cond) {
		switch e := cj.(type) {
		case *expr.Compare:
			switch e.Op {
			case "<", "<=":
				le(e.L, e.R)
			case ">", ">=":
				le(e.R, e.L)
			}
		case *expr.Between:
			if !e.Not {
				le(e.Lo, e.X)
				le(e.X, e.Hi)
			}
		}
	}
	return out
}
