package planner

import (
	"strings"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
)

// This file binds IN and EXISTS subqueries in WHERE as semi and anti
// joins, as Flink does (its SubQueryRemoveRule): each conjunct of WHERE
// that is x [NOT] IN (SELECT y ...) or [NOT] EXISTS (SELECT ...) becomes a
// Join of kind JoinSemi or JoinAnti of the query's FROM with the
// subquery's relation; the other conjuncts stay a Filter below them.
//
// A subquery of a plain SELECT (no GROUP BY, HAVING, aggregate or OVER)
// may be correlated: its WHERE sees the outer query's columns, and the
// join's condition is that WHERE (with x = y for IN), so equalities
// between the two, EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND ...), are
// the join keys. Any other subquery is bound on its own (uncorrelated).
//
// x NOT IN (SELECT y ...) is never TRUE when some y is NULL, and is NULL
// (so FALSE in WHERE) for a NULL x unless the subquery is empty: when x or
// y is nullable the anti join's condition is x = y OR (x = y) IS NULL,
// which has no equi-key, so such a join runs on one subtask (as in Flink).

// subqueryConjunct is a conjunct of WHERE that is a subquery predicate.
type subqueryConjunct struct {
	pos   parser.Pos
	x     parser.Expr // the IN operand; nil for EXISTS
	query parser.QueryExpr
	not   bool
}

// asSubqueryConjunct reads e as [NOT] x [NOT] IN (query) or [NOT]
// EXISTS (query).
func asSubqueryConjunct(e parser.Expr) (subqueryConjunct, bool) {
	not := false
	if u, ok := e.(*parser.Unary); ok && u.Op == "NOT" {
		not, e = true, u.X
	}
	switch n := e.(type) {
	case *parser.In:
		if n.Query != nil {
			return subqueryConjunct{pos: n.Pos, x: n.X, query: n.Query, not: not != n.Not}, true
		}
	case *parser.Exists:
		return subqueryConjunct{pos: n.Pos, query: n.Query, not: not}, true
	}
	return subqueryConjunct{}, false
}

// astConjuncts splits e at its top-level ANDs.
func astConjuncts(e parser.Expr) []parser.Expr {
	if bin, ok := e.(*parser.Binary); ok && bin.Op == "AND" {
		return append(astConjuncts(bin.L), astConjuncts(bin.R)...)
	}
	return []parser.Expr{e}
}

// bindWhere binds a WHERE clause over node (in scope sc): the plain
// conjuncts as a Filter, then a semi or anti join per subquery conjunct.
// It returns the new input and its scope.
func (b *binder) bindWhere(node Node, sc *scope, where parser.Expr) (Node, *scope, error) {
	var plain []parser.Expr
	var subs []subqueryConjunct
	for _, c := range astConjuncts(where) {
		if sq, ok := asSubqueryConjunct(c); ok {
			subs = append(subs, sq)
		} else {
			plain = append(plain, c)
		}
	}
	if len(plain) > 0 {
		cond := plain[0]
		for _, c := range plain[1:] {
			cond = &parser.Binary{Pos: c.Position(), Op: "AND", L: cond, R: c}
		}
		eb := &exprBinder{sc: sc, where: "in WHERE", loc: b.loc, cat: b.cat}
		bound, err := eb.bind(cond)
		if err != nil {
			return nil, nil, err
		}
		if err := wantBool(bound, where, "WHERE"); err != nil {
			return nil, nil, err
		}
		node = &Filter{Input: node, Cond: bound}
	}
	if len(subs) == 0 {
		return node, sc, nil
	}
	for _, sq := range subs {
		j, err := b.bindSubquery(node, sc, sq)
		if err != nil {
			return nil, nil, err
		}
		node = j
	}
	// The semi joins pass the left columns on, as plain timestamps.
	return node, &scope{rel: sc.rel, parts: sc.parts, schema: node.Schema()}, nil
}

// bindSubquery makes the semi or anti join of left (in scope sc) for one
// subquery conjunct.
func (b *binder) bindSubquery(left Node, sc *scope, sq subqueryConjunct) (Node, error) {
	wl := left.Schema().Len()
	kind := JoinSemi
	if sq.not {
		kind = JoinAnti
	}
	var x expr.Expr
	if sq.x != nil {
		var err error
		eb := &exprBinder{sc: sc, where: "in WHERE", loc: b.loc, cat: b.cat}
		if x, err = eb.bind(sq.x); err != nil {
			return nil, err
		}
	}
	var right Node
	var conds []expr.Expr
	var y expr.Expr // the IN subquery's column, over left ++ right
	if sel, ok := sq.query.(*parser.Select); ok && correlatable(sel, sq.x != nil) {
		r, err := b.bindFrom(sel.From)
		if err != nil {
			return nil, err
		}
		right = r.node
		inner := newScope(r)
		inner.outer, inner.off = sc, wl
		eb := &exprBinder{sc: inner, where: "in WHERE", loc: b.loc, cat: b.cat}
		if sel.Where != nil {
			w, err := eb.bind(sel.Where)
			if err != nil {
				return nil, err
			}
			if err := wantBool(w, sel.Where, "WHERE"); err != nil {
				return nil, err
			}
			conds = append(conds, w)
		}
		if sq.x != nil {
			eb.where = "here"
			if y, err = eb.bind(sel.Items[0].Expr); err != nil {
				return nil, err
			}
		}
	} else {
		r, err := b.bindQuery(sq.query)
		if pe, ok := err.(*parser.Error); ok && strings.HasPrefix(pe.Msg, "unknown ") {
			return nil, parser.Errorf(pe.Pos, "%s (a subquery with GROUP BY, HAVING, aggregates, OVER or UNION cannot use the outer query's columns yet: only a plain SELECT ... FROM ... WHERE ... can)", pe.Msg)
		}
		if err != nil {
			return nil, err
		}
		right = r.node
		if sq.x != nil {
			sch := right.Schema()
			if sch.Len() != 1 {
				return nil, parser.Errorf(sq.query.Position(), "the subquery of IN must return one column, this one returns %d", sch.Len())
			}
			y = expr.NewColumn(wl, sch.Columns[0].Type, sch.Columns[0].Name)
		}
	}
	if sq.x != nil {
		eq, err := expr.NewCompare("=", x, y)
		if err != nil {
			return nil, parser.Errorf(sq.pos, "IN (SELECT ...): %s", errMsg(err))
		}
		if kind == JoinAnti && (!x.Type().NotNull || !y.Type().NotNull) {
			// NOT IN: a NULL on either side makes x = y NULL, not FALSE.
			if eq, err = expr.NewOr(eq, expr.NewIsNull(eq, false)); err != nil {
				return nil, err
			}
		}
		conds = append([]expr.Expr{eq}, conds...)
	}
	cond, err := andAll(conds)
	if err != nil {
		return nil, err
	}
	return &Join{Left: left, Right: right, Kind: kind, Cond: cond}, nil
}

// correlatable reports whether sel can be bound as a correlated subquery:
// a plain SELECT ... FROM ... [WHERE ...] (for IN, of one expression).
func correlatable(sel *parser.Select, in bool) bool {
	if sel.From == nil || len(sel.GroupBy) > 0 || len(sel.Grouping) > 0 || sel.Having != nil || len(sel.Windows) > 0 {
		return false
	}
	for _, it := range sel.Items {
		if it.Star && in {
			return false
		}
		if !it.Star && containsAgg(it.Expr) {
			return false
		}
		if c, ok := it.Expr.(*parser.Call); ok && c.Over != nil {
			return false
		}
	}
	return !in || len(sel.Items) == 1
}
