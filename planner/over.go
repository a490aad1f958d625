package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// OverAgg appends to each input row the aggregates of the rows of its
// frame within its partition, ordered by a time attribute (agg(…) OVER
// (PARTITION BY … ORDER BY t ROWS|RANGE …)).
type OverAgg struct {
	Input     Node
	Partition []int
	TimeCol   int            // the time attribute ordered by (ascending), -1 when ordered otherwise
	Order     []exec.SortKey // the ORDER BY
	OrderPos  parser.Pos
	Frame     exec.OverFrame
	FrameText string // as Flink prints it, "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"
	Calls     []aggfunc.Call
	Names     []string // one per call
}

var _ Node = (*OverAgg)(nil)

// Children returns the input.
func (n *OverAgg) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *OverAgg) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the input's columns, then one per call.
func (n *OverAgg) Schema() types.Schema {
	cols := append([]types.Column{}, n.Input.Schema().Columns...)
	for i, c := range n.Calls {
		cols = append(cols, types.Column{Name: n.Names[i], Type: c.Type})
	}
	return types.Schema{Columns: cols}
}

// String renders the node for EXPLAIN.
func (n *OverAgg) String() string { return "Logical" + n.desc() }

// desc is the physical operator's description, as Flink prints it.
func (n *OverAgg) desc() string {
	in := n.Input.Schema()
	parts := make([]string, len(n.Partition))
	for i, c := range n.Partition {
		parts[i] = in.Columns[c].Name
	}
	sel := in.Names()
	for i, c := range n.Calls {
		sel = append(sel, c.Name+" AS "+n.Names[i])
	}
	s := "OverAggregate("
	if len(parts) > 0 {
		s += "partitionBy=[" + strings.Join(parts, ", ") + "], "
	}
	return s + "orderBy=[" + (&Rank{Input: n.Input, Order: n.Order}).orderText() + "], window=[" + n.FrameText + "], select=[" + strings.Join(sel, ", ") + "])"
}

// bindOverAggs plans a SELECT whose items call aggregates OVER one window.
func (b *binder) bindOverAggs(s *parser.Select, sc *scope, input Node, items []selItem, calls []*parser.Call) (Node, []expr.Expr, error) {
	first := calls[0]
	w, err := windowOf(s, first)
	if err != nil {
		return nil, nil, err
	}
	text := parser.Format(&parser.Select{Items: []*parser.SelectItem{{Expr: &parser.Call{Name: "F", Over: w}}}})
	for _, c := range calls[1:] {
		wc, err := windowOf(s, c)
		if err != nil {
			return nil, nil, err
		}
		if parser.Format(&parser.Select{Items: []*parser.SelectItem{{Expr: &parser.Call{Name: "F", Over: wc}}}}) != text {
			return nil, nil, parser.Errorf(c.Over.Pos, "all OVER aggregates of a SELECT must use the same window (as in Flink): compute the others in a subquery")
		}
	}
	if len(w.Order) == 0 {
		return nil, nil, parser.Errorf(w.Pos, "an OVER aggregate must have an ORDER BY (ORDER BY ts)")
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
	o := &OverAgg{}
	for _, p := range w.Partition {
		i, err := col(p)
		if err != nil {
			return nil, nil, err
		}
		o.Partition = append(o.Partition, i)
	}
	// Ordered by one time attribute, ascending: the time-ordered
	// operator over insert-only input. Anything else (other columns,
	// DESC, several keys) needs the updating one (phys_over.go).
	o.TimeCol = -1
	for _, it := range w.Order {
		i, err := col(it.X)
		if err != nil {
			return nil, nil, err
		}
		// Flink's default: NULLs sort lowest (first ascending, last descending).
		nullsLast := it.Desc
		switch it.Nulls {
		case "FIRST":
			nullsLast = false
		case "LAST":
			nullsLast = true
		}
		o.Order = append(o.Order, exec.SortKey{Col: i, Desc: it.Desc, NullsLast: nullsLast})
	}
	if len(w.Order) == 1 && !w.Order[0].Desc && !o.Order[0].NullsLast && exprs[o.Order[0].Col].Type().Attr != types.NoTimeAttr {
		o.TimeCol = o.Order[0].Col
	}
	o.OrderPos = w.Order[0].Pos
	if err := overFrame(w, o); err != nil {
		return nil, nil, err
	}
	over := map[*parser.Call]expr.Expr{}
	digests := map[string]int{}
	callIdx := map[*parser.Call]int{}
	for _, c := range calls {
		if c.Distinct {
			return nil, nil, parser.Errorf(c.Pos, "DISTINCT in an OVER aggregate is not supported yet")
		}
		if !c.Star && len(c.Args) != 1 {
			return nil, nil, parser.Errorf(c.Pos, "%s takes exactly one argument, got %d", c.Name, len(c.Args))
		}
		call := aggfunc.Call{Arg: -1}
		var argType types.Type
		argText := "*"
		if !c.Star {
			i, err := col(c.Args[0])
			if err != nil {
				return nil, nil, err
			}
			call.Arg, argType = i, exprs[i].Type().Plain()
			call.ArgType = argType
			argText = names[i]
		}
		f, t, err := aggCallType(c, c.Star, argType)
		if err != nil {
			return nil, nil, err
		}
		call.Func, call.Type, call.Name = f, t, c.Name+"("+argText+")"
		if _, err := exec.NewAccumulator(call); err != nil {
			return nil, nil, parser.Errorf(c.Pos, "%s", err.Error())
		}
		d := c.Name + "(" + argText + ")"
		if j, dup := digests[d]; dup {
			callIdx[c] = j
			continue
		}
		name := "w0$o" + strconv.Itoa(len(o.Calls))
		for i, it := range items {
			if it.e == parser.Expr(c) {
				name = itemName(it, i)
			}
		}
		digests[d] = len(o.Calls)
		callIdx[c] = len(o.Calls)
		o.Calls = append(o.Calls, call)
		o.Names = append(o.Names, name)
	}
	o.Input = input
	if len(exprs) > input.Schema().Len() {
		o.Input = &Project{Input: input, Exprs: exprs, Names: names}
	}
	width := len(exprs)
	for _, c := range calls {
		j := callIdx[c]
		over[c] = expr.NewColumn(width+j, o.Calls[j].Type, o.Names[j])
	}
	ib := &exprBinder{sc: sc, where: "here", loc: b.loc, cat: b.cat, over: over}
	out := make([]expr.Expr, len(items))
	for i, it := range items {
		if out[i], err = ib.bind(it.e); err != nil {
			return nil, nil, err
		}
	}
	return o, out, nil
}

// overFrame reads w's frame into o: no frame is RANGE UNBOUNDED PRECEDING
// (SQL's default with ORDER BY).
func overFrame(w *parser.WindowSpec, o *OverAgg) error {
	f := w.Frame
	if f == nil {
		o.Frame, o.FrameText = exec.OverFrame{Unbounded: true}, "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
		return nil
	}
	if f.Lo.Following || !f.Hi.Current {
		return parser.Errorf(f.Pos, "an OVER frame must end at CURRENT ROW and start before it (FOLLOWING is not supported)")
	}
	unit := "RANGE"
	if f.Rows {
		unit = "ROWS"
	}
	o.Frame.IsRows = f.Rows
	switch lo := f.Lo; {
	case lo.Unbounded:
		o.Frame.Unbounded = true
		o.FrameText = unit + " BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
	case lo.Current:
		if f.Rows {
			o.FrameText = "ROWS BETWEEN CURRENT ROW AND CURRENT ROW"
		} else {
			o.FrameText = "RANGE BETWEEN CURRENT ROW AND CURRENT ROW"
		}
	case f.Rows:
		if lo.Interval != nil {
			return parser.Errorf(lo.Pos, "ROWS takes a number of rows (ROWS BETWEEN 10 PRECEDING AND CURRENT ROW); RANGE takes an INTERVAL")
		}
		o.Frame.Rows = lo.N
		o.FrameText = fmt.Sprintf("ROWS BETWEEN %d PRECEDING AND CURRENT ROW", lo.N)
	default:
		if lo.Interval == nil {
			return parser.Errorf(lo.Pos, "RANGE on a time attribute takes an INTERVAL (RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)")
		}
		iv, err := intervalLit(lo.Interval)
		if err != nil {
			return err
		}
		o.Frame.Range = iv.(*expr.Literal).V.Int()
		o.FrameText = "RANGE BETWEEN " + iv.String() + " PRECEDING AND CURRENT ROW"
	}
	return nil
}
