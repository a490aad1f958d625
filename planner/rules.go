package planner

import (
	"fmt"

	"github.com/weir-sql/weir/expr"
)

// rule rewrites one node; ok reports whether it changed anything.
type rule func(n Node) (Node, bool, error)

// optimize applies the rewrite rules bottom-up until none applies: filters
// are pushed below projections, then filters and projections become Calcs,
// a Calc above a UNION ALL is copied into each branch (so it chains to the
// branch's source and the union dissolves into several inputs of the next
// exchange or sink), adjacent Calcs merge, and Calcs that change nothing
// are dropped. (Then Planner.plan prunes the joins' inputs: prune.go.)
func optimize(n Node) (Node, error) {
	var err error
	for _, phase := range [][]rule{
		{pushFilterBelowProject, mergeFilters, flattenUnion, filterIntoJoin, pushJoinConds},
		{extractJoinKeys, extractTemporalKeys, windowJoin},
		{filterToCalc, projectToCalc, pushCalcIntoUnion, mergeCalcs, dropIdentityCalc},
		{rankRange, dropIdentityCalc},
	} {
		if n, err = fixpoint(n, phase); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func fixpoint(n Node, rules []rule) (Node, error) {
	for range 100 {
		out, changed, err := applyOnce(n, rules)
		if err != nil {
			return nil, err
		}
		n = out
		if !changed {
			return n, nil
		}
	}
	return n, nil
}

func applyOnce(n Node, rules []rule) (Node, bool, error) {
	changed := false
	kids := n.Children()
	if len(kids) > 0 {
		nk := make([]Node, len(kids))
		for i, k := range kids {
			r, c, err := applyOnce(k, rules)
			if err != nil {
				return nil, false, err
			}
			nk[i], changed = r, changed || c
		}
		if changed {
			n = n.WithChildren(nk)
		}
	}
	for _, r := range rules {
		out, c, err := r(n)
		if err != nil {
			return nil, false, err
		}
		if c {
			n, changed = out, true
		}
	}
	return n, changed, nil
}

// pushFilterBelowProject: Filter(Project(x)) → Project(Filter(x)), with the
// condition rewritten over x (projections are deterministic, so this is
// always valid).
func pushFilterBelowProject(n Node) (Node, bool, error) {
	f, ok := n.(*Filter)
	if !ok {
		return n, false, nil
	}
	p, ok := f.Input.(*Project)
	if !ok {
		return n, false, nil
	}
	cond, err := substituteFold(f.Cond, p.Exprs)
	if err != nil {
		return nil, false, err
	}
	return &Project{Input: &Filter{Input: p.Input, Cond: cond}, Exprs: p.Exprs, Names: p.Names}, true, nil
}

// mergeFilters: Filter(Filter(x)) → Filter(x) with both conditions ANDed.
func mergeFilters(n Node) (Node, bool, error) {
	f, ok := n.(*Filter)
	if !ok {
		return n, false, nil
	}
	g, ok := f.Input.(*Filter)
	if !ok {
		return n, false, nil
	}
	c, err := expr.NewAnd(g.Cond, f.Cond)
	if err != nil {
		return nil, false, err
	}
	return &Filter{Input: g.Input, Cond: c}, true, nil
}

// flattenUnion: Union(Union(a, b), c) → Union(a, b, c).
func flattenUnion(n Node) (Node, bool, error) {
	u, ok := n.(*Union)
	if !ok {
		return n, false, nil
	}
	var ins []Node
	changed := false
	for _, k := range u.Inputs {
		if v, ok := k.(*Union); ok {
			ins = append(ins, v.Inputs...)
			changed = true
			continue
		}
		ins = append(ins, k)
	}
	if !changed {
		return n, false, nil
	}
	return &Union{Inputs: ins}, true, nil
}

func identity(in Node) ([]expr.Expr, []string) {
	sch := in.Schema()
	es := make([]expr.Expr, sch.Len())
	for i, c := range sch.Columns {
		es[i] = expr.NewColumn(i, c.Type, c.Name)
	}
	return es, sch.Names()
}

// filterToCalc: Filter(x) → Calc(x, cond, all columns).
func filterToCalc(n Node) (Node, bool, error) {
	f, ok := n.(*Filter)
	if !ok {
		return n, false, nil
	}
	es, names := identity(f.Input)
	return &Calc{Input: f.Input, Cond: f.Cond, Exprs: es, Names: names}, true, nil
}

// projectToCalc: Project(x) → Calc(x, no condition, projections).
func projectToCalc(n Node) (Node, bool, error) {
	p, ok := n.(*Project)
	if !ok {
		return n, false, nil
	}
	return &Calc{Input: p.Input, Exprs: p.Exprs, Names: p.Names}, true, nil
}

// mergeCalcs: Calc(Calc(x)) → one Calc over x: the upper condition and
// projections are rewritten over x and the conditions ANDed.
func mergeCalcs(n Node) (Node, bool, error) {
	up, ok := n.(*Calc)
	if !ok {
		return n, false, nil
	}
	lo, ok := up.Input.(*Calc)
	if !ok {
		return n, false, nil
	}
	cond := lo.Cond
	if up.Cond != nil {
		c, err := substituteFold(up.Cond, lo.Exprs)
		if err != nil {
			return nil, false, err
		}
		if cond == nil {
			cond = c
		} else if cond, err = expr.NewAnd(cond, c); err != nil {
			return nil, false, err
		} else {
			cond = expr.Fold(cond)
		}
	}
	es := make([]expr.Expr, len(up.Exprs))
	for i, e := range up.Exprs {
		s, err := substituteFold(e, lo.Exprs)
		if err != nil {
			return nil, false, err
		}
		es[i] = s
	}
	return &Calc{Input: lo.Input, Cond: cond, Exprs: es, Names: up.Names}, true, nil
}

// dropIdentityCalc removes a Calc that keeps every row and column as is
// (and drops a condition that is the constant TRUE).
func dropIdentityCalc(n Node) (Node, bool, error) {
	c, ok := n.(*Calc)
	if !ok {
		return n, false, nil
	}
	if lit, ok := c.Cond.(*expr.Literal); ok && !lit.V.IsNull() && lit.V.Bool() {
		return &Calc{Input: c.Input, Exprs: c.Exprs, Names: c.Names}, true, nil
	}
	if c.Cond != nil {
		return n, false, nil
	}
	in := c.Input.Schema()
	if len(c.Exprs) != in.Len() {
		return n, false, nil
	}
	for i, e := range c.Exprs {
		col, ok := e.(*expr.Column)
		if !ok || col.Index != i || c.Names[i] != in.Columns[i].Name {
			return n, false, nil
		}
	}
	return c.Input, true, nil
}

// pushCalcIntoUnion: Calc(Union(a, b)) → Union(Calc(a), Calc(b)).
func pushCalcIntoUnion(n Node) (Node, bool, error) {
	c, ok := n.(*Calc)
	if !ok {
		return n, false, nil
	}
	u, ok := c.Input.(*Union)
	if !ok {
		return n, false, nil
	}
	ins := make([]Node, len(u.Inputs))
	for i, in := range u.Inputs {
		ins[i] = &Calc{Input: in, Cond: c.Cond, Exprs: c.Exprs, Names: c.Names}
	}
	return &Union{Inputs: ins}, true, nil
}

// substituteFold replaces each column $i of e by cols[i], as
// expr.Substitute does, and folds the constant nodes of e. The cols are
// folded already (binding folds every node it builds), so the work is
// linear in the size of e rather than in that of the result: a chain of
// stacked projections (nested subqueries) then merges in linear time.
func substituteFold(e expr.Expr, cols []expr.Expr) (expr.Expr, error) {
	return expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok {
			if c.Index < 0 || c.Index >= len(cols) {
				return nil, fmt.Errorf("column $%d out of range (%d columns)", c.Index, len(cols))
			}
			return cols[c.Index], nil
		}
		return expr.Fold(x), nil
	})
}
