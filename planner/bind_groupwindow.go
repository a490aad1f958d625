package planner

import (
	"strings"

	"github.com/weir-sql/weir/parser"
)

// Group window aggregation, the older syntax: GROUP BY TUMBLE(ts, size),
// HOP(ts, slide, size) or SESSION(ts, gap) (with other keys), and
// TUMBLE_START / _END / _ROWTIME / _PROCTIME (HOP_…, SESSION_…) in the
// select list and HAVING. It binds as the window TVF does: the FROM
// relation gets a WindowTVF, the group window becomes GROUP BY
// window_start, window_end, and the auxiliary functions its columns; the
// aggregate then becomes the same WindowAggregate.

// groupWindowAux maps an auxiliary function's suffix to the TVF column.
var groupWindowAux = map[string]string{
	"_START": "window_start", "_END": "window_end", "_ROWTIME": "window_time", "_PROCTIME": "window_time",
}

// groupWindowKinds maps a group window function to its window TVF.
var groupWindowKinds = map[string]string{"TUMBLE": "TUMBLE", "HOP": "HOP", "SESSION": "SESSION"}

// groupWindowMisuse returns the error for a group window function or an
// auxiliary one used where it cannot be.
func groupWindowMisuse(name string) (string, bool) {
	up := strings.ToUpper(name)
	if _, ok := groupWindowKinds[up]; ok || up == "CUMULATE" {
		return up + "(…) is a group window: it is allowed in GROUP BY only (or as a window TVF: FROM TABLE(" + up + "(TABLE t, DESCRIPTOR(ts), …)))", true
	}
	for suffix := range groupWindowAux {
		if kind, ok := strings.CutSuffix(up, suffix); ok && groupWindowKinds[kind] != "" {
			return up + "(…) is allowed only in the SELECT list or HAVING of a query grouped by " + kind + "(…)", true
		}
	}
	return "", false
}

// groupWindow finds the group window in s's GROUP BY. If there is one it
// returns the window TVF to put over the FROM relation and a copy of s in
// which the group window is window_start, window_end, window_time and the auxiliary
// functions are the TVF's columns.
func groupWindow(s *parser.Select) (*parser.WindowTVF, *parser.Select, error) {
	at := -1
	var call *parser.Call
	for i, g := range s.GroupBy {
		c, ok := g.(*parser.Call)
		if !ok || groupWindowKinds[strings.ToUpper(c.Name)] == "" {
			continue
		}
		if at >= 0 {
			return nil, nil, parser.Errorf(c.Pos, "GROUP BY takes one group window, not two")
		}
		at, call = i, c
	}
	if at < 0 {
		return nil, nil, nil
	}
	kind := strings.ToUpper(call.Name)
	want := map[string]int{"TUMBLE": 2, "HOP": 3, "SESSION": 2}[kind]
	sig := map[string]string{"TUMBLE": "TUMBLE(time_attr, size)", "HOP": "HOP(time_attr, slide, size)", "SESSION": "SESSION(time_attr, gap)"}[kind]
	if call.Star || call.Distinct || len(call.Args) != want {
		return nil, nil, parser.Errorf(call.Pos, "%s takes %d arguments: %s", kind, want, sig)
	}
	ref, ok := call.Args[0].(*parser.ColumnRef)
	if !ok {
		return nil, nil, parser.Errorf(call.Args[0].Position(), "%s: the first argument must be a time attribute column: %s", kind, sig)
	}
	w := &parser.WindowTVF{Pos: call.Pos, Kind: kind, TimeCol: ref.Name, TimePos: ref.Pos}
	switch kind {
	case "TUMBLE":
		w.Size = call.Args[1]
	case "HOP":
		w.Slide, w.Size = call.Args[1], call.Args[2]
	case "SESSION":
		w.Gap = call.Args[1]
	}
	c := *s
	col := func(name string) *parser.ColumnRef { return &parser.ColumnRef{Pos: call.Pos, Name: name} }
	c.GroupBy = append(append(append([]parser.Expr{}, s.GroupBy[:at]...), col("window_start"), col("window_end"), col("window_time")), s.GroupBy[at+1:]...)
	var err error
	rewrite := func(e parser.Expr) parser.Expr {
		out, rerr := rewriteAux(e, kind)
		if rerr != nil && err == nil {
			err = rerr
		}
		return out
	}
	c.Items = make([]*parser.SelectItem, len(s.Items))
	for i, it := range s.Items {
		cp := *it
		if cp.Expr != nil {
			cp.Expr = rewrite(cp.Expr)
			if cp.Alias == "" {
				if _, isRef := it.Expr.(*parser.ColumnRef); !isRef {
					if _, nowRef := cp.Expr.(*parser.ColumnRef); nowRef {
						cp.Alias = "EXPR$" + itoa(i)
					}
				}
			}
		}
		c.Items[i] = &cp
	}
	if s.Having != nil {
		c.Having = rewrite(s.Having)
	}
	return w, &c, err
}

// rewriteAux returns e with the auxiliary functions of the group window
// kind replaced by the window TVF's columns (a copy where it changes).
func rewriteAux(e parser.Expr, kind string) (parser.Expr, error) {
	if c, ok := e.(*parser.Call); ok {
		up := strings.ToUpper(c.Name)
		for suffix, col := range groupWindowAux {
			k, ok := strings.CutSuffix(up, suffix)
			if !ok || groupWindowKinds[k] == "" {
				continue
			}
			if k != kind {
				return e, parser.Errorf(c.Pos, "%s(…) needs GROUP BY %s(…), and the query groups by %s(…)", up, k, kind)
			}
			return &parser.ColumnRef{Pos: c.Pos, Name: col}, nil
		}
	}
	var err error
	fix := func(x parser.Expr) parser.Expr {
		out, e2 := rewriteAux(x, kind)
		if e2 != nil && err == nil {
			err = e2
		}
		return out
	}
	switch n := e.(type) {
	case *parser.Binary:
		c := *n
		c.L, c.R = fix(n.L), fix(n.R)
		return &c, err
	case *parser.Unary:
		c := *n
		c.X = fix(n.X)
		return &c, err
	case *parser.IsNull:
		c := *n
		c.X = fix(n.X)
		return &c, err
	case *parser.In:
		c := *n
		c.X = fix(n.X)
		c.List = make([]parser.Expr, len(n.List))
		for i, x := range n.List {
			c.List[i] = fix(x)
		}
		return &c, err
	case *parser.Between:
		c := *n
		c.X, c.Lo, c.Hi = fix(n.X), fix(n.Lo), fix(n.Hi)
		return &c, err
	case *parser.Like:
		c := *n
		c.X, c.Pattern = fix(n.X), fix(n.Pattern)
		return &c, err
	case *parser.Case:
		c := *n
		if n.Operand != nil {
			c.Operand = fix(n.Operand)
		}
		c.Whens = make([]*parser.When, len(n.Whens))
		for i, w := range n.Whens {
			cw := *w
			cw.Cond, cw.Result = fix(w.Cond), fix(w.Result)
			c.Whens[i] = &cw
		}
		if n.Else != nil {
			c.Else = fix(n.Else)
		}
		return &c, err
	case *parser.Cast:
		c := *n
		c.X = fix(n.X)
		return &c, err
	case *parser.Call:
		c := *n
		c.Args = make([]parser.Expr, len(n.Args))
		for i, x := range n.Args {
			c.Args[i] = fix(x)
		}
		return &c, err
	}
	return e, nil
}
