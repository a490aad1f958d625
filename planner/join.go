package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// JoinKind is the kind of a logical join.
type JoinKind int

// Join kinds. A comma join binds as an inner join with no condition.
const (
	JoinInner JoinKind = iota
	JoinLeft
	JoinRight
	JoinFull
	// JoinSemi keeps the left rows with a match (IN, EXISTS); JoinAnti
	// those without one (NOT IN, NOT EXISTS). Their output is the left
	// columns only (bind_subquery.go).
	JoinSemi
	JoinAnti
)

// String returns the kind as Flink's EXPLAIN prints it.
func (k JoinKind) String() string {
	return [...]string{"InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "LeftSemiJoin", "LeftAntiJoin"}[k]
}

// sql returns the kind as SQL writes it.
func (k JoinKind) sql() string {
	return [...]string{"INNER", "LEFT", "RIGHT", "FULL", "SEMI", "ANTI"}[k]
}

// leftOuter reports whether the left side's rows are kept without a match
// (NULL-padded); rightOuter likewise for the right side.
func (k JoinKind) leftOuter() bool  { return k == JoinLeft || k == JoinFull }
func (k JoinKind) rightOuter() bool { return k == JoinRight || k == JoinFull }

// semi reports whether the join is a semi or anti join (left columns out).
func (k JoinKind) semi() bool { return k == JoinSemi || k == JoinAnti }

// Join joins Left and Right; its output is the left columns followed by
// the right ones. Cond is over that row (nil: TRUE). Before key extraction
// (Keyed false) Cond is the whole condition; after it, LeftKeys[i] =
// RightKeys[i] are the equi-join keys (columns of each input, of one type)
// and Cond is the residual predicate.
type Join struct {
	Left, Right         Node
	Kind                JoinKind
	Cond                expr.Expr
	Keyed               bool
	LeftKeys, RightKeys []int
	// Interval, set by key extraction when the condition bounds the two
	// rowtimes, makes it an interval join.
	Interval *TimeBounds
	// Window, set when both inputs are window TVFs joined on their
	// windows, makes it a window join (windowjoin.go).
	Window *WindowJoinInfo
}

var _ Node = (*Join)(nil)

// Children returns the two inputs.
func (n *Join) Children() []Node { return []Node{n.Left, n.Right} }

// WithChildren replaces the inputs.
func (n *Join) WithChildren(k []Node) Node { c := *n; c.Left, c.Right = k[0], k[1]; return &c }

// Schema is the left columns then the right ones; the columns of a side
// that may be NULL-padded are nullable, and time attributes become plain
// timestamps (a regular join's output has no watermark order, as in Flink).
func (n *Join) Schema() types.Schema {
	if n.Kind.semi() {
		return semiSchema(n.Left.Schema())
	}
	l, r := n.Left.Schema(), n.Right.Schema()
	cols := make([]types.Column, 0, l.Len()+r.Len())
	for _, c := range l.Columns {
		if n.Interval == nil {
			c.Type = c.Type.Plain()
		}
		if n.Kind.rightOuter() {
			c.Type = c.Type.Nullable()
		}
		cols = append(cols, c)
	}
	for _, c := range r.Columns {
		if n.Interval == nil {
			c.Type = c.Type.Plain()
		}
		if n.Kind.leftOuter() {
			c.Type = c.Type.Nullable()
		}
		cols = append(cols, c)
	}
	return types.Schema{Columns: cols}
}

// String renders the node for EXPLAIN.
func (n *Join) String() string {
	cond := "true"
	if n.Cond != nil {
		cond = n.Cond.String()
	}
	if n.Keyed {
		iv := ""
		if n.Interval != nil {
			iv = ", " + n.intervalText()
		}
		if n.Window != nil {
			iv = ", " + n.Window.text()
		}
		return fmt.Sprintf("LogicalJoin(joinType=[%s], keys=[%s]%s, residual=[%s])", n.Kind, n.keysText(), iv, cond)
	}
	return fmt.Sprintf("LogicalJoin(condition=[%s], joinType=[%s])", cond, n.Kind)
}

// keysText renders the key pairs as "l = r, …".
func (n *Join) keysText() string {
	l, r := n.Left.Schema(), n.Right.Schema()
	parts := make([]string, len(n.LeftKeys))
	for i := range n.LeftKeys {
		parts[i] = l.Columns[n.LeftKeys[i]].Name + " = " + r.Columns[n.RightKeys[i]].Name
	}
	return strings.Join(parts, ", ")
}

// intervalText renders the time bounds as Flink's EXPLAIN does:
// "windowBounds=[isRowTime=true, leftLowerBound=…, leftUpperBound=…,
// leftTimeIndex=…, rightTimeIndex=…]" (the left time relative to the right:
// l.ts - r.ts in [-Upper, -Lower]).
func (n *Join) intervalText() string {
	iv := n.Interval
	return fmt.Sprintf("windowBounds=[isRowTime=true, leftLowerBound=%d, leftUpperBound=%d, leftTimeIndex=%d, rightTimeIndex=%d]",
		-iv.Upper, -iv.Lower, iv.LeftTime, iv.RightTime)
}

// conjuncts splits e at its top-level ANDs.
func conjuncts(e expr.Expr) []expr.Expr {
	if e == nil {
		return nil
	}
	if l, ok := e.(*expr.Logic); ok && !l.Or {
		return append(conjuncts(l.L), conjuncts(l.R)...)
	}
	return []expr.Expr{e}
}

// andAll is the conjunction of es (nil for none).
func andAll(es []expr.Expr) (expr.Expr, error) {
	var out expr.Expr
	for _, e := range es {
		if out == nil {
			out = e
			continue
		}
		var err error
		if out, err = expr.NewAnd(out, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// columnsUsed returns the smallest and largest column index e reads
// (ok false if it reads none).
func columnsUsed(e expr.Expr) (lo, hi int, ok bool) {
	lo, hi = 1<<31, -1
	_, _ = expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, isCol := x.(*expr.Column); isCol {
			lo, hi = min(lo, c.Index), max(hi, c.Index)
		}
		return x, nil
	})
	return lo, hi, hi >= 0
}

// shiftColumns returns e with every column index moved by delta (for
// columns at or above from).
func shiftColumns(e expr.Expr, from, delta int) (expr.Expr, error) {
	return expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok && c.Index >= from {
			return expr.NewColumn(c.Index+delta, c.T, c.Name), nil
		}
		return x, nil
	})
}

// isTrue reports whether e is the literal TRUE.
func isTrue(e expr.Expr) bool {
	if l, ok := e.(*expr.Literal); ok {
		return l.V.Kind() == types.KindBoolean && l.V.Bool()
	}
	return false
}

// filterIntoJoin: Filter(Join inner) → Join with the filter ANDed into its
// condition (valid for inner joins only: an outer join's WHERE applies
// after the padding). This is how the comma form's WHERE becomes its join
// condition.
func filterIntoJoin(n Node) (Node, bool, error) {
	f, ok := n.(*Filter)
	if !ok {
		return n, false, nil
	}
	j, ok := f.Input.(*Join)
	if !ok || j.Kind != JoinInner || j.Keyed {
		return n, false, nil
	}
	c := *j
	cond, err := andAll(append(conjuncts(j.Cond), f.Cond))
	if err != nil {
		return nil, false, err
	}
	c.Cond = cond
	return &c, true, nil
}

// pushJoinConds moves the conjuncts of a join's condition that read only
// one input below the join, as a Filter on that input, where that keeps
// the result: both sides of an inner join, the right side of a left join,
// the left side of a right join (a condition on the preserved side of an
// outer join decides matches, not which rows are kept). TRUE is dropped.
func pushJoinConds(n Node) (Node, bool, error) {
	j, ok := n.(*Join)
	if !ok || j.Keyed || j.Cond == nil {
		return n, false, nil
	}
	wl := j.Left.Schema().Len()
	var keep, toLeft, toRight []expr.Expr
	changed := false
	for _, c := range conjuncts(j.Cond) {
		if isTrue(c) {
			changed = true
			continue
		}
		lo, hi, used := columnsUsed(c)
		switch {
		case used && hi < wl && (j.Kind == JoinInner || j.Kind == JoinRight || j.Kind == JoinSemi):
			toLeft = append(toLeft, c)
		case used && lo >= wl && (j.Kind == JoinInner || j.Kind == JoinLeft || j.Kind.semi()):
			s, err := shiftColumns(c, 0, -wl)
			if err != nil {
				return nil, false, err
			}
			toRight = append(toRight, s)
		default:
			keep = append(keep, c)
		}
	}
	if !changed && len(toLeft) == 0 && len(toRight) == 0 {
		return n, false, nil
	}
	c := *j
	var err error
	if c.Cond, err = andAll(keep); err != nil {
		return nil, false, err
	}
	if len(toLeft) > 0 {
		f, err := andAll(toLeft)
		if err != nil {
			return nil, false, err
		}
		c.Left = &Filter{Input: j.Left, Cond: f}
	}
	if len(toRight) > 0 {
		f, err := andAll(toRight)
		if err != nil {
			return nil, false, err
		}
		c.Right = &Filter{Input: j.Right, Cond: f}
	}
	return &c, true, nil
}

// extractJoinKeys turns a join's condition into equi-join keys and a
// residual: each conjunct l = r with l over the left input only and r over
// the right only is a key pair. Key expressions that are not a column of
// the pair's common type (an expression, or an INT joined with a BIGINT)
// are computed by a projection below the join, so that the hash exchange
// and the state see equal values alike; a projection above drops them.
// A join without key pairs gets no keys (it runs on one subtask).
func extractJoinKeys(n Node) (Node, bool, error) {
	j, ok := n.(*Join)
	if !ok || j.Keyed {
		return n, false, nil
	}
	lsch, rsch := j.Left.Schema(), j.Right.Schema()
	wl, wr := lsch.Len(), rsch.Len()
	var residual []expr.Expr
	var lExtra, rExtra []expr.Expr
	var lKeys, rKeys []int
	for _, c := range conjuncts(j.Cond) {
		cmp, ok := c.(*expr.Compare)
		if !ok || cmp.Op != "=" {
			residual = append(residual, c)
			continue
		}
		a, b := cmp.L, cmp.R
		alo, ahi, aok := columnsUsed(a)
		blo, bhi, bok := columnsUsed(b)
		if !aok || !bok {
			residual = append(residual, c)
			continue
		}
		switch {
		case ahi < wl && blo >= wl:
		case bhi < wl && alo >= wl:
			a, b = b, a
		default:
			residual = append(residual, c)
			continue
		}
		t, ok := expr.CommonType(a.Type(), b.Type())
		if !ok {
			residual = append(residual, c)
			continue
		}
		b, err := shiftColumns(b, 0, -wl)
		if err != nil {
			return nil, false, err
		}
		lk, err := keyColumnOf(a, t, wl, &lExtra)
		if err != nil {
			return nil, false, err
		}
		rk, err := keyColumnOf(b, t, wr, &rExtra)
		if err != nil {
			return nil, false, err
		}
		lKeys, rKeys = append(lKeys, lk), append(rKeys, rk)
	}
	out := &Join{Left: j.Left, Right: j.Right, Kind: j.Kind, Keyed: true, LeftKeys: lKeys, RightKeys: rKeys}
	rowtime := func(i int) bool {
		if i < wl {
			return lsch.Columns[i].Type.Attr == types.Rowtime
		}
		return i-wl < wr && rsch.Columns[i-wl].Type.Attr == types.Rowtime
	}
	if b, rest, ok := timeBounds(residual, wl, rowtime); ok && !j.Kind.semi() {
		out.Interval, residual = &b, rest
	}
	if len(lExtra) > 0 {
		out.Left = withExtra(j.Left, lExtra)
	}
	if len(rExtra) > 0 {
		out.Right = withExtra(j.Right, rExtra)
	}
	// The residual reads the joined row: right columns move past the
	// extra left ones.
	res, err := andAll(residual)
	if err != nil {
		return nil, false, err
	}
	if res != nil && len(lExtra) > 0 {
		if res, err = shiftColumns(res, wl, len(lExtra)); err != nil {
			return nil, false, err
		}
	}
	out.Cond = res
	if len(lExtra) == 0 && len(rExtra) == 0 {
		return out, true, nil
	}
	if j.Kind.semi() {
		return dropKeyColumns(out, wl), true, nil
	}
	// Drop the key columns again.
	sch := out.Schema()
	var exprs []expr.Expr
	var names []string
	for i := range wl {
		c := sch.Columns[i]
		exprs, names = append(exprs, expr.NewColumn(i, c.Type, c.Name)), append(names, c.Name)
	}
	for i := range wr {
		k := wl + len(lExtra) + i
		c := sch.Columns[k]
		exprs, names = append(exprs, expr.NewColumn(k, c.Type, c.Name)), append(names, c.Name)
	}
	return &Project{Input: out, Exprs: exprs, Names: names}, true, nil
}

// keyColumnOf returns the column of the input (width w) that holds key
// expression e as type t: e itself if it is a column of t's kind, else a
// new column appended to extra.
func keyColumnOf(e expr.Expr, t types.Type, w int, extra *[]expr.Expr) (int, error) {
	if c, ok := e.(*expr.Column); ok && c.T.Kind == t.Kind {
		return c.Index, nil
	}
	x, err := expr.Coerce(e, t.Plain())
	if err != nil {
		return 0, err
	}
	*extra = append(*extra, x)
	return w + len(*extra) - 1, nil
}

// withExtra projects n's columns followed by extra computed columns
// (named $k0, $k1, …).
func withExtra(n Node, extra []expr.Expr) Node {
	sch := n.Schema()
	exprs := make([]expr.Expr, 0, sch.Len()+len(extra))
	names := make([]string, 0, cap(exprs))
	for i, c := range sch.Columns {
		exprs, names = append(exprs, expr.NewColumn(i, c.Type, c.Name)), append(names, c.Name)
	}
	for i, e := range extra {
		exprs, names = append(exprs, e), append(names, fmt.Sprintf("$k%d", i))
	}
	return &Project{Input: n, Exprs: exprs, Names: names}
}

// TimeBounds makes a join an interval join: the right row's time minus
// the left row's lies in [Lower, Upper] (milliseconds), with LeftTime and
// RightTime the rowtime columns of each input.
type TimeBounds struct {
	LeftTime, RightTime int
	Lower, Upper        int64
}

// timeTerm is a rowtime column plus a constant offset (ms).
type timeTerm struct {
	col int
	off int64
}

// asTimeTerm reads e as col, col + INTERVAL or col - INTERVAL, for a
// rowtime column.
func asTimeTerm(e expr.Expr, rowtime func(int) bool) (timeTerm, bool) {
	switch x := e.(type) {
	case *expr.Column:
		if rowtime(x.Index) {
			return timeTerm{col: x.Index}, true
		}
	case *expr.Arith:
		l, ok := x.R.(*expr.Literal)
		if !ok || l.V.Kind() != types.KindInterval || (x.Op != "+" && x.Op != "-") {
			return timeTerm{}, false
		}
		t, ok := asTimeTerm(x.L, rowtime)
		if !ok {
			return timeTerm{}, false
		}
		if x.Op == "+" {
			t.off += l.V.Int()
		} else {
			t.off -= l.V.Int()
		}
		return t, true
	}
	return timeTerm{}, false
}

// timeBounds finds the conjuncts of conds (over left ++ right, the left
// wl wide) that bound the right rowtime by the left one from both sides,
// as `r.ts BETWEEN l.ts - INTERVAL … AND l.ts + INTERVAL …` or a pair of
// comparisons, and returns the bounds and the other conjuncts; ok is
// false when there are not both bounds on one pair of rowtime columns.
func timeBounds(conds []expr.Expr, wl int, rowtime func(int) bool) (TimeBounds, []expr.Expr, bool) {
	var b TimeBounds
	haveLo, haveHi, cols := false, false, [2]int{-1, -1}
	var rest []expr.Expr
	var try func(op string, a, c expr.Expr) bool
	try = func(op string, a, c expr.Expr) bool {
		ta, ok1 := asTimeTerm(a, rowtime)
		tc, ok2 := asTimeTerm(c, rowtime)
		if !ok1 || !ok2 {
			return false
		}
		// d = right time - left time, compared with k.
		var k int64
		switch {
		case ta.col >= wl && tc.col < wl: // ra + oa op lc + oc
			k = tc.off - ta.off
		case ta.col < wl && tc.col >= wl: // la + oa op rc + oc  ⇔  d flip(op) oa - oc
			k = ta.off - tc.off
			op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
			ta, tc = tc, ta
		default:
			return false
		}
		if cols[0] >= 0 && (cols[0] != tc.col || cols[1] != ta.col) {
			return false
		}
		cols = [2]int{tc.col, ta.col}
		switch op {
		case ">=", ">":
			if op == ">" {
				k++
			}
			if !haveLo || k > b.Lower {
				b.Lower = k
			}
			haveLo = true
		case "<=", "<":
			if op == "<" {
				k--
			}
			if !haveHi || k < b.Upper {
				b.Upper = k
			}
			haveHi = true
		default:
			return false
		}
		return true
	}
	for _, c := range conds {
		switch x := c.(type) {
		case *expr.Compare:
			if try(x.Op, x.L, x.R) {
				continue
			}
		case *expr.Between:
			if !x.Not {
				if _, ok := asTimeTerm(x.X, rowtime); ok {
					saved := [...]any{cols, b, haveLo, haveHi}
					if try(">=", x.X, x.Lo) {
						if try("<=", x.X, x.Hi) {
							continue
						}
						// keep it whole as a residual
						cols, b, haveLo, haveHi = saved[0].([2]int), saved[1].(TimeBounds), saved[2].(bool), saved[3].(bool)
					}
				}
			}
		}
		rest = append(rest, c)
	}
	if !haveLo || !haveHi {
		return TimeBounds{}, conds, false
	}
	b.LeftTime, b.RightTime = cols[0], cols[1]-wl
	return b, rest, true
}
