package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/expr"
)

// This file prunes the columns of a join's inputs, as Flink's
// ProjectJoinTransposeRule does: each input of a join under a Calc gets a
// projection of only the columns the join's keys, its residual predicate,
// its time bounds and the Calc read. The join then keeps and ships
// narrower rows (the state holds fewer values a row, the exchanges carry
// fewer), and the projection, chained to the input, usually reaches its
// source scan (pushIntoScans: TableSourceScan(table=[bid,
// project=[...]])). A join under another join gets a Calc from the outer
// join's pruning, so a chain of joins is pruned from the top down.
//
// Every kind of join is pruned: regular (inner, outer, semi, anti),
// interval and window joins (the window_end columns stay) on both sides;
// event-time temporal and lookup joins on their left side (the versioned
// table's primary key is known only once lowered, and a lookup table is
// loaded whole).

// KeyJoinInputPruning is the SET key (Weir's) that turns the pruning of
// join inputs off ('false'; default 'true'). A savepoint of a Weir that
// did not prune restores into a plan planned with 'false' (the operator
// ids are those of the plan without pruning); with pruning on, the
// pruned joins' ids differ and such a restore is refused, naming them.
const KeyJoinInputPruning = "table.optimizer.join-input-pruning"

// pruneJoins prunes the inputs of every join of n, unless
// KeyJoinInputPruning is 'false'.
func (p *Planner) pruneJoins(n Node) (Node, error) {
	if v, ok := p.Config[KeyJoinInputPruning]; ok {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("config '%s' = '%s': expected 'true' or 'false'", KeyJoinInputPruning, v)
		}
		if !on {
			return n, nil
		}
	}
	return fixpoint(n, []rule{pruneJoinInputs, mergeCalcs, dropIdentityCalc})
}

// pruneJoinInputs: Calc(Join(l, r)) → Calc'(Join'(Calc_l(l), Calc_r(r)))
// where Calc_l and Calc_r keep the columns read; Calc' and Join' read the
// narrower rows. The same for the left side of a temporal or lookup join.
func pruneJoinInputs(n Node) (Node, bool, error) {
	c, ok := n.(*Calc)
	if !ok {
		return n, false, nil
	}
	switch j := c.Input.(type) {
	case *Join:
		if !j.Keyed {
			return n, false, nil
		}
		wl := j.Left.Schema().Len()
		pr, ok := pruneColumns(c, j.Left, j.Right, j.Right.Schema().Len(), true, func(need []bool) {
			for _, k := range j.LeftKeys {
				need[k] = true
			}
			for _, k := range j.RightKeys {
				need[wl+k] = true
			}
			if iv := j.Interval; iv != nil {
				need[iv.LeftTime], need[wl+iv.RightTime] = true, true
			}
			if w := j.Window; w != nil {
				need[w.End[0]], need[wl+w.End[1]] = true, true
			}
		}, j.Cond)
		if !ok {
			return n, false, nil
		}
		nj := *j
		nj.Left, nj.Right = pr.left, pr.right
		nj.LeftKeys, nj.RightKeys = pr.leftCols(j.LeftKeys), pr.rightCols(j.RightKeys)
		if iv := j.Interval; iv != nil {
			b := *iv
			b.LeftTime, b.RightTime = pr.newIdx[iv.LeftTime], pr.newIdx[wl+iv.RightTime]-pr.nl
			nj.Interval = &b
		}
		if w := j.Window; w != nil {
			info := *w
			info.End = [2]int{pr.newIdx[w.End[0]], pr.newIdx[wl+w.End[1]] - pr.nl}
			nj.Window = &info
		}
		return pr.rebuild(c, &nj, j.Cond, func(cond expr.Expr) { nj.Cond = cond })
	case *TemporalJoin:
		if !j.Keyed {
			return n, false, nil
		}
		// The right side keeps its columns: its primary key, which the
		// join must find within its keys, is known only once lowered.
		pr, ok := pruneColumns(c, j.Left, j.Right, j.rightSchema().Len(), false, func(need []bool) {
			for _, k := range j.LeftKeys {
				need[k] = true
			}
			need[j.LeftTime] = true
		}, j.Cond)
		if !ok {
			return n, false, nil
		}
		nj := *j
		nj.Left = pr.left
		nj.LeftKeys, nj.RightKeys = pr.leftCols(j.LeftKeys), pr.rightCols(j.RightKeys)
		nj.LeftTime = pr.newIdx[j.LeftTime]
		return pr.rebuild(c, &nj, j.Cond, func(cond expr.Expr) { nj.Cond = cond })
	}
	return n, false, nil
}

// pruned is a join's inputs pruned: the new inputs, and where each column
// of left ++ right went.
type pruned struct {
	left, right Node
	// newIdx maps a column of left ++ right to its place in the pruned
	// left ++ right (-1: pruned); nl is the pruned left's width.
	newIdx []int
	nl, wl int
}

// pruneColumns finds the columns of a join's left ++ right (the right wr
// wide as joined) that Calc c over the join (its output: left ++ right,
// or the left columns alone for a semi or anti join), the join's
// condition and mark read, and puts a Calc of those over each input that
// loses columns (the right one only if pruneRight). ok is false when
// nothing is pruned.
func pruneColumns(c *Calc, l, r Node, wr int, pruneRight bool, mark func(need []bool), cond expr.Expr) (pruned, bool) {
	lsch := l.Schema()
	wl := lsch.Len()
	need := make([]bool, wl+wr)
	read := func(e expr.Expr) {
		if e == nil {
			return
		}
		expr.VisitColumns(e, func(c int) {
			if c < len(need) {
				need[c] = true
			}
		})
	}
	read(c.Cond)
	for _, e := range c.Exprs {
		read(e)
	}
	read(cond)
	mark(need)
	if !pruneRight {
		for i := wl; i < len(need); i++ {
			need[i] = true
		}
	}
	// A row needs a column to exist: a side none of whose columns is
	// read keeps its first.
	if !slices.Contains(need[:wl], true) {
		need[0] = true
	}
	if wr > 0 && !slices.Contains(need[wl:], true) {
		need[wl] = true
	}
	if !slices.Contains(need, false) {
		return pruned{}, false
	}
	pr := pruned{left: l, right: r, newIdx: make([]int, wl+wr), wl: wl}
	k := 0
	for i := range need {
		pr.newIdx[i] = -1
		if need[i] {
			pr.newIdx[i] = k
			k++
		}
		if i == wl-1 {
			pr.nl = k
		}
	}
	side := func(in Node, off, w int) Node {
		if !slices.Contains(need[off:off+w], false) {
			return in
		}
		var exprs []expr.Expr
		var names []string
		for i, col := range in.Schema().Columns {
			if need[off+i] {
				exprs = append(exprs, expr.NewColumn(i, col.Type, col.Name))
				names = append(names, col.Name)
			}
		}
		return &Calc{Input: in, Exprs: exprs, Names: names}
	}
	pr.left = side(l, 0, wl)
	if pruneRight {
		pr.right = side(r, wl, wr)
	}
	return pr, true
}

// leftCols maps columns of the left input; rightCols those of the right.
func (pr pruned) leftCols(cols []int) []int {
	out := make([]int, len(cols))
	for i, k := range cols {
		out[i] = pr.newIdx[k]
	}
	return out
}

func (pr pruned) rightCols(cols []int) []int {
	out := make([]int, len(cols))
	for i, k := range cols {
		out[i] = pr.newIdx[pr.wl+k] - pr.nl
	}
	return out
}

// remap rewrites e over left ++ right onto the pruned columns.
func (pr pruned) remap(e expr.Expr) (expr.Expr, error) {
	if e == nil {
		return nil, nil
	}
	return expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if col, isCol := x.(*expr.Column); isCol {
			return expr.NewColumn(pr.newIdx[col.Index], col.T, col.Name), nil
		}
		return x, nil
	})
}

// rebuild returns Calc c over the pruned join nj, whose condition cond
// setCond sets remapped.
func (pr pruned) rebuild(c *Calc, nj Node, cond expr.Expr, setCond func(expr.Expr)) (Node, bool, error) {
	nc, err := pr.remap(cond)
	if err != nil {
		return nil, false, err
	}
	setCond(nc)
	out := &Calc{Input: nj, Names: c.Names}
	if out.Cond, err = pr.remap(c.Cond); err != nil {
		return nil, false, err
	}
	out.Exprs = make([]expr.Expr, len(c.Exprs))
	for i, e := range c.Exprs {
		if out.Exprs[i], err = pr.remap(e); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}
