package exec

import (
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// caseSlot is a projection CASE WHEN cond THEN x END (one arm, no ELSE)
// whose x is a column or a literal, as the planner writes an aggregate's
// FILTER (Nexmark q16: nine of them over three conditions). The Calc
// evaluates it without Case.Eval, and a condition that several such
// projections share is evaluated once per row.
type caseSlot struct {
	cond int         // index of the condition in calcOp.caseConds; -1: not such a projection
	col  int         // the column x; -1: the literal lit
	lit  types.Value // x when col is -1
}

// caseSlotOf returns p's caseSlot, with cond unset (-1), and the
// condition; ok is false if p is not such a CASE.
func caseSlotOf(p expr.Expr) (slot caseSlot, cond expr.Expr, ok bool) {
	c, isCase := p.(*expr.Case)
	if !isCase || len(c.Conds) != 1 || c.Else != nil {
		return caseSlot{}, nil, false
	}
	switch r := c.Results[0].(type) {
	case *expr.Column:
		if r.Index < 0 {
			return caseSlot{}, nil, false
		}
		return caseSlot{cond: -1, col: r.Index}, c.Conds[0], true
	case *expr.Literal:
		return caseSlot{cond: -1, col: -1, lit: r.V}, c.Conds[0], true
	}
	return caseSlot{}, nil, false
}

// setCases fills cases, caseConds and caseState for the projections that
// are CASEs of one arm (caseSlotOf); called by setCopyCols for the
// projections it evaluates. A condition occurring in several of them (the
// same expression: after shareCommon, equal conditions are one Shared
// node) gets one entry of caseConds, unless it is volatile: then each
// projection evaluates its own, as Case.Eval would.
func (c *calcOp) setCases() {
	c.cases, c.caseConds = c.cases[:0], c.caseConds[:0]
	found := false
	for k, p := range c.proj {
		slot := caseSlot{cond: -1, col: -1}
		if c.copyCol[k] < 0 && c.ltzCol[k] < 0 && c.dfs[k].col < 0 {
			if s, cond, ok := caseSlotOf(p); ok {
				slot = s
				slot.cond = -1
				if !expr.IsVolatile(cond) {
					for i, e := range c.caseConds {
						if e == cond {
							slot.cond = i
							break
						}
					}
				}
				if slot.cond < 0 {
					slot.cond = len(c.caseConds)
					c.caseConds = append(c.caseConds, cond)
				}
				if slot.col >= 0 {
					c.runEnd = max(c.runEnd, slot.col+1)
				}
				found = true
			}
		}
		c.cases = append(c.cases, slot)
	}
	if !found {
		c.cases = c.cases[:0]
	}
	c.unshareCaseConds()
	c.caseRanges = c.caseRanges[:0]
	for _, e := range c.caseConds {
		r, ok := intRangeOf(e)
		if !ok {
			r = intRange{col: -1}
		} else {
			c.runEnd = max(c.runEnd, r.col+1)
		}
		c.caseRanges = append(c.caseRanges, r)
	}
	c.caseState = make([]caseCond, len(c.caseConds))
}

// unshareCaseConds replaces a condition of caseConds that is a Shared
// node used nowhere else (not in the filter, another projection or
// another condition) by its expression: caseState already evaluates it
// once per row, and the memo's bookkeeping cost more than the comparison.
func (c *calcOp) unshareCaseConds() {
	if len(c.caseConds) == 0 {
		return
	}
	used := map[*expr.Shared]bool{}
	var walk func(e expr.Expr)
	walk = func(e expr.Expr) {
		if s, ok := e.(*expr.Shared); ok {
			if used[s] {
				return
			}
			used[s] = true
			e = s.X
		}
		if n, ok := e.(expr.Node); ok {
			for _, k := range n.Children() {
				walk(k)
			}
		}
	}
	if c.filter != nil {
		walk(c.filter)
	}
	for k, p := range c.proj {
		if len(c.cases) == 0 || c.cases[k].cond < 0 {
			walk(p)
		}
	}
	for _, e := range c.caseConds {
		if s, ok := e.(*expr.Shared); ok {
			walk(s.X) // the Shared nodes inside a condition
		} else {
			walk(e)
		}
	}
	for i, e := range c.caseConds {
		if s, ok := e.(*expr.Shared); ok && !used[s] {
			c.caseConds[i] = s.X
		}
	}
}

// caseCond is a condition's state for the current row.
type caseCond uint8

const (
	caseUnknown caseCond = iota // not evaluated yet on this row
	caseTrue
	caseNotTrue // FALSE or NULL
)

// evalCaseCond evaluates condition i of caseConds on row, at its first
// use on the row (as Case.Eval does, so that an error surfaces at the
// same projection), and keeps its state in caseState.
func (c *calcOp) evalCaseCond(i int, row []types.Value) (caseCond, error) {
	if r := &c.caseRanges[i]; r.col >= 0 {
		if v := &row[r.col]; v.Kind().IsInteger() || v.IsNull() {
			st := caseNotTrue
			if x := v.Int(); !v.IsNull() && r.lo <= x && x <= r.hi {
				st = caseTrue
			}
			c.caseState[i] = st
			return st, nil
		}
	}
	v, err := c.caseConds[i].Eval(row)
	if err != nil {
		return caseUnknown, err
	}
	st := caseNotTrue
	if !v.IsNull() && v.Bool() {
		st = caseTrue
	}
	c.caseState[i] = st
	return st, nil
}

// intRange is a condition TRUE when integer column col is in [lo, hi]
// (empty when lo > hi), NULL when it is NULL, else FALSE: a comparison of
// the column with an integer literal, or an AND of such comparisons of
// one column (q16's price >= 10000 AND price < 1000000).
type intRange struct {
	col    int // -1: the condition is not one
	lo, hi int64
}

// intRangeOf returns e as an intRange, if it is one. It looks through
// Shared nodes (an AND's operands shared with other conditions, as q16's
// price >= 10000): their expressions are pure, the range gives their
// result.
func intRangeOf(e expr.Expr) (intRange, bool) {
	switch x := e.(type) {
	case *expr.Shared:
		return intRangeOf(x.X)
	case *expr.Compare:
		col, lo, hi, ok := x.IntRange()
		return intRange{col: col, lo: lo, hi: hi}, ok
	case *expr.Logic:
		if x.Or {
			return intRange{}, false
		}
		a, ok1 := intRangeOf(x.L)
		b, ok2 := intRangeOf(x.R)
		if !ok1 || !ok2 || a.col != b.col {
			return intRange{}, false
		}
		// Both NULL when the column is; else TRUE when both are.
		return intRange{col: a.col, lo: max(a.lo, b.lo), hi: min(a.hi, b.hi)}, true
	}
	return intRange{}, false
}
