package planner

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// Rank numbers its input's rows per partition in ORDER BY order with
// ROW_NUMBER, RANK or DENSE_RANK (a ranking call f() OVER (PARTITION BY …
// ORDER BY …)) and keeps the rows ranked Start to End: a Top-N. Binding
// makes it with End 0 (no range) and the rank as its last column; the
// rankRange rule takes the range from a filter on the rank above it
// (rn <= N, rn < N, rn = N, rn BETWEEN a AND b) and drops the rank
// column when nothing above reads it (OutputRank false).
type Rank struct {
	Input      Node
	Func       exec.RankFunc
	Partition  []int
	Order      []exec.SortKey
	Start, End int64
	OutputRank bool
	RankName   string
	Pos        parser.Pos // the ranking call, for errors
}

var _ Node = (*Rank)(nil)

// Children returns the input.
func (n *Rank) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Rank) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the input's columns, then the rank (BIGINT NOT NULL) when output.
func (n *Rank) Schema() types.Schema {
	in := n.Input.Schema()
	if !n.OutputRank {
		return in
	}
	cols := append(append([]types.Column{}, in.Columns...), types.Column{Name: n.RankName, Type: types.Type{Kind: types.KindBigInt, NotNull: true}})
	return types.Schema{Columns: cols}
}

// String renders the node for EXPLAIN.
func (n *Rank) String() string {
	return "LogicalRank(rankType=[" + n.Func.String() + "], rankRange=[" + n.rangeText() + "], partitionBy=[" + n.partitionText() +
		"], orderBy=[" + n.orderText() + "], select=[" + fields(n.Schema()) + "])"
}

func (n *Rank) rangeText() string {
	if n.End == 0 {
		return "rankStart=1"
	}
	return "rankStart=" + strconv.FormatInt(n.Start, 10) + ", rankEnd=" + strconv.FormatInt(n.End, 10)
}

func (n *Rank) partitionText() string {
	in := n.Input.Schema()
	names := make([]string, len(n.Partition))
	for i, c := range n.Partition {
		names[i] = in.Columns[c].Name
	}
	return strings.Join(names, ", ")
}

// orderText renders "v DESC, w ASC" (with NULLS FIRST/LAST where not
// the default: NULLS FIRST for ASC, NULLS LAST for DESC, as in Flink).
func (n *Rank) orderText() string {
	in := n.Input.Schema()
	parts := make([]string, len(n.Order))
	for i, s := range n.Order {
		p := in.Columns[s.Col].Name
		if s.Desc {
			p += " DESC"
			if !s.NullsLast {
				p += " NULLS FIRST"
			}
		} else {
			p += " ASC"
			if s.NullsLast {
				p += " NULLS LAST"
			}
		}
		parts[i] = p
	}
	return strings.Join(parts, ", ")
}

// rankFuncs are the ranking functions by name.
var rankFuncs = map[string]exec.RankFunc{"ROW_NUMBER": exec.RowNumber, "RANK": exec.Rank, "DENSE_RANK": exec.DenseRank}

// collectOver appends the calls with an OVER in e, in order of appearance.
func collectOver(e parser.Expr, out *[]*parser.Call) {
	if c, ok := e.(*parser.Call); ok && c.Over != nil {
		*out = append(*out, c)
		return
	}
	for _, k := range astChildren(e) {
		collectOver(k, out)
	}
}

// windowOf resolves a call's OVER: its window, or the named window of
// the SELECT's WINDOW clause.
func windowOf(s *parser.Select, c *parser.Call) (*parser.WindowSpec, error) {
	w := c.Over
	if w.Name == "" {
		return w, nil
	}
	for _, nw := range s.Windows {
		if strings.EqualFold(nw.Name, w.Name) {
			return nw.Spec, nil
		}
	}
	return nil, parser.Errorf(w.Pos, "unknown window '%s' (define it with WINDOW %s AS (...) after the query's FROM/WHERE/GROUP BY/HAVING)", w.Name, w.Name)
}

// bindOver plans a SELECT whose items call window functions: the input
// (with any computed partition or order expressions appended) under a
// Rank; it returns that plan and the items bound over it, the ranking
// call being the rank column.
func (b *binder) bindOver(s *parser.Select, sc *scope, input Node, items []selItem, calls []*parser.Call) (Node, []expr.Expr, error) {
	if len(s.GroupBy) > 0 || len(s.Grouping) > 0 || s.Having != nil {
		return nil, nil, parser.Errorf(calls[0].Pos, "%s OVER in a SELECT with GROUP BY is not supported yet: aggregate in a subquery and rank its result", calls[0].Name)
	}
	aggs := 0
	for _, c := range calls {
		_, isRank := rankFuncs[c.Name]
		if !isRank && !aggfunc.Builtins().Has(c.Name) {
			return nil, nil, parser.Errorf(c.Pos, "%s is not a window function (window functions: ROW_NUMBER, RANK, DENSE_RANK, and the aggregates)", c.Name)
		}
		if !isRank {
			aggs++
		}
	}
	if aggs == len(calls) {
		return b.bindOverAggs(s, sc, input, items, calls)
	}
	if aggs > 0 {
		return nil, nil, parser.Errorf(calls[0].Pos, "ranking functions and OVER aggregates in one SELECT are not supported yet: compute one in a subquery")
	}
	var first *parser.Call
	for _, c := range calls {
		if first != nil && sqlText(first) != sqlText(c) {
			return nil, nil, parser.Errorf(c.Pos, "only one ranking function per SELECT is supported (%s and %s): rank in a subquery", sqlText(first), sqlText(c))
		}
		if first == nil {
			first = c
		}
	}
	c := first
	if len(c.Args) > 0 || c.Star || c.Distinct {
		return nil, nil, parser.Errorf(c.Pos, "%s takes no arguments", c.Name)
	}
	w, err := windowOf(s, c)
	if err != nil {
		return nil, nil, err
	}
	if len(w.Order) == 0 {
		return nil, nil, parser.Errorf(w.Pos, "%s() OVER needs ORDER BY: it ranks the rows of each partition in that order", c.Name)
	}
	if w.Frame != nil {
		return nil, nil, parser.Errorf(w.Frame.Pos, "%s() OVER takes no frame (ROWS/RANGE): it ranks the whole partition", c.Name)
	}
	eb := &exprBinder{sc: sc, where: "in OVER", loc: b.loc, cat: b.cat}
	exprs, names := identity(input)
	col := func(e parser.Expr) (int, error) {
		x, err := eb.bind(e)
		if err != nil {
			return 0, err
		}
		if cx, ok := x.(*expr.Column); ok {
			return cx.Index, nil
		}
		exprs = append(exprs, x)
		names = append(names, "$w"+strconv.Itoa(len(exprs)-1))
		return len(exprs) - 1, nil
	}
	r := &Rank{Func: rankFuncs[c.Name], OutputRank: true, Pos: c.Pos}
	for _, p := range w.Partition {
		i, err := col(p)
		if err != nil {
			return nil, nil, err
		}
		r.Partition = append(r.Partition, i)
	}
	for _, o := range w.Order {
		i, err := col(o.X)
		if err != nil {
			return nil, nil, err
		}
		// Flink's default: NULLs sort lowest (first ascending, last descending).
		nullsLast := o.Desc
		switch o.Nulls {
		case "FIRST":
			nullsLast = false
		case "LAST":
			nullsLast = true
		}
		r.Order = append(r.Order, exec.SortKey{Col: i, Desc: o.Desc, NullsLast: nullsLast})
	}
	in := input.Schema()
	order, extra, rowNames, err := expandRowKeys(r.Order, slices.Clone(exprs[in.Len():]), in, w.Order, "$w")
	if err != nil {
		return nil, nil, err
	}
	names = append(names, rowNames...)
	exprs = append(exprs, extra[len(exprs)-in.Len():]...)
	r.Order = order
	r.Input = input
	if len(exprs) > input.Schema().Len() {
		r.Input = &Project{Input: input, Exprs: exprs, Names: names}
	}
	r.RankName = "w0$o0"
	for i, it := range items {
		if it.e == parser.Expr(c) {
			r.RankName = itemName(it, i)
		}
	}
	rankCol := expr.NewColumn(r.Input.Schema().Len(), types.Type{Kind: types.KindBigInt, NotNull: true}, r.RankName)
	over := map[*parser.Call]expr.Expr{}
	for _, x := range calls {
		over[x] = rankCol
	}
	ib := &exprBinder{sc: sc, where: "here", loc: b.loc, cat: b.cat, over: over}
	out := make([]expr.Expr, len(items))
	for i, it := range items {
		if out[i], err = ib.bind(it.e); err != nil {
			return nil, nil, err
		}
	}
	return r, out, nil
}

// rankRange: Calc(cond on the rank, Rank without a range) → Calc(the
// rest of cond, Rank with the range), the Rank without its rank column
// when the Calc no longer reads it.
func rankRange(n Node) (Node, bool, error) {
	c, ok := n.(*Calc)
	if !ok || c.Cond == nil {
		return n, false, nil
	}
	r, ok := c.Input.(*Rank)
	if !ok || r.End != 0 || !r.OutputRank {
		return n, false, nil
	}
	rc := r.Input.Schema().Len()
	start, end := int64(1), int64(math.MaxInt64)
	var rest []expr.Expr
	for _, e := range conjuncts(c.Cond) {
		lo, hi, ok := rankBound(e, rc)
		if !ok {
			rest = append(rest, e)
			continue
		}
		start, end = max(start, lo), min(end, hi)
	}
	if end == math.MaxInt64 {
		return n, false, nil
	}
	if end < start {
		return nil, false, parser.Errorf(r.Pos, "the filter on %s leaves no rank (from %d to %d)", r.RankName, start, end)
	}
	var cond expr.Expr
	for _, e := range rest {
		if cond == nil {
			cond = e
			continue
		}
		var err error
		if cond, err = expr.NewAnd(cond, e); err != nil {
			return nil, false, err
		}
	}
	nr := *r
	nr.Start, nr.End = start, end
	uses := cond != nil && readsColumn(cond, rc)
	for _, e := range c.Exprs {
		uses = uses || readsColumn(e, rc)
	}
	nr.OutputRank = uses
	in, err := windowRankOf(&nr)
	if err != nil {
		return nil, false, err
	}
	return &Calc{Input: in, Cond: cond, Exprs: c.Exprs, Names: c.Names}, true, nil
}

// rankBound reads a bound on column rc from e: rc op n or n op rc (op one
// of = < <= > >=), or rc BETWEEN a AND b, with integer literals.
func rankBound(e expr.Expr, rc int) (lo, hi int64, ok bool) {
	isRank := func(x expr.Expr) bool { c, ok := x.(*expr.Column); return ok && c.Index == rc }
	lit := func(x expr.Expr) (int64, bool) {
		l, ok := x.(*expr.Literal)
		if !ok || l.V.IsNull() {
			return 0, false
		}
		switch l.V.Kind() {
		case types.KindInt, types.KindBigInt:
			return l.V.Int(), true
		}
		return 0, false
	}
	lo, hi = 1, math.MaxInt64
	switch x := e.(type) {
	case *expr.Compare:
		op, v, ok := x.Op, int64(0), false
		if isRank(x.L) {
			v, ok = lit(x.R)
		} else if isRank(x.R) {
			v, ok = lit(x.L)
			op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
		}
		if !ok {
			return 0, 0, false
		}
		switch op {
		case "=":
			return v, v, true
		case "<":
			return lo, v - 1, true
		case "<=":
			return lo, v, true
		case ">":
			return v + 1, hi, true
		case ">=":
			return v, hi, true
		}
	case *expr.Between:
		if x.Not || !isRank(x.X) {
			return 0, 0, false
		}
		a, ok1 := lit(x.Lo)
		b, ok2 := lit(x.Hi)
		if ok1 && ok2 {
			return a, b, true
		}
	}
	return 0, 0, false
}

// readsColumn reports whether e reads column i.
func readsColumn(e expr.Expr, i int) bool {
	found := false
	_, _ = expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok && c.Index == i {
			found = true
		}
		return x, nil
	})
	return found
}
