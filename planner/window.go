package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// Window TVFs and window aggregation. A window TVF (FROM
// TABLE(TUMBLE(...))) binds to a WindowTVF node: its input's columns plus
// window_start, window_end and window_time. An aggregate grouped by
// window_start and window_end right above it (through a WHERE that does not
// use the window columns) becomes a WindowAggregate over the TVF's input,
// which assigns the windows itself, as Flink's window aggregate does; the
// older GROUP BY TUMBLE(ts, size) syntax binds to the same node
// (bind_groupwindow.go).

// WindowTVF is a window table-valued function over Input.
type WindowTVF struct {
	Input    Node
	Spec     exec.WindowSpec
	TimeName string // the time attribute's column
	// Partition are SESSION's PARTITION BY columns (input positions).
	Partition []int
	// Zone is the session time zone (nil: UTC): in processing time, the
	// zone of a window aggregate's window_start and window_end.
	Zone *time.Location
}

// Children returns the input.
func (n *WindowTVF) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *WindowTVF) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// windowColTypes returns the types of window_start/window_end and of
// window_time for a time attribute of type t.
func windowColTypes(t types.Type) (bound, wtime types.Type) {
	kind := types.KindTimestamp
	if t.Kind == types.KindTimestampLTZ {
		kind = types.KindTimestampLTZ
	}
	bound = types.Type{Kind: kind, NotNull: true}
	wtime = bound
	wtime.Attr = t.Attr
	return bound, wtime
}

// Schema is the input's columns, then window_start, window_end and
// window_time (a time attribute, so that windows cascade).
func (n *WindowTVF) Schema() types.Schema {
	in := n.Input.Schema()
	cols := append([]types.Column{}, in.Columns...)
	bound, wtime := windowColTypes(in.Columns[n.Spec.TimeCol].Type)
	cols = append(cols, types.Column{Name: "window_start", Type: bound}, types.Column{Name: "window_end", Type: bound},
		types.Column{Name: "window_time", Type: wtime})
	return types.Schema{Columns: cols}
}

// String renders the node for EXPLAIN.
func (n *WindowTVF) String() string {
	return "LogicalTableFunctionScan(invocation=[" + windowText(n.Spec, n.TimeName) + "])"
}

// windowText renders a window as Flink's EXPLAIN does, e.g.
// TUMBLE(time_col=[ts], size=[5 s]).
func windowText(w exec.WindowSpec, timeName string) string {
	return w.Kind.String() + "(" + strings.Join(append([]string{"time_col=[" + timeName + "]"}, windowParams(w)...), ", ") + ")"
}

// windowParams renders a window's size, slide, step or gap and offset.
func windowParams(w exec.WindowSpec) []string {
	var parts []string
	switch w.Kind {
	case exec.WindowTumble:
		parts = append(parts, "size=["+durText(w.Size)+"]")
	case exec.WindowHop:
		parts = append(parts, "size=["+durText(w.Size)+"]", "slide=["+durText(w.Slide)+"]")
	case exec.WindowCumulate:
		parts = append(parts, "max_size=["+durText(w.Size)+"]", "step=["+durText(w.Slide)+"]")
	case exec.WindowSession:
		parts = append(parts, "gap=["+durText(w.Gap)+"]")
	}
	if w.Offset != 0 {
		parts = append(parts, "offset=["+durText(w.Offset)+"]")
	}
	return parts
}

// durText renders milliseconds as Flink does in plans: "5 s", "1 min", "1500 ms".
func durText(ms int64) string {
	switch {
	case ms != 0 && ms%3_600_000 == 0:
		return fmt.Sprintf("%d h", ms/3_600_000)
	case ms != 0 && ms%60_000 == 0:
		return fmt.Sprintf("%d min", ms/60_000)
	case ms != 0 && ms%1000 == 0:
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}

// WindowAggregate groups its insert-only input by Keys and by the windows
// of Spec (whose TimeCol is an input column) and computes Aggs; its output
// is the keys, window_start, window_end, window_time, then one column per
// aggregate. Names name the keys and the aggregates.
type WindowAggregate struct {
	Input    Node
	Keys     []int
	Spec     exec.WindowSpec
	TimeName string
	Aggs     []aggfunc.Call
	Names    []string
	// Watermark renders the input's watermark for EXPLAIN ("" if none).
	Watermark string
	// Zone is the session time zone (nil: UTC) of window_start and
	// window_end in processing time.
	Zone *time.Location
	// Attached, when set, makes this a window-attached aggregate: its
	// input rows carry their windows already (window_attached.go).
	Attached *AttachedWindow
}

// Children returns the input.
func (n *WindowAggregate) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *WindowAggregate) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the keys, the window's columns, then the aggregates.
func (n *WindowAggregate) Schema() types.Schema {
	in := n.Input.Schema()
	var cols []types.Column
	for i, k := range n.Keys {
		cols = append(cols, types.Column{Name: n.Names[i], Type: in.Columns[k].Type.Plain()})
	}
	var tt types.Type
	if n.Spec.Proctime {
		tt = types.Type{Kind: types.KindTimestampLTZ, Attr: types.Proctime}
	} else {
		tt = in.Columns[n.Spec.TimeCol].Type
	}
	bound, wtime := windowColTypes(tt)
	if n.Attached != nil {
		// The input's window_end - 1 ms: window_time stays a time attribute.
		wtime.Attr = types.Rowtime
	}
	if n.Spec.Proctime {
		// As in Flink: the bounds are TIMESTAMP(3), the wall clock in the
		// session time zone; window_time stays the TIMESTAMP_LTZ attribute.
		bound = types.Type{Kind: types.KindTimestamp, NotNull: true}
	}
	start := "window_start"
	if n.Attached != nil {
		start = "$step_start" // the TUMBLE's that runs it, not the window's
	}
	cols = append(cols, types.Column{Name: start, Type: bound}, types.Column{Name: "window_end", Type: bound},
		types.Column{Name: "window_time", Type: wtime})
	for j, a := range n.Aggs {
		cols = append(cols, types.Column{Name: n.Names[len(n.Keys)+j], Type: a.Type})
	}
	return types.Schema{Columns: cols}
}

// String renders the node for EXPLAIN.
func (n *WindowAggregate) String() string {
	in := n.Input.Schema()
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = in.Columns[k].Name
	}
	s := "LogicalWindowAggregate(group=[{" + strings.Join(keys, ", ") + "}], window=[" + n.windowText() + "]"
	for j, a := range n.Aggs {
		s += ", " + n.Names[len(n.Keys)+j] + "=[" + a.Name + "]"
	}
	return s + ")"
}

// bindWindowTVF binds FROM TABLE(TUMBLE|HOP|CUMULATE|SESSION(...)).
func (b *binder) bindWindowTVF(n *parser.WindowTVF) (rel, error) {
	in, err := b.bindFrom(&parser.TableRef{Pos: n.TablePos, Name: n.Table})
	if err != nil {
		return rel{}, err
	}
	r, err := b.windowOver(in, n)
	if err != nil {
		return rel{}, err
	}
	if n.Alias != "" {
		r.qual = n.Alias
	}
	return r, nil
}

// windowOver puts the window TVF n (its table ignored) over relation in.
func (b *binder) windowOver(in rel, n *parser.WindowTVF) (rel, error) {
	sc := newScope(in)
	tc, err := sc.resolve(&parser.ColumnRef{Pos: n.TimePos, Name: n.TimeCol})
	if err != nil {
		return rel{}, err
	}
	col := tc.(*expr.Column)
	spec := exec.WindowSpec{TimeCol: col.Index, LTZ: col.T.Kind == types.KindTimestampLTZ}
	switch col.T.Attr {
	case types.Rowtime:
	case types.Proctime:
		spec.Proctime = true
	default:
		return rel{}, parser.Errorf(n.TimePos, "%s: DESCRIPTOR(%s): column '%s' is %s, not a time attribute: declare WATERMARK FOR %s AS … (event time) or use a column AS PROCTIME() (processing time)",
			n.Kind, n.TimeCol, col.Name, col.T, col.Name)
	}
	eb := &exprBinder{sc: sc, where: "in a window argument", loc: b.loc, cat: b.cat}
	ms := func(x parser.Expr, what string) (int64, error) {
		if x == nil {
			return 0, nil
		}
		v, err := eb.bind(x)
		if err != nil {
			return 0, err
		}
		if v.Type().Kind != types.KindInterval || !expr.IsConstant(v) {
			return 0, parser.Errorf(x.Position(), "%s: the %s must be a constant INTERVAL, e.g. INTERVAL '5' SECOND", n.Kind, what)
		}
		r, err := v.Eval(nil)
		if err != nil || r.IsNull() {
			return 0, parser.Errorf(x.Position(), "%s: the %s must be a constant INTERVAL, e.g. INTERVAL '5' SECOND", n.Kind, what)
		}
		return r.Int(), nil
	}
	switch n.Kind {
	case "TUMBLE":
		spec.Kind = exec.WindowTumble
		spec.Size, err = ms(n.Size, "size")
	case "HOP":
		spec.Kind = exec.WindowHop
		if spec.Slide, err = ms(n.Slide, "slide"); err == nil {
			spec.Size, err = ms(n.Size, "size")
		}
	case "CUMULATE":
		spec.Kind = exec.WindowCumulate
		if spec.Slide, err = ms(n.Step, "step"); err == nil {
			spec.Size, err = ms(n.Size, "size")
		}
	case "SESSION":
		spec.Kind = exec.WindowSession
		spec.Gap, err = ms(n.Gap, "gap")
	}
	if err == nil {
		spec.Offset, err = ms(n.Offset, "offset")
	}
	if err != nil {
		return rel{}, err
	}
	if err := spec.Validate(); err != nil {
		return rel{}, parser.Errorf(n.Pos, "%s", err.Error())
	}
	node := &WindowTVF{Input: in.node, Spec: spec, TimeName: col.Name, Zone: b.loc}
	for _, p := range n.Partition {
		c, err := sc.resolve(&parser.ColumnRef{Pos: n.Pos, Name: p})
		if err != nil {
			return rel{}, err
		}
		node.Partition = append(node.Partition, c.(*expr.Column).Index)
	}
	return rel{node: node, qual: in.qual}, nil
}

// windowAggregate turns Aggregate(Project(pre) over [Filter over] a
// WindowTVF) grouped by the TVF's window_start and window_end into a
// WindowAggregate over the TVF's input, with a projection above it that
// gives the Aggregate's output layout. ok is false when agg is not a
// window aggregation; an error says why a window aggregation cannot be
// planned.
func windowAggregate(agg *Aggregate, pos parser.Pos) (Node, bool, error) {
	// With grouping sets, an Expand sits under the aggregate and its $e
	// column is the aggregate's last key.
	var exp *Expand
	aggIn := agg.Input
	eKey := -1
	if e, ok := aggIn.(*Expand); ok {
		exp, aggIn, eKey = e, e.Input, len(agg.Keys)-1
	}
	proj, ok := aggIn.(*Project)
	if !ok {
		return nil, false, nil
	}
	var filter *Filter
	below := proj.Input
	if f, ok := below.(*Filter); ok {
		filter, below = f, f.Input
	}
	tvf, ok := below.(*WindowTVF)
	if !ok {
		return nil, false, nil
	}
	nIn := tvf.Input.Schema().Len()
	// role of each group key: -1 an input key, 0..2 window_start/end/time.
	roles := make([]int, len(agg.Keys))
	var seen [3]bool
	for i, k := range agg.Keys {
		roles[i] = -1
		if i == eKey {
			continue
		}
		if c, ok := proj.Exprs[k].(*expr.Column); ok && c.Index >= nIn {
			roles[i] = c.Index - nIn
			seen[roles[i]] = true
		}
	}
	if !seen[0] || !seen[1] {
		return nil, false, parser.Errorf(pos, "an aggregate over a window TVF must GROUP BY window_start, window_end (and may add window_time and other keys)")
	}
	usesWindow := func(e expr.Expr) bool {
		found := false
		expr.VisitColumns(e, func(i int) { found = found || i >= nIn })
		return found
	}
	var input Node = tvf.Input
	if filter != nil {
		if usesWindow(filter.Cond) {
			return nil, false, parser.Errorf(pos, "a WHERE over a window TVF that is aggregated cannot use window_start, window_end or window_time yet: filter after the aggregation")
		}
		input = &Filter{Input: input, Cond: filter.Cond}
	}
	// The new pre-projection: the input keys, the aggregates' arguments,
	// the time attribute, then SESSION's partition columns.
	var pre []expr.Expr
	var names []string
	newIdx := map[int]int{} // old pre position → new
	var keys []int
	for i, k := range agg.Keys {
		if roles[i] >= 0 || i == eKey {
			continue
		}
		newIdx[k] = len(pre)
		keys = append(keys, len(pre))
		pre, names = append(pre, proj.Exprs[k]), append(names, proj.Names[k])
	}
	isKey := map[int]bool{}
	for _, k := range agg.Keys {
		isKey[k] = true
	}
	for i, x := range proj.Exprs {
		if isKey[i] {
			continue
		}
		if usesWindow(x) {
			return nil, false, parser.Errorf(pos, "aggregate arguments over a window TVF cannot use window_start, window_end or window_time yet")
		}
		newIdx[i] = len(pre)
		pre, names = append(pre, x), append(names, proj.Names[i])
	}
	spec := tvf.Spec
	inSch := tvf.Input.Schema()
	if !spec.Proctime {
		tc := inSch.Columns[spec.TimeCol]
		spec.TimeCol = len(pre)
		pre, names = append(pre, expr.NewColumn(tvf.Spec.TimeCol, tc.Type, tc.Name)), append(names, tc.Name)
	}
	if len(tvf.Partition) > 0 {
		// A session per partition and group key: the partition columns
		// join the keys (they are usually the group keys themselves).
		for _, p := range tvf.Partition {
			c := inSch.Columns[p]
			dup := false
			for _, k := range keys {
				if col, ok := pre[k].(*expr.Column); ok && col.Index == p {
					dup = true
				}
			}
			if dup {
				continue
			}
			return nil, false, parser.Errorf(pos, "SESSION ... PARTITION BY %s: the partition columns must also be GROUP BY keys", c.Name)
		}
	}
	aggs := make([]aggfunc.Call, len(agg.Aggs))
	for j, a := range agg.Aggs {
		if a.Arg >= 0 {
			a.Arg = newIdx[a.Arg]
		}
		aggs[j] = a
	}
	var wIn Node = &Project{Input: input, Exprs: pre, Names: names}
	if exp != nil {
		e, err := windowExpand(exp, wIn, agg, roles, newIdx, pos)
		if err != nil {
			return nil, false, err
		}
		wIn = e
		keys = append(keys, len(pre))
		names = append(names[:len(pre):len(pre)], "$e")
	}
	nk := len(keys)
	wnames := make([]string, 0, nk+len(aggs))
	for _, k := range keys {
		wnames = append(wnames, names[k])
	}
	wnames = append(wnames, agg.Names[len(agg.Keys):]...)
	w := &WindowAggregate{Input: wIn, Keys: keys, Spec: spec,
		TimeName: tvf.TimeName, Aggs: aggs, Names: wnames, Watermark: watermarkOf(tvf.Input), Zone: tvf.Zone}
	// The projection to the Aggregate's layout: its keys in order, then
	// its aggregates.
	ws := w.Schema()
	outs := make([]expr.Expr, 0, len(agg.Keys)+len(aggs))
	outNames := make([]string, 0, cap(outs))
	for i, k := range agg.Keys {
		idx := nk + roles[i]
		switch {
		case i == eKey:
			idx = nk - 1
		case roles[i] < 0:
			idx = newIdx[k]
		}
		c := ws.Columns[idx]
		outs, outNames = append(outs, expr.NewColumn(idx, c.Type, c.Name)), append(outNames, agg.Names[i])
	}
	for j := range aggs {
		c := ws.Columns[nk+3+j]
		outs, outNames = append(outs, expr.NewColumn(nk+3+j, c.Type, c.Name)), append(outNames, agg.Names[len(agg.Keys)+j])
	}
	return &Project{Input: w, Exprs: outs, Names: outNames}, true, nil
}

// windowExpand moves the Expand of grouping sets over a window TVF below
// the window aggregate: over its new input in, with the window columns
// (which every set must keep) left out of the sets.
func windowExpand(exp *Expand, in Node, agg *Aggregate, roles []int, newIdx map[int]int, pos parser.Pos) (Node, error) {
	roleOf := map[int]int{}
	for i, k := range agg.Keys {
		roleOf[k] = roles[i]
	}
	var keys []int
	posOf := map[int]int{} // position in exp.Keys → position in keys
	var window []int       // positions in exp.Keys of the window columns
	for j, k := range exp.Keys {
		if roleOf[k] >= 0 {
			window = append(window, j)
			continue
		}
		posOf[j] = len(keys)
		keys = append(keys, newIdx[k])
	}
	sets := make([][]int, len(exp.Sets))
	for i, set := range exp.Sets {
		for _, w := range window {
			if !slices.Contains(set, w) {
				return nil, parser.Errorf(pos, "every grouping set of a window aggregate must contain window_start and window_end (and window_time if grouped)")
			}
		}
		sets[i] = []int{}
		for _, j := range set {
			if p, ok := posOf[j]; ok {
				sets[i] = append(sets[i], p)
			}
		}
	}
	return &Expand{Input: in, Keys: keys, Sets: sets}, nil
}

// watermarkOf finds the watermark of the scan that n reads, for EXPLAIN.
func watermarkOf(n Node) string {
	if s, ok := n.(*Scan); ok {
		return s.WatermarkText
	}
	for _, k := range n.Children() {
		if w := watermarkOf(k); w != "" {
			return w
		}
	}
	return ""
}
