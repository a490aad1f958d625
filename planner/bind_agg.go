package planner

import (
	"strconv"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// aggScope binds expressions above an aggregate: an expression equal to a
// group key, or an aggregate call, becomes a column of the aggregate's output.
type aggScope struct {
	in      *exprBinder // binds in the scope below the aggregate
	keys    []string    // digests of the group keys
	keyCols []expr.Expr
	aggs    map[string]expr.Expr // aggregate digest → output column
}

func (a *aggScope) lookup(e parser.Expr) (expr.Expr, bool, error) {
	if c, ok := isAggCall(e); ok {
		d, _, err := a.aggDigest(c)
		if err != nil {
			return nil, false, err
		}
		col, ok := a.aggs[d]
		if !ok {
			return nil, false, parser.Errorf(c.Pos, "aggregate %s is not allowed here", sqlText(c))
		}
		return col, true, nil
	}
	switch e.(type) {
	case *parser.NumberLit, *parser.StringLit, *parser.BoolLit, *parser.NullLit, *parser.IntervalLit, *parser.TimestampLit:
		return nil, false, nil
	}
	if len(a.keys) == 0 || containsAgg(e) {
		return nil, false, nil
	}
	x, err := a.in.bind(e)
	if err != nil {
		return nil, false, nil // not a group key; bound piecewise by the caller
	}
	d := digest(x)
	for i, k := range a.keys {
		if k == d {
			return a.keyCols[i], true, nil
		}
	}
	return nil, false, nil
}

// aggDigest binds an aggregate call's argument and returns a digest that
// identifies the call, the bound argument (nil for COUNT(*)), and errors
// for a bad call.
func (a *aggScope) aggDigest(c *parser.Call) (string, expr.Expr, error) {
	if c.Filter != nil {
		return a.filteredDigest(c)
	}
	if c.Star {
		if _, err := aggfunc.Builtins().Lookup(c.Name, true); err != nil {
			return "", nil, parser.Errorf(c.Pos, "%s", err.Error())
		}
		return c.Name + "(*)", nil, nil
	}
	sep, err := listAggSep(c)
	if err != nil {
		return "", nil, err
	}
	if len(c.Args) != 1 && sep == "" {
		return "", nil, parser.Errorf(c.Pos, "%s takes exactly one argument, got %d", c.Name, len(c.Args))
	}
	for _, k := range astChildren(c) {
		if containsAgg(k) {
			return "", nil, parser.Errorf(k.Position(), "aggregate function calls cannot be nested")
		}
	}
	x, err := a.in.bind(c.Args[0])
	if err != nil {
		return "", nil, err
	}
	d := c.Name + "("
	if c.Distinct {
		d += "DISTINCT "
	}
	if sep != "" {
		return d + digest(x) + ", " + strconv.Quote(sep) + ")", x, nil
	}
	return d + digest(x) + ")", x, nil
}

// listAggSep returns the separator of LISTAGG(x, 'sep'), "" for other
// calls, or an error for a separator that is not a non-empty string literal.
func listAggSep(c *parser.Call) (string, error) {
	if c.Name != "LISTAGG" || len(c.Args) != 2 {
		return "", nil
	}
	lit, ok := c.Args[1].(*parser.StringLit)
	if !ok || lit.Value == "" {
		return "", parser.Errorf(c.Args[1].Position(), "LISTAGG's separator must be a non-empty string literal, not %s", sqlText(c.Args[1]))
	}
	return lit.Value, nil
}

// aggCallType returns the registry function and the result type of an
// aggregate call over an argument of type t (Flink's result types).
func aggCallType(c *parser.Call, star bool, t types.Type) (*aggfunc.Func, types.Type, error) {
	f, err := aggfunc.Builtins().Lookup(c.Name, star)
	if err != nil {
		return nil, types.Type{}, parser.Errorf(c.Pos, "%s", err.Error())
	}
	if c.Distinct && !f.Distinct {
		return nil, types.Type{}, parser.Errorf(c.Pos, "%s does not take DISTINCT", f.Signature())
	}
	rt, err := f.ResultType(t)
	if err != nil {
		return nil, types.Type{}, parser.Errorf(c.Pos, "%s", err.Error())
	}
	return f, rt, nil
}

// collectAggs appends, in order of appearance, the aggregate calls in e
// (not descending into them).
func collectAggs(e parser.Expr, out *[]*parser.Call) {
	if c, ok := isAggCall(e); ok {
		*out = append(*out, c)
		return
	}
	for _, k := range astChildren(e) {
		collectAggs(k, out)
	}
}

// bindAggregate plans GROUP BY / aggregates: a projection of the group keys
// and aggregate arguments, the Aggregate, HAVING as a Filter above it; it
// returns that plan and the select items bound over the aggregate's output.
func (b *binder) bindAggregate(s *parser.Select, sc *scope, input Node, items []selItem) (Node, []expr.Expr, error) {
	in := &exprBinder{sc: sc, where: "in GROUP BY", loc: b.loc, cat: b.cat}
	as := &aggScope{in: in, aggs: map[string]expr.Expr{}}
	var pre []expr.Expr
	var preNames []string
	colName := func(x expr.Expr) string {
		if c, ok := x.(*expr.Column); ok {
			return c.Name
		}
		return "$f" + strconv.Itoa(len(pre))
	}
	for _, g := range s.GroupBy {
		x, err := in.bind(g)
		if err != nil {
			return nil, nil, err
		}
		d := digest(x)
		dup := false
		for _, k := range as.keys {
			dup = dup || k == d
		}
		if dup {
			continue
		}
		preNames = append(preNames, colName(x))
		pre = append(pre, x)
		as.keys = append(as.keys, d)
	}
	nk := len(pre)
	// Aggregate calls, in order: select items first, then HAVING.
	var calls []*parser.Call
	aliasOf := map[*parser.Call]string{}
	for i, it := range items {
		if c, ok := isAggCall(it.e); ok {
			aliasOf[c] = itemName(it, i)
		}
		collectAggs(it.e, &calls)
	}
	if s.Having != nil {
		collectAggs(s.Having, &calls)
	}
	in.where = "inside another aggregate"
	var aggs []aggfunc.Call
	var aggNames []string
	argIndex := map[string]int{}
	digests := map[string]bool{}
	for _, c := range calls {
		d, arg, err := as.aggDigest(c)
		if err != nil {
			return nil, nil, err
		}
		if digests[d] {
			continue
		}
		digests[d] = true
		call := aggfunc.Call{Arg: -1, Distinct: c.Distinct}
		star := c.Star && c.Filter == nil
		var argType types.Type
		argText := "*"
		if arg != nil {
			argType = arg.Type()
			ad := digest(arg)
			idx, ok := argIndex[ad]
			if !ok {
				idx = len(pre)
				argIndex[ad] = idx
				preNames = append(preNames, colName(arg))
				pre = append(pre, arg)
			}
			call.Arg, call.ArgType = idx, argType
			argText = preNames[idx]
			if c.Distinct {
				argText = "DISTINCT " + argText
			}
		}
		f, t, err := aggCallType(c, star, argType.Plain())
		if err != nil {
			return nil, nil, err
		}
		call.Func, call.Type, call.Name = f, t, c.Name+"("+argText+")"
		if call.Sep, _ = listAggSep(c); call.Sep != "" {
			call.Name = c.Name + "(" + argText + ", " + "'" + strings.ReplaceAll(call.Sep, "'", "''") + "'" + ")"
		}
		name := aliasOf[c]
		if name == "" {
			name = "$f" + strconv.Itoa(nk+len(aggs))
		}
		aggs = append(aggs, call)
		aggNames = append(aggNames, name)
		as.aggs[d] = expr.NewColumn(nk+len(aggs)-1, t, name)
	}
	proj := &Project{Input: input, Exprs: pre, Names: preNames}
	keys := make([]int, nk)
	for i := range keys {
		keys[i] = i
		as.keyCols = append(as.keyCols, expr.NewColumn(i, pre[i].Type().Plain(), preNames[i]))
	}
	var node Node = &Aggregate{Input: proj, Keys: keys, Aggs: aggs, Names: append(preNames[:nk:nk], aggNames...)}
	if w, ok, err := windowAggregate(node.(*Aggregate), s.Pos); err != nil {
		return nil, nil, err
	} else if ok {
		// window_time stays a time attribute (windows cascade).
		node = w
		for i := range as.keyCols {
			as.keyCols[i] = expr.NewColumn(i, w.Schema().Columns[i].Type, preNames[i])
		}
	}
	in.where = "here"
	above := &exprBinder{sc: newScope(rel{node: node}), agg: as, where: "here", loc: b.loc, cat: b.cat}
	if s.Having != nil {
		cond, err := above.bind(s.Having)
		if err != nil {
			return nil, nil, err
		}
		if err := wantBool(cond, s.Having, "HAVING"); err != nil {
			return nil, nil, err
		}
		node = &Filter{Input: node, Cond: cond}
	}
	exprs := make([]expr.Expr, len(items))
	for i, it := range items {
		x, err := above.bind(it.e)
		if err != nil {
			return nil, nil, err
		}
		exprs[i] = x
	}
	return node, exprs, nil
}

// filteredDigest is aggDigest for NAME(...) FILTER (WHERE cond): the
// argument becomes CASE WHEN cond THEN x END (x TRUE for COUNT(*)), which
// every aggregate skips where it is NULL, as the filter skips the row.
func (a *aggScope) filteredDigest(c *parser.Call) (string, expr.Expr, error) {
	if containsAgg(c.Filter) {
		return "", nil, parser.Errorf(c.Filter.Position(), "aggregate function calls cannot be nested")
	}
	if c.Star {
		if _, err := aggfunc.Builtins().Lookup(c.Name, true); err != nil {
			return "", nil, parser.Errorf(c.Pos, "%s", err.Error())
		}
	}
	inner := *c
	inner.Filter = nil
	var x expr.Expr
	d := c.Name + "(*)"
	if !c.Star {
		var err error
		if d, x, err = a.aggDigest(&inner); err != nil {
			return "", nil, err
		}
	} else {
		x = expr.NewLiteral(types.BoolValue(true), types.Type{Kind: types.KindBoolean, NotNull: true})
	}
	cond, err := a.in.bind(c.Filter)
	if err != nil {
		return "", nil, err
	}
	if err := wantBool(cond, c.Filter, "FILTER"); err != nil {
		return "", nil, err
	}
	cs, err := expr.NewCase([]expr.Expr{cond}, []expr.Expr{x}, nil)
	if err != nil {
		return "", nil, wrap(c.Filter.Position(), err)
	}
	return d + " FILTER (" + digest(cond) + ")", cs, nil
}
