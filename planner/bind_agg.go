package planner

import (
	"slices"
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
	// sets are the grouping sets (positions in keys each keeps); nil for a
	// plain GROUP BY. eCol is the aggregate's $e column (the set's index).
	sets [][]int
	eCol expr.Expr
}

func (a *aggScope) lookup(e parser.Expr) (expr.Expr, bool, error) {
	if c, ok := e.(*parser.Call); ok && c.Over == nil && (strings.EqualFold(c.Name, "GROUPING") || strings.EqualFold(c.Name, "GROUPING_ID")) {
		x, err := a.grouping(c)
		return x, err == nil, err
	}
	if c, ok := e.(*parser.Call); ok && c.Over == nil && strings.EqualFold(c.Name, "GROUP_ID") {
		x, err := a.groupID(c)
		return x, err == nil, err
	}
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

// grouping binds GROUPING(k1, …, kn) and its alias GROUPING_ID (Flink's
// semantics): per grouping set, the bits (k1 first, most significant) of
// the arguments that the set leaves out; BIGINT NOT NULL. It is a constant
// per set: a CASE over the $e column of the aggregate.
func (a *aggScope) grouping(c *parser.Call) (expr.Expr, error) {
	name := strings.ToUpper(c.Name)
	if c.Star || c.Distinct || c.Filter != nil || len(c.Args) == 0 {
		return nil, parser.Errorf(c.Pos, "%s takes GROUP BY expressions: %s(col, …)", name, name)
	}
	pos := make([]int, len(c.Args))
	for i, arg := range c.Args {
		x, err := a.in.bind(arg)
		if err != nil {
			return nil, err
		}
		pos[i] = -1
		d := digest(x)
		for j, k := range a.keys {
			if k == d {
				pos[i] = j
			}
		}
		if pos[i] < 0 {
			return nil, parser.Errorf(arg.Position(), "the argument of %s must be a GROUP BY expression, not %s", name, sqlText(arg))
		}
	}
	value := func(set []int) int64 {
		var v int64
		for _, p := range pos {
			v <<= 1
			if set != nil && !slices.Contains(set, p) {
				v |= 1
			}
		}
		return v
	}
	bigint := types.Type{Kind: types.KindBigInt, NotNull: true}
	lit := func(v int64) expr.Expr { return expr.NewLiteral(types.BigIntValue(v), bigint) }
	if a.sets == nil {
		return lit(value(nil)), nil
	}
	var conds, results []expr.Expr
	for i, set := range a.sets[:len(a.sets)-1] {
		cond, err := expr.NewCompare("=", a.eCol, lit(int64(i)))
		if err != nil {
			return nil, wrap(c.Pos, err)
		}
		conds, results = append(conds, cond), append(results, lit(value(set)))
	}
	last := lit(value(a.sets[len(a.sets)-1]))
	if len(conds) == 0 {
		return last, nil
	}
	x, err := expr.NewCase(conds, results, last)
	if err != nil {
		return nil, wrap(c.Pos, err)
	}
	return x, nil
}

// groupID binds GROUP_ID() (Flink's, from Calcite): per grouping set,
// how many sets before it in the GROUP BY's list group by the same
// columns (0 for the first of each; so GROUPING SETS ((a), (a)) gives
// each group twice, with 0 and 1); BIGINT NOT NULL, a CASE over $e.
func (a *aggScope) groupID(c *parser.Call) (expr.Expr, error) {
	if c.Star || c.Distinct || c.Filter != nil || len(c.Args) > 0 {
		return nil, parser.Errorf(c.Pos, "GROUP_ID takes no arguments: GROUP_ID()")
	}
	bigint := types.Type{Kind: types.KindBigInt, NotNull: true}
	lit := func(v int64) expr.Expr { return expr.NewLiteral(types.BigIntValue(v), bigint) }
	ids := make([]int64, len(a.sets))
	for i, set := range a.sets {
		for _, before := range a.sets[:i] {
			if slices.Equal(before, set) {
				ids[i]++
			}
		}
	}
	var conds, results []expr.Expr
	for i, id := range ids {
		if id == 0 {
			continue
		}
		cond, err := expr.NewCompare("=", a.eCol, lit(int64(i)))
		if err != nil {
			return nil, wrap(c.Pos, err)
		}
		conds, results = append(conds, cond), append(results, lit(id))
	}
	if len(conds) == 0 {
		return lit(0), nil
	}
	x, err := expr.NewCase(conds, results, lit(0))
	if err != nil {
		return nil, wrap(c.Pos, err)
	}
	return x, nil
}

// groupingUnits returns the units of a ROLLUP or CUBE: each column, or
// the columns of a composite column (a, b) (a ROW constructor there),
// which ROLLUP and CUBE keep or leave out together.
func groupingUnits(cols []parser.Expr) [][]parser.Expr {
	units := make([][]parser.Expr, len(cols))
	for i, c := range cols {
		if r, ok := c.(*parser.Constructor); ok && r.Kind == "ROW" {
			units[i] = r.Args
		} else {
			units[i] = []parser.Expr{c}
		}
	}
	return units
}

// groupingSets returns the grouping sets of s's GROUP BY as lists of
// expressions: the cross product of its elements, a plain expression
// being an element of one set of itself; nil when s has no GROUPING SETS,
// ROLLUP or CUBE.
func groupingSets(s *parser.Select) [][]parser.Expr {
	if len(s.Grouping) == 0 {
		return nil
	}
	sets := [][]parser.Expr{append([]parser.Expr{}, s.GroupBy...)}
	for _, g := range s.Grouping {
		var alts [][]parser.Expr
		switch g.Kind {
		case "ROLLUP":
			units := groupingUnits(g.Sets[0].Exprs)
			for n := len(units); n >= 0; n-- {
				alts = append(alts, slices.Concat(units[:n]...))
			}
		case "CUBE":
			units := groupingUnits(g.Sets[0].Exprs)
			for m := (1 << len(units)) - 1; m >= 0; m-- {
				var set []parser.Expr
				for i, u := range units {
					if m&(1<<(len(units)-1-i)) != 0 {
						set = append(set, u...)
					}
				}
				alts = append(alts, set)
			}
		default:
			for _, set := range g.Sets {
				alts = append(alts, set.Exprs)
			}
		}
		var next [][]parser.Expr
		for _, s := range sets {
			for _, alt := range alts {
				next = append(next, append(append([]parser.Expr{}, s...), alt...))
			}
		}
		sets = next
	}
	return sets
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
	// keyOf binds a group key and returns its position in pre.
	keyOf := func(g parser.Expr) (int, error) {
		x, err := in.bind(g)
		if err != nil {
			return 0, err
		}
		d := digest(x)
		for i, k := range as.keys {
			if k == d {
				return i, nil
			}
		}
		preNames = append(preNames, colName(x))
		pre = append(pre, x)
		as.keys = append(as.keys, d)
		return len(pre) - 1, nil
	}
	for _, g := range s.GroupBy {
		if _, err := keyOf(g); err != nil {
			return nil, nil, err
		}
	}
	exprSets := groupingSets(s)
	if len(exprSets) > 4096 {
		return nil, nil, parser.Errorf(s.Grouping[0].Pos, "GROUP BY has %d grouping sets; at most 4096 are supported", len(exprSets))
	}
	for _, set := range exprSets {
		var ks []int
		for _, g := range set {
			k, err := keyOf(g)
			if err != nil {
				return nil, nil, err
			}
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		if ks == nil {
			ks = []int{}
		}
		as.sets = append(as.sets, ks)
	}
	nk := len(pre)
	// With grouping sets the aggregate's keys are the grouping columns and
	// $e, before the aggregates.
	off := nk
	if as.sets != nil {
		off++
	}
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
				call.DistinctArg = ad
				if c.Filter != nil {
					// The argument is CASE WHEN cond THEN x END: x's.
					x, err := in.bind(c.Args[0])
					if err != nil {
						return nil, nil, err
					}
					call.DistinctArg = digest(x)
				}
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
			name = "$f" + strconv.Itoa(off+len(aggs))
		}
		aggs = append(aggs, call)
		aggNames = append(aggNames, name)
		as.aggs[d] = expr.NewColumn(off+len(aggs)-1, t, name)
	}
	var aggIn Node = &Project{Input: input, Exprs: pre, Names: preNames}
	keys := make([]int, nk)
	for i := range keys {
		keys[i] = i
	}
	keyNames := preNames[:nk:nk]
	if as.sets != nil {
		aggIn = &Expand{Input: aggIn, Keys: keys, Sets: as.sets}
		keys = append(keys, len(pre))
		keyNames = append(keyNames, "$e")
		as.eCol = expr.NewColumn(nk, types.Type{Kind: types.KindBigInt, NotNull: true}, "$e")
	}
	inSch := aggIn.Schema()
	for i := range nk {
		as.keyCols = append(as.keyCols, expr.NewColumn(i, inSch.Columns[i].Type.Plain(), preNames[i]))
	}
	var node Node = &Aggregate{Input: aggIn, Keys: keys, Aggs: aggs, Names: append(keyNames, aggNames...)}
	w, ok, err := windowAggregate(node.(*Aggregate), s.Pos)
	if err == nil && !ok {
		w, ok, err = attachedWindowAggregate(node.(*Aggregate))
	}
	if err != nil {
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
