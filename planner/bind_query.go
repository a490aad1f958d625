package planner

import (
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// This file binds the query forms around SELECT: WITH, INTERSECT and
// EXCEPT, ORDER BY and LIMIT (VALUES is in phys_values.go).

// cteDef is one common table expression of a WITH clause, with the CTEs
// visible where it is defined (those before it).
type cteDef struct {
	def *parser.CTE
	env []*cteDef
}

// cte returns the CTE name refers to, innermost first, or nil.
func (b *binder) cte(name string) *cteDef {
	for i := len(b.ctes) - 1; i >= 0; i-- {
		if strings.EqualFold(b.ctes[i].def.Name, name) {
			return b.ctes[i]
		}
	}
	return nil
}

// bindWith binds WITH name AS (query), ... body: each reference to a CTE
// binds its query again (as a view's), in the scope of its definition.
func (b *binder) bindWith(w *parser.With) (rel, error) {
	outer := b.ctes
	defer func() { b.ctes = outer }()
	for _, c := range w.CTEs {
		for _, d := range b.ctes[len(outer):] {
			if strings.EqualFold(d.def.Name, c.Name) {
				return rel{}, parser.Errorf(c.Pos, "WITH: '%s' is defined twice", c.Name)
			}
		}
		def := &cteDef{def: c, env: b.ctes[:len(b.ctes):len(b.ctes)]}
		// Bound once here, so that an error shows even when nothing
		// refers to it.
		if _, err := b.bindCTE(def, c.Pos); err != nil {
			return rel{}, err
		}
		b.ctes = append(b.ctes, def)
	}
	return b.bindQuery(w.Body)
}

// bindCTE binds the query of CTE c, referred to at pos.
func (b *binder) bindCTE(c *cteDef, pos parser.Pos) (Node, error) {
	if b.depth >= maxViewDepth {
		return nil, parser.Errorf(pos, "'%s' expands too deeply", c.def.Name)
	}
	b.depth++
	outer := b.ctes
	b.ctes = c.env
	defer func() { b.depth--; b.ctes = outer }()
	inner, err := b.bindQuery(c.def.Query)
	if err != nil {
		return nil, err
	}
	return renameColumns(inner.node, c.def.Columns, c.def.Pos, "'"+c.def.Name+"'")
}

// renameColumns names n's columns names (none: n as it is); what names
// the relation for the error.
func renameColumns(n Node, names []string, pos parser.Pos, what string) (Node, error) {
	if len(names) == 0 {
		return n, nil
	}
	sch := n.Schema()
	if len(names) != sch.Len() {
		return nil, parser.Errorf(pos, "%s has %d columns, but %d column names are given", what, sch.Len(), len(names))
	}
	for i, a := range names {
		for _, o := range names[:i] {
			if strings.EqualFold(a, o) {
				return nil, parser.Errorf(pos, "%s: column name '%s' is given twice", what, a)
			}
		}
	}
	exprs := make([]expr.Expr, sch.Len())
	for i, c := range sch.Columns {
		exprs[i] = expr.NewColumn(i, c.Type, c.Name)
	}
	return &Project{Input: n, Exprs: exprs, Names: names}, nil
}

// bindIntersectExcept binds INTERSECT and EXCEPT (distinct) as Flink's
// planner rewrites them: both inputs tagged and unioned, grouped by all
// columns with a count of each side's rows, filtered on the counts (both
// > 0; EXCEPT: left > 0, right = 0). The result is the distinct rows; it
// updates as the inputs do (a GROUP BY's changelog, filtered). With ALL,
// each row is replicated instead (Flink's replicate_rows) as many times as
// LEAST(left, right) (INTERSECT ALL) or left - right (EXCEPT ALL) says: a
// change of a count retracts the old copies and adds the new ones.
func (b *binder) bindIntersectExcept(n *parser.SetOp) (Node, error) {
	l, err := b.bindQuery(n.Left)
	if err != nil {
		return nil, err
	}
	r, err := b.bindQuery(n.Right)
	if err != nil {
		return nil, err
	}
	ls, rs := l.node.Schema(), r.node.Schema()
	if ls.Len() != rs.Len() {
		return nil, parser.Errorf(n.Pos, "%s: inputs have %d and %d columns", n.Op, ls.Len(), rs.Len())
	}
	cols := append([]types.Column{}, ls.Columns...)
	for i, c := range rs.Columns {
		t, ok := expr.CommonType(cols[i].Type, c.Type)
		if !ok {
			return nil, parser.Errorf(n.Pos, "%s: column %d (%s) has types %s and %s", n.Op, i+1, cols[i].Name, cols[i].Type.Kind, c.Type.Kind)
		}
		cols[i].Type = t.Plain()
	}
	width := len(cols)
	sum, err := aggfunc.Builtins().Lookup("SUM", false)
	if err != nil {
		return nil, err
	}
	count := types.Type{Kind: types.KindBigInt, NotNull: true}
	sumType, err := sum.ResultType(count)
	if err != nil {
		return nil, err
	}
	tag := func(in Node, left bool) (Node, error) {
		conv, err := coerceTo(in, cols)
		if err != nil {
			return nil, parser.Errorf(n.Pos, "%s: %s", n.Op, err.Error())
		}
		sch := conv.Schema()
		exprs := make([]expr.Expr, 0, width+2)
		for i, c := range sch.Columns {
			exprs = append(exprs, expr.NewColumn(i, c.Type, c.Name))
		}
		one, zero := expr.NewLiteral(types.BigIntValue(1), count), expr.NewLiteral(types.BigIntValue(0), count)
		if left {
			exprs = append(exprs, one, zero)
		} else {
			exprs = append(exprs, zero, one)
		}
		return &Project{Input: conv, Exprs: exprs, Names: append(sch.Names(), "$left", "$right")}, nil
	}
	lt, err := tag(l.node, true)
	if err != nil {
		return nil, err
	}
	rt, err := tag(r.node, false)
	if err != nil {
		return nil, err
	}
	keys := make([]int, width)
	for i := range keys {
		keys[i] = i
	}
	agg := &Aggregate{Input: &Union{Inputs: []Node{lt, rt}}, Keys: keys,
		Aggs: []aggfunc.Call{
			{Func: sum, Arg: width, ArgType: count, Type: sumType, Name: "SUM($left)"},
			{Func: sum, Arg: width + 1, ArgType: count, Type: sumType, Name: "SUM($right)"},
		},
		Names: append(ls.Names(), "$left_count", "$right_count")}
	zero := expr.NewLiteral(types.BigIntValue(0), count)
	lc, rc := expr.NewColumn(width, sumType, "$left_count"), expr.NewColumn(width+1, sumType, "$right_count")
	out := agg.Schema()
	if n.All {
		var copies expr.Expr
		if n.Op == "EXCEPT" {
			copies, err = expr.NewArith("-", lc, rc)
		} else {
			copies, err = expr.NewCall("LEAST", []expr.Expr{lc, rc})
		}
		if err != nil {
			return nil, err
		}
		exprs := make([]expr.Expr, width+1)
		for i := range width {
			exprs[i] = expr.NewColumn(i, out.Columns[i].Type, out.Columns[i].Name)
		}
		exprs[width] = copies
		return &Replicate{Input: &Project{Input: agg, Exprs: exprs, Names: append(ls.Names(), "$copies")}}, nil
	}
	hasLeft, err := expr.NewCompare(">", lc, zero)
	if err != nil {
		return nil, err
	}
	rightOp := ">"
	if n.Op == "EXCEPT" {
		rightOp = "="
	}
	right, err := expr.NewCompare(rightOp, rc, zero)
	if err != nil {
		return nil, err
	}
	cond, err := expr.NewAnd(hasLeft, right)
	if err != nil {
		return nil, err
	}
	exprs := make([]expr.Expr, width)
	for i := range exprs {
		exprs[i] = expr.NewColumn(i, out.Columns[i].Type, out.Columns[i].Name)
	}
	return &Project{Input: &Filter{Input: agg, Cond: cond}, Exprs: exprs, Names: ls.Names()}, nil
}

// bindOrderLimit binds ORDER BY and LIMIT after a query into a Sort (see
// Sort for how it runs); LIMIT 0 is no rows at all.
func (b *binder) bindOrderLimit(n *parser.OrderLimit) (Node, error) {
	in, err := b.bindQuery(n.Body)
	if err != nil {
		return nil, err
	}
	node := in.node
	sch := node.Schema()
	// ORDER BY may name what a plain SELECT reads but does not select:
	// such keys become hidden columns of the SELECT, dropped after.
	hidden := map[int]int{} // order item → column
	if sel, ok := n.Body.(*parser.Select); ok && !sel.Distinct {
		outScope := &exprBinder{sc: newScope(rel{node: node}), where: "in ORDER BY", loc: b.loc, cat: b.cat}
		ext := *sel
		ext.Items = slices.Clone(sel.Items)
		for i, o := range n.Order {
			if _, isNum := o.X.(*parser.NumberLit); isNum {
				continue
			}
			if _, err := outScope.bind(o.X); err == nil {
				continue
			}
			hidden[i] = sch.Len() + len(hidden)
			ext.Items = append(ext.Items, &parser.SelectItem{Pos: o.Pos, Expr: o.X, Alias: "$order" + strconv.Itoa(i)})
		}
		if len(hidden) > 0 {
			r, err := b.bindQuery(&ext)
			if err != nil {
				return nil, err
			}
			node = r.node
		}
	}
	final := sch
	if n.Limit == 0 {
		cols := append([]types.Column{}, sch.Columns...)
		for i := range cols {
			cols[i].Type = cols[i].Type.Plain()
		}
		return &Values{Cols: types.Schema{Columns: cols}, Pos: n.Pos}, nil
	}
	var order []exec.SortKey
	var extra []expr.Expr
	sch = node.Schema()
	eb := &exprBinder{sc: newScope(rel{node: node}), where: "in ORDER BY", loc: b.loc, cat: b.cat}
	for i, o := range n.Order {
		col := -1
		if c, ok := hidden[i]; ok {
			col = c
		} else if lit, ok := o.X.(*parser.NumberLit); ok && !lit.IsFloat {
			k, err := strconv.Atoi(lit.Text)
			if err != nil || k < 1 || k > final.Len() {
				return nil, parser.Errorf(o.Pos, "ORDER BY %s: there are %d columns", lit.Text, final.Len())
			}
			col = k - 1
		} else {
			e, err := eb.bind(o.X)
			if err != nil {
				return nil, err
			}
			if c, ok := e.(*expr.Column); ok {
				col = c.Index
			} else {
				col = sch.Len() + len(extra)
				extra = append(extra, e)
			}
		}
		nullsLast := o.Desc
		if o.Nulls != "" {
			nullsLast = o.Nulls == "LAST"
		}
		order = append(order, exec.SortKey{Col: col, Desc: o.Desc, NullsLast: nullsLast})
	}
	nExtra := len(extra)
	order, extra, rowNames, err := expandRowKeys(order, extra, sch, n.Order, "$order")
	if err != nil {
		return nil, err
	}
	if len(extra) > 0 {
		exprs := make([]expr.Expr, 0, sch.Len()+len(extra))
		names := sch.Names()
		for i, c := range sch.Columns {
			exprs = append(exprs, expr.NewColumn(i, c.Type, c.Name))
		}
		for i, e := range extra {
			exprs = append(exprs, e)
			if i < nExtra {
				names = append(names, "$order"+strconv.Itoa(i))
			} else {
				names = append(names, rowNames[i-nExtra])
			}
		}
		node = &Project{Input: node, Exprs: exprs, Names: names}
	}
	pos := n.Pos
	if len(n.Order) > 0 {
		pos = n.Order[0].Pos
	}
	node = &Sort{Input: node, Order: order, Limit: max(n.Limit, 0), Offset: n.Offset, Pos: pos}
	if len(extra) == 0 && len(hidden) == 0 {
		return node, nil
	}
	exprs := make([]expr.Expr, final.Len())
	out := node.Schema()
	for i := range exprs {
		exprs[i] = expr.NewColumn(i, out.Columns[i].Type, out.Columns[i].Name)
	}
	return &Project{Input: node, Exprs: exprs, Names: final.Names()}, nil
}

// expandRowKeys replaces each ORDER BY key of type ROW by keys that order
// ROW values as Flink does: first whether the ROW is NULL (placed by the
// key's NULLS FIRST|LAST), then its fields in turn (nested ROWs'
// fields too) in the key's direction, a NULL field ordering as the
// smallest value (first ascending, last descending). The new keys are
// expressions appended to extra (columns after sch's). ARRAY and MAP keys
// are errors: they have no order.
//
// names are the names of the new extras: the key's name (that of its
// column, or base with its position) with "$null" or the field's path.
func expandRowKeys(order []exec.SortKey, extra []expr.Expr, sch types.Schema, items []*parser.OrderItem, base string) (keys []exec.SortKey, all []expr.Expr, names []string, err error) {
	keyExpr := func(col int) expr.Expr {
		if col < sch.Len() {
			c := sch.Columns[col]
			return expr.NewColumn(col, c.Type, c.Name)
		}
		return extra[col-sch.Len()]
	}
	var out []exec.SortKey
	for i, k := range order {
		x := keyExpr(k.Col)
		t := x.Type()
		switch t.Kind {
		case types.KindArray, types.KindMap:
			return nil, nil, nil, parser.Errorf(items[i].Pos, "ORDER BY cannot order values of type %s (ROWs and scalar types order)", t.Name())
		case types.KindRow:
		default:
			out = append(out, k)
			continue
		}
		if !expr.RowOrderable(t) {
			return nil, nil, nil, parser.Errorf(items[i].Pos, "ORDER BY cannot order values of type %s: a field is an ARRAY or MAP", t.Name())
		}
		name := base + strconv.Itoa(i)
		if c, ok := x.(*expr.Column); ok && k.Col < sch.Len() {
			name = c.Name
		}
		name = strings.TrimPrefix(name, "$")
		flag, err := nullFlag(x)
		if err != nil {
			return nil, nil, nil, err
		}
		out = append(out, exec.SortKey{Col: sch.Len() + len(extra), NullsLast: k.NullsLast})
		extra = append(extra, flag)
		names = append(names, "$"+name+"$null")
		var leaves func(x expr.Expr, path string) error
		leaves = func(x expr.Expr, path string) error {
			for f, fd := range x.Type().Fields() {
				g, err := expr.NewFieldAt(x, f)
				if err != nil {
					return err
				}
				if g.Type().Kind == types.KindRow {
					// A NULL nested ROW orders before (in the key's
					// direction) one of NULL fields.
					f, err := nullFlag(g)
					if err != nil {
						return err
					}
					out = append(out, exec.SortKey{Col: sch.Len() + len(extra), Desc: k.Desc, NullsLast: k.Desc})
					extra = append(extra, f)
					names = append(names, "$"+path+"."+fd.Name+"$null")
					if err := leaves(g, path+"."+fd.Name); err != nil {
						return err
					}
					continue
				}
				out = append(out, exec.SortKey{Col: sch.Len() + len(extra), Desc: k.Desc, NullsLast: k.Desc})
				extra = append(extra, g)
				names = append(names, "$"+path+"."+fd.Name)
			}
			return nil
		}
		if err := leaves(x, name); err != nil {
			return nil, nil, nil, err
		}
	}
	return out, extra, names, nil
}

// nullFlag is NULL when x is, else 0: a sort key that orders only by
// whether x is NULL.
func nullFlag(x expr.Expr) (expr.Expr, error) {
	return expr.NewCase([]expr.Expr{expr.NewIsNull(x, false)},
		[]expr.Expr{expr.NewLiteral(types.NullValue(), types.Type{Kind: types.KindInt})},
		expr.NewLiteral(types.IntValue(0), types.Type{Kind: types.KindInt, NotNull: true}))
}
