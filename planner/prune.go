package planner

import (
	"slices"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
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
// Window joins are left alone: their inputs' window columns are found by
// the nodes below the join (windowjoin.go) and lowering expects them
// there. Temporal and lookup joins are their own nodes, not pruned yet.

// pruneJoinInputs: Calc(Join(l, r)) → Calc'(Join'(Calc_l(l), Calc_r(r)))
// where Calc_l and Calc_r keep the columns read; Calc' and Join' read the
// narrower rows.
func pruneJoinInputs(n Node) (Node, bool, error) {
	c, ok := n.(*Calc)
	if !ok {
		return n, false, nil
	}
	j, ok := c.Input.(*Join)
	if !ok || !j.Keyed || j.Window != nil {
		return n, false, nil
	}
	lsch, rsch := j.Left.Schema(), j.Right.Schema()
	wl, wr := lsch.Len(), rsch.Len()
	need := make([]bool, wl+wr) // over left ++ right
	read := func(e expr.Expr, off int) {
		if e == nil {
			return
		}
		_, _ = expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
			if col, isCol := x.(*expr.Column); isCol && off+col.Index < len(need) {
				need[off+col.Index] = true
			}
			return x, nil
		})
	}
	// The Calc reads the join's output: left ++ right, or the left
	// columns alone for a semi or anti join.
	read(c.Cond, 0)
	for _, e := range c.Exprs {
		read(e, 0)
	}
	read(j.Cond, 0)
	for _, k := range j.LeftKeys {
		need[k] = true
	}
	for _, k := range j.RightKeys {
		need[wl+k] = true
	}
	if iv := j.Interval; iv != nil {
		need[iv.LeftTime], need[wl+iv.RightTime] = true, true
	}
	// A row needs a column to exist: a side none of whose columns is
	// read keeps its first.
	if !slices.Contains(need[:wl], true) {
		need[0] = true
	}
	if !slices.Contains(need[wl:], true) {
		need[wl] = true
	}
	if !slices.Contains(need, false) {
		return n, false, nil
	}
	// newIdx maps a column of left ++ right to its place in the pruned
	// left ++ right (-1: pruned).
	newIdx := make([]int, wl+wr)
	nl := 0
	for i := range wl {
		newIdx[i] = -1
		if need[i] {
			newIdx[i] = nl
			nl++
		}
	}
	nr := 0
	for i := range wr {
		newIdx[wl+i] = -1
		if need[wl+i] {
			newIdx[wl+i] = nl + nr
			nr++
		}
	}
	side := func(in Node, sch types.Schema, off, w int) Node {
		if !slices.Contains(need[off:off+w], false) {
			return in
		}
		var exprs []expr.Expr
		var names []string
		for i, col := range sch.Columns {
			if need[off+i] {
				exprs = append(exprs, expr.NewColumn(i, col.Type, col.Name))
				names = append(names, col.Name)
			}
		}
		return &Calc{Input: in, Exprs: exprs, Names: names}
	}
	remap := func(e expr.Expr) (expr.Expr, error) {
		if e == nil {
			return nil, nil
		}
		return expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
			if col, isCol := x.(*expr.Column); isCol {
				return expr.NewColumn(newIdx[col.Index], col.T, col.Name), nil
			}
			return x, nil
		})
	}
	nj := *j
	nj.Left, nj.Right = side(j.Left, lsch, 0, wl), side(j.Right, rsch, wl, wr)
	nj.LeftKeys, nj.RightKeys = make([]int, len(j.LeftKeys)), make([]int, len(j.RightKeys))
	for i, k := range j.LeftKeys {
		nj.LeftKeys[i] = newIdx[k]
	}
	for i, k := range j.RightKeys {
		nj.RightKeys[i] = newIdx[wl+k] - nl
	}
	if iv := j.Interval; iv != nil {
		b := *iv
		b.LeftTime, b.RightTime = newIdx[iv.LeftTime], newIdx[wl+iv.RightTime]-nl
		nj.Interval = &b
	}
	var err error
	if nj.Cond, err = remap(j.Cond); err != nil {
		return nil, false, err
	}
	nc := &Calc{Input: &nj, Names: c.Names}
	if nc.Cond, err = remap(c.Cond); err != nil {
		return nil, false, err
	}
	nc.Exprs = make([]expr.Expr, len(c.Exprs))
	for i, e := range c.Exprs {
		if nc.Exprs[i], err = remap(e); err != nil {
			return nil, false, err
		}
	}
	return nc, true, nil
}
