package planner

import (
	"strconv"
	"strings"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// maxViewDepth bounds view expansion, so a cycle of views fails cleanly.
const maxViewDepth = 32

// binder turns AST queries into logical plans, resolving names against the catalog.
type binder struct {
	cat   *Catalog
	depth int
	loc   *time.Location // the session's time zone (table.local-time-zone); nil: UTC
	// ctes are the common table expressions in scope (WITH), innermost last.
	ctes []*cteDef
}

// bindQuery binds a SELECT or a set operation.
func (b *binder) bindQuery(q parser.QueryExpr) (rel, error) {
	switch n := q.(type) {
	case *parser.Select:
		node, err := b.bindSelect(n)
		return rel{node: node}, err
	case *parser.SetOp:
		node, err := b.bindSetOp(n)
		return rel{node: node}, err
	case *parser.Values:
		node, err := b.bindValues(n)
		return rel{node: node}, err
	case *parser.With:
		return b.bindWith(n)
	case *parser.OrderLimit:
		node, err := b.bindOrderLimit(n)
		return rel{node: node}, err
	}
	return rel{}, parser.Errorf(q.Position(), "unsupported query")
}

func (b *binder) bindFrom(r parser.Relation) (rel, error) {
	switch n := r.(type) {
	case *parser.TableRef:
		if n.AsOf != nil {
			return rel{}, parser.Errorf(n.AsOf.Position(), "FOR SYSTEM_TIME AS OF reads the right side of a JOIN (a temporal or lookup join), not a table on its own")
		}
		qual := n.Alias
		if qual == "" {
			qual = n.Name
		}
		if c := b.cte(n.Name); c != nil {
			node, err := b.bindCTE(c, n.Pos)
			return rel{node: node, qual: qual}, err
		}
		if t, ok := b.cat.Table(n.Name); ok {
			s, err := b.cat.scanOf(t, b.loc)
			if err != nil {
				return rel{}, parser.Errorf(n.Pos, "table '%s': %s", n.Name, errMsg(err))
			}
			return rel{node: s, qual: qual}, nil
		}
		if v, ok := b.cat.views[key(n.Name)]; ok {
			if b.depth >= maxViewDepth {
				return rel{}, parser.Errorf(n.Pos, "view '%s' expands too deeply (a cycle of views?)", n.Name)
			}
			b.depth++
			outer := b.ctes
			b.ctes = nil // a view sees no WITH of the query that uses it
			defer func() { b.depth--; b.ctes = outer }()
			inner, err := b.bindQuery(v.def.Query)
			if err != nil {
				return rel{}, parser.Errorf(n.Pos, "in view '%s': %s", v.name, errMsg(err))
			}
			return rel{node: inner.node, qual: qual}, nil
		}
		return rel{}, parser.Errorf(n.Pos, "unknown table '%s' (%s)", n.Name, b.cat.listing())
	case *parser.WindowTVF:
		return b.bindWindowTVF(n)
	case *parser.SubqueryRef:
		inner, err := b.bindQuery(n.Query)
		if err != nil {
			return rel{}, err
		}
		node, err := renameColumns(inner.node, n.Columns, n.Pos, "'"+n.Alias+"'")
		return rel{node: node, qual: n.Alias}, err
	case *parser.Join:
		return b.bindJoin(n)
	}
	return rel{}, parser.Errorf(r.Position(), "unsupported FROM item")
}

// bindJoin binds a join: both inputs, then the ON condition over the
// joined columns (left then right).
func (b *binder) bindJoin(n *parser.Join) (rel, error) {
	if tr := temporalRight(n); tr != nil {
		return b.bindTemporalJoin(n, tr)
	}
	l, err := b.bindFrom(n.Left)
	if err != nil {
		return rel{}, err
	}
	r, err := b.bindFrom(n.Right)
	if err != nil {
		return rel{}, err
	}
	parts := append([]relPart{}, l.relParts()...)
	wl := l.node.Schema().Len()
	for _, p := range r.relParts() {
		for _, q := range parts {
			if p.qual != "" && strings.EqualFold(p.qual, q.qual) {
				return rel{}, parser.Errorf(n.Right.Position(), "'%s' appears twice in FROM: give each an alias (FROM %s AS x JOIN %s AS y ON ...)", p.qual, p.qual, p.qual)
			}
		}
		p.start += wl
		parts = append(parts, p)
	}
	kind := map[parser.JoinKind]JoinKind{parser.InnerJoin: JoinInner, parser.CrossJoin: JoinInner,
		parser.LeftJoin: JoinLeft, parser.RightJoin: JoinRight, parser.FullJoin: JoinFull}[n.Kind]
	j := &Join{Left: l.node, Right: r.node, Kind: kind}
	out := rel{node: j, parts: parts}
	if n.On != nil {
		// ON sees the inputs' time attributes: bounds between the two
		// rowtimes make an interval join, whose output keeps them.
		sc := newScope(out)
		ls, rs := l.node.Schema(), r.node.Schema()
		sc.schema = types.Schema{Columns: append([]types.Column{}, j.Schema().Columns...)}
		for i := range sc.schema.Columns {
			if i < wl {
				sc.schema.Columns[i].Type.Attr = ls.Columns[i].Type.Attr
			} else {
				sc.schema.Columns[i].Type.Attr = rs.Columns[i-wl].Type.Attr
			}
		}
		eb := &exprBinder{sc: sc, where: "in ON", loc: b.loc, cat: b.cat}
		cond, err := eb.bind(n.On)
		if err != nil {
			return rel{}, err
		}
		if err := wantBool(cond, n.On, "ON"); err != nil {
			return rel{}, err
		}
		j.Cond = cond
		rowtime := func(i int) bool { return sc.schema.Columns[i].Type.Attr == types.Rowtime }
		if _, _, ok := timeBounds(conjuncts(cond), wl, rowtime); ok {
			j.Interval = &TimeBounds{} // filled in by extractJoinKeys
		}
	}
	return out, nil
}

func errMsg(err error) string {
	if pe, ok := err.(*parser.Error); ok {
		return pe.Msg
	}
	return err.Error()
}

// selItem is one select-list entry after star expansion.
type selItem struct {
	e     parser.Expr
	alias string
	pos   parser.Pos
}

func (b *binder) expandStars(s *parser.Select, sc *scope) ([]selItem, error) {
	var out []selItem
	for _, it := range s.Items {
		if !it.Star {
			out = append(out, selItem{e: it.Expr, alias: it.Alias, pos: it.Pos})
			continue
		}
		parts := sc.parts
		if it.Table != "" {
			p := sc.part(it.Table)
			if p == nil {
				return nil, parser.Errorf(it.Pos, "unknown table '%s' in '%s.*' (tables in scope: %s)", it.Table, it.Table, sc.quals())
			}
			parts = []relPart{*p}
		}
		for _, p := range parts {
			for _, c := range sc.schema.Columns[p.start : p.start+p.n] {
				out = append(out, selItem{e: &parser.ColumnRef{Pos: it.Pos, Table: p.qual, Name: c.Name}, pos: it.Pos})
			}
		}
	}
	return out, nil
}

func itemName(it selItem, i int) string {
	if it.alias != "" {
		return it.alias
	}
	if c, ok := it.e.(*parser.ColumnRef); ok {
		return c.Name
	}
	if f, ok := it.e.(*parser.FieldAccess); ok {
		return f.Field
	}
	return "EXPR$" + strconv.Itoa(i)
}

func (b *binder) bindSelect(s *parser.Select) (Node, error) {
	var in rel
	if s.From == nil {
		// As Calcite does: FROM a single row of one column, ZERO.
		for _, it := range s.Items {
			if it.Star {
				return nil, parser.Errorf(it.Pos, "SELECT * needs a FROM clause")
			}
		}
		zero := expr.NewLiteral(types.IntValue(0), types.Type{Kind: types.KindInt})
		in = rel{node: &Values{Rows: [][]expr.Expr{{zero}}, Pos: s.Pos,
			Cols: types.Schema{Columns: []types.Column{{Name: "ZERO", Type: zero.Type()}}}}}
	} else {
		var err error
		if in, err = b.bindFrom(s.From); err != nil {
			return nil, err
		}
	}
	gw, ws, err := groupWindow(s)
	if err != nil {
		return nil, err
	}
	if gw != nil {
		if in, err = b.windowOver(in, gw); err != nil {
			return nil, err
		}
		s = ws
	}
	sc := newScope(in)
	node := in.node
	if s.Where != nil {
		// bindWhere makes IN/EXISTS subqueries semi and anti joins.
		if node, sc, err = b.bindWhere(node, sc, s.Where); err != nil {
			return nil, err
		}
	}
	items, err := b.expandStars(s, sc)
	if err != nil {
		return nil, err
	}
	hasAgg := len(s.GroupBy) > 0 || len(s.Grouping) > 0 || s.Having != nil
	var overs []*parser.Call
	for _, it := range items {
		hasAgg = hasAgg || containsAgg(it.e)
		collectOver(it.e, &overs)
	}
	var exprs []expr.Expr
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = itemName(it, i)
	}
	if len(overs) > 0 {
		node, exprs, err = b.bindOver(s, sc, node, items, overs)
	} else if len(s.Windows) > 0 {
		return nil, parser.Errorf(s.Windows[0].Pos, "window '%s' is defined but no OVER uses it", s.Windows[0].Name)
	} else if hasAgg {
		node, exprs, err = b.bindAggregate(s, sc, node, items)
	} else {
		eb := &exprBinder{sc: sc, where: "here", loc: b.loc, cat: b.cat}
		exprs = make([]expr.Expr, len(items))
		for i, it := range items {
			if exprs[i], err = eb.bind(it.e); err != nil {
				return nil, err
			}
		}
	}
	if err != nil {
		return nil, err
	}
	for i, it := range items {
		// An unaliased column keeps the column's own spelling.
		if _, isRef := it.e.(*parser.ColumnRef); isRef && it.alias == "" {
			if c, ok := exprs[i].(*expr.Column); ok && c.Name != "" {
				names[i] = c.Name
			}
		}
	}
	node = &Project{Input: node, Exprs: exprs, Names: names}
	if s.Distinct {
		node = distinct(node)
	}
	return node, nil
}

// distinct groups by all columns, with no aggregates.
func distinct(n Node) Node {
	sch := n.Schema()
	keys := make([]int, sch.Len())
	for i := range keys {
		keys[i] = i
	}
	return &Aggregate{Input: n, Keys: keys, Names: sch.Names()}
}

func wantBool(e expr.Expr, ast parser.Expr, clause string) error {
	if k := e.Type().Kind; k != types.KindBoolean && k != types.KindNull {
		return parser.Errorf(ast.Position(), "%s condition must be BOOLEAN, not %s", clause, k)
	}
	return nil
}

func (b *binder) bindSetOp(n *parser.SetOp) (Node, error) {
	if n.Op == "INTERSECT" || n.Op == "EXCEPT" {
		return b.bindIntersectExcept(n)
	}
	op := "UNION"
	if n.All {
		op = "UNION ALL"
	}
	// The inputs of a chain of UNION ALL (a left-deep tree in the AST) are
	// bound once each and coerced once to the common types: binding the
	// chain level by level would redo the levels below at each one.
	var inputs []Node
	var poss []parser.Pos // where each input's UNION is (the first: n's)
	type arm struct {
		q   parser.QueryExpr
		pos parser.Pos
	}
	stack := []arm{{n.Right, n.Pos}, {n.Left, n.Pos}} // popped from the end
	if n.All {
		stack = []arm{{n, n.Pos}}
	}
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s, ok := a.q.(*parser.SetOp); ok && s.All && n.All {
			stack = append(stack, arm{s.Right, s.Pos}, arm{s.Left, a.pos})
			continue
		}
		r, err := b.bindQuery(a.q)
		if err != nil {
			return nil, err
		}
		inputs, poss = append(inputs, r.node), append(poss, a.pos)
	}
	first := inputs[0].Schema()
	cols := append([]types.Column{}, first.Columns...)
	for k, in := range inputs[1:] {
		sch := in.Schema()
		pos := poss[k+1]
		if sch.Len() != len(cols) {
			return nil, parser.Errorf(pos, "%s: inputs have %d and %d columns", op, len(cols), sch.Len())
		}
		for i, c := range sch.Columns {
			t, ok := expr.CommonType(cols[i].Type, c.Type)
			if !ok {
				return nil, parser.Errorf(pos, "%s: column %d (%s) has types %s and %s", op, i+1, cols[i].Name, cols[i].Type.Kind, c.Type.Kind)
			}
			cols[i].Type = t
		}
	}
	for k, in := range inputs {
		conv, err := coerceTo(in, cols)
		if err != nil {
			return nil, parser.Errorf(poss[k], "%s: %s", op, err.Error())
		}
		inputs[k] = conv
	}
	var node Node = &Union{Inputs: inputs}
	if !n.All {
		node = distinct(node)
	}
	return node, nil
}

// coerceTo projects n to the kinds of cols (widening casts), if needed.
func coerceTo(n Node, cols []types.Column) (Node, error) {
	sch := n.Schema()
	need := false
	exprs := make([]expr.Expr, len(cols))
	names := make([]string, len(cols))
	for i, c := range sch.Columns {
		col := expr.NewColumn(i, c.Type, c.Name)
		x, err := expr.Coerce(col, cols[i].Type)
		if err != nil {
			return nil, err
		}
		need = need || x != expr.Expr(col) || c.Name != cols[i].Name
		exprs[i], names[i] = x, cols[i].Name
	}
	if !need {
		return n, nil
	}
	return &Project{Input: n, Exprs: exprs, Names: names}, nil
}

// astChildren returns the operand expressions of an AST expression.
func astChildren(e parser.Expr) []parser.Expr {
	switch n := e.(type) {
	case *parser.Binary:
		return []parser.Expr{n.L, n.R}
	case *parser.Unary:
		return []parser.Expr{n.X}
	case *parser.IsNull:
		return []parser.Expr{n.X}
	case *parser.In:
		return append([]parser.Expr{n.X}, n.List...)
	case *parser.Between:
		return []parser.Expr{n.X, n.Lo, n.Hi}
	case *parser.Like:
		return []parser.Expr{n.X, n.Pattern}
	case *parser.Case:
		var out []parser.Expr
		if n.Operand != nil {
			out = append(out, n.Operand)
		}
		for _, w := range n.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if n.Else != nil {
			out = append(out, n.Else)
		}
		return out
	case *parser.Cast:
		return []parser.Expr{n.X}
	case *parser.Call:
		if n.Filter != nil {
			return append(n.Args[:len(n.Args):len(n.Args)], n.Filter)
		}
		return n.Args
	}
	return nil
}

func containsAgg(e parser.Expr) bool {
	if _, ok := isAggCall(e); ok {
		return true
	}
	for _, k := range astChildren(e) {
		if containsAgg(k) {
			return true
		}
	}
	return false
}
