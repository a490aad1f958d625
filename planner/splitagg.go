package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// KeyDistinctAggSplit is the SET key (Flink's) that turns on the split
// distinct aggregation ('true'; default 'false'): a GroupAggregate over
// insert-only input with COUNT(DISTINCT) or SUM(DISTINCT) calls runs as
// an inner aggregate grouped also by a hash bucket of each distinct
// argument, and an outer one that merges the buckets (lowerSplit).
const KeyDistinctAggSplit = "table.optimizer.distinct-agg.split.enabled"

// KeyDistinctAggBuckets is the SET key (Flink's) of the number of buckets
// the split distinct aggregation divides each distinct set into (default
// 1024).
const KeyDistinctAggBuckets = "table.optimizer.distinct-agg.split.bucket-num"

// defaultDistinctAggBuckets is Flink's default bucket number.
const defaultDistinctAggBuckets = 1024

// splitBuckets returns the bucket number of the split distinct
// aggregation, 0 when KeyDistinctAggSplit is not 'true'.
func (b *physBuilder) splitBuckets() (int, error) {
	if b.p == nil {
		return 0, nil
	}
	v, ok := b.p.Config[KeyDistinctAggSplit]
	if !ok {
		return 0, nil
	}
	on, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("config '%s' = '%s': expected 'true' or 'false'", KeyDistinctAggSplit, v)
	}
	if !on {
		return 0, nil
	}
	buckets := defaultDistinctAggBuckets
	if v, ok := b.p.Config[KeyDistinctAggBuckets]; ok {
		buckets, err = strconv.Atoi(strings.TrimSpace(v))
		if err != nil || buckets < 1 {
			return 0, fmt.Errorf("config '%s' = '%s': want a positive integer", KeyDistinctAggBuckets, v)
		}
	}
	return buckets, nil
}

// splittable reports whether the split distinct aggregation can take the
// calls: at least one COUNT or SUM DISTINCT, and only calls whose per-
// bucket results the outer aggregate can merge (COUNT, SUM, MIN, MAX,
// BOOL_AND, BOOL_OR; not AVG, the variances, FIRST_VALUE, LAST_VALUE or
// LISTAGG). A SUM of DECIMAL is not split either: a bucket's sum can pass
// 38 digits (NULL) where the group's does not, or the other way round, so
// the outer SUM of the buckets' results would show a wrong value; unsplit,
// the one exact sum decides (README, DECIMAL SUM and AVG at overflow).
func splittable(calls []aggfunc.Call) bool {
	split := false
	for _, c := range calls {
		switch c.Func.Kind {
		case aggfunc.Sum:
			if c.ArgType.Kind == types.KindDecimal {
				return false
			}
			split = split || c.Distinct
		case aggfunc.Count:
			split = split || c.Distinct
		case aggfunc.CountStar, aggfunc.Min, aggfunc.Max, aggfunc.BoolAnd, aggfunc.BoolOr:
		default:
			return false
		}
	}
	return split
}

// lowerSplit plans x, over the insert-only input in, as the split
// distinct aggregation (Flink's SplitAggregateRule). A family is the
// DISTINCT calls (COUNT, SUM) whose argument is one value x, or x under
// a FILTER. The plan is:
//
//   - the input's Calc, widened with MOD(HASH_CODE(x), buckets) per family
//     and copies of the columns two families read;
//   - with several families, an Expand that copies each row once per
//     family, keeping on copy i the bucket and the arguments of family i
//     (and on copy 0 those of the calls without DISTINCT) and setting the
//     others NULL;
//   - an inner GroupAggregate grouped by the keys and the buckets, which
//     computes each call per bucket: a value of x is in one bucket, so the
//     buckets' distinct sets are disjoint, and a hot key's work spreads
//     over the subtasks;
//   - an outer GroupAggregate grouped by the keys, which merges the
//     buckets' results over the inner's changelog (COUNT's by SUM, SUM by
//     SUM, MAX by MAX, …) into x's schema, changelog mode and key.
func (x *Aggregate) lowerSplit(b *physBuilder, in physNode, buckets int) (physNode, error) {
	// The widened Calc: the input's own when it is one, else a new one.
	var base Node = x.Input
	baseKids := []physNode{in}
	var cond expr.Expr
	inSch := x.Input.Schema()
	colExpr := func(i int) expr.Expr { return expr.NewColumn(i, inSch.Columns[i].Type, inSch.Columns[i].Name) }
	if c, ok := in.(*calcNode); ok {
		base, baseKids, cond = c.calc.Input, c.Children(), c.calc.Cond
		colExpr = func(i int) expr.Expr { return c.calc.Exprs[i] }
	}
	exprs := make([]expr.Expr, inSch.Len())
	names := inSch.Names()
	for i := range exprs {
		exprs[i] = colExpr(i)
	}
	// Families, in the order of their first call.
	family := map[string]int{}
	var members [][]int
	copyOf := make([]int, len(x.Aggs))
	args := make([]int, len(x.Aggs))
	for i, c := range x.Aggs {
		args[i] = c.Arg
		if !c.Distinct || (c.Func.Kind != aggfunc.Count && c.Func.Kind != aggfunc.Sum) {
			continue
		}
		key := c.DistinctArg
		if key == "" {
			key = "$" + strconv.Itoa(c.Arg)
		}
		f, ok := family[key]
		if !ok {
			f = len(members)
			family[key] = f
			members = append(members, nil)
		}
		copyOf[i] = f
		members[f] = append(members[f], c.Arg)
	}
	nf := len(members)
	bucketCols := make([]int, nf)
	for f, m := range members {
		v, err := familyValue(m, colExpr)
		if err != nil {
			return nil, err
		}
		hb, err := expr.NewHashBucket(v, buckets)
		if err != nil {
			return nil, err
		}
		bucketCols[f] = len(exprs)
		exprs = append(exprs, hb)
		names = append(names, "$bucket"+strconv.Itoa(f))
	}
	if nf > 1 {
		// Each column is kept by one copy (the keys by all): a column that
		// a second copy reads gets a copy of its own for it.
		owner := map[int]int{}
		for _, k := range x.Keys {
			owner[k] = -1
		}
		dups := map[[2]int]int{}
		for i, c := range x.Aggs {
			if c.Arg < 0 {
				continue
			}
			cp := copyOf[i]
			o, taken := owner[c.Arg]
			switch {
			case !taken:
				owner[c.Arg] = cp
			case o != cp:
				d, ok := dups[[2]int{cp, c.Arg}]
				if !ok {
					d = len(exprs)
					dups[[2]int{cp, c.Arg}] = d
					exprs = append(exprs, colExpr(c.Arg))
					names = append(names, names[c.Arg]+"$"+strconv.Itoa(cp))
				}
				args[i] = d
			}
		}
	}
	var inL Node = &Calc{Input: base, Cond: cond, Exprs: exprs, Names: names}
	in, err := inL.(*Calc).lower(b, baseKids)
	if err != nil {
		return nil, err
	}
	countFn, err := aggfunc.Builtins().Lookup("COUNT", false)
	if err != nil {
		return nil, err
	}
	sumFn, err := aggfunc.Builtins().Lookup("SUM", false)
	if err != nil {
		return nil, err
	}
	if nf > 1 {
		// COUNT(*) counts the rows of copy 0: those with its bucket.
		for i, c := range x.Aggs {
			if c.Func.Kind == aggfunc.CountStar {
				args[i] = bucketCols[0]
			}
		}
		var vary []int
		pos := map[int]int{}
		sets := make([][]int, nf)
		keep := func(cp, col int) {
			p, ok := pos[col]
			if !ok {
				p = len(vary)
				pos[col] = p
				vary = append(vary, col)
			}
			if !slices.Contains(sets[cp], p) {
				sets[cp] = append(sets[cp], p)
			}
		}
		for f, bc := range bucketCols {
			keep(f, bc)
		}
		for i := range x.Aggs {
			if args[i] >= 0 {
				keep(copyOf[i], args[i])
			}
		}
		for _, s := range sets {
			slices.Sort(s)
		}
		e := &Expand{Input: inL, Keys: vary, Sets: sets}
		if in, err = e.lower(b, []physNode{in}); err != nil {
			return nil, err
		}
		inL = e
	}
	sch := inL.Schema()
	nk := len(x.Keys)
	innerKeys := append(slices.Clone(x.Keys), bucketCols...)
	innerNames := slices.Clone(x.Names[:nk])
	for _, bc := range bucketCols {
		innerNames = append(innerNames, sch.Columns[bc].Name)
	}
	outerKeys := make([]int, nk)
	for i := range outerKeys {
		outerKeys[i] = i
	}
	inner := make([]aggfunc.Call, len(x.Aggs))
	outer := make([]aggfunc.Call, len(x.Aggs))
	for i, c := range x.Aggs {
		ic := c
		if ic.Arg = args[i]; ic.Arg >= 0 {
			ic.ArgType = sch.Columns[ic.Arg].Type
		}
		if c.Func.Kind == aggfunc.CountStar && nf > 1 {
			ic.Func, ic.Name = countFn, "COUNT("+sch.Columns[ic.Arg].Name+")"
		}
		if c.Func.Kind == aggfunc.Min || c.Func.Kind == aggfunc.Max {
			// MIN and MAX DISTINCT are MIN and MAX.
			ic.Distinct, ic.DistinctArg = false, ""
		}
		// The inner's result columns take the outer's names.
		col, name := nk+nf+i, x.Names[nk+i]
		innerNames = append(innerNames, name)
		inner[i] = ic
		oc := aggfunc.Call{Func: c.Func, Arg: col, ArgType: c.Type, Type: c.Type}
		if k := c.Func.Kind; k == aggfunc.Count || k == aggfunc.CountStar {
			// A sum of counts: never NULL, as every group has a bucket.
			oc.Func = sumFn
		}
		oc.Name = oc.Func.Name + "(" + name + ")"
		outer[i] = oc
	}
	innerAgg := &Aggregate{Input: inL, Keys: innerKeys, Aggs: inner, Names: innerNames, partial: true}
	innerPhys, err := innerAgg.lower(b, []physNode{in})
	if err != nil {
		return nil, err
	}
	outerAgg := &Aggregate{Input: innerAgg, Keys: outerKeys, Aggs: outer, Names: x.Names, final: true}
	return outerAgg.lower(b, []physNode{innerPhys})
}

// familyValue returns the value x of a family of DISTINCT calls whose
// arguments are the expressions cols(args[j]) (each x, or CASE WHEN cond
// THEN x END): x when the arguments agree on it; else COALESCE of the
// arguments, which is x wherever one of them is not NULL (and where all
// are, the row counts for no call of the family). Any value equal to each
// argument where that is not NULL makes a right bucket.
func familyValue(args []int, cols func(int) expr.Expr) (expr.Expr, error) {
	var x expr.Expr
	agree := true
	var uniq []expr.Expr
	seen := map[int]bool{}
	for _, a := range args {
		e := cols(a)
		if !seen[a] {
			seen[a] = true
			uniq = append(uniq, e)
		}
		v := e
		if c, ok := e.(*expr.Case); ok && len(c.Results) == 1 && c.Else == nil {
			v = c.Results[0]
		}
		if x == nil {
			x = v
		} else if digest(x) != digest(v) {
			agree = false
		}
	}
	if agree {
		return x, nil
	}
	if len(uniq) == 1 {
		return uniq[0], nil
	}
	return expr.NewCoalesce(uniq)
}
