package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// Window joins, as Flink's: a join (inner, outer, semi or anti) of two
// windowed inputs whose keys include L.window_start = R.window_start and
// L.window_end = R.window_end. An input is windowed when it is a window TVF
// or the output of a window aggregate (also a window-attached one,
// window_attached.go), through projections and filters that pass the window
// columns on. The windowJoin rule (after key extraction) finds them
// (windowProps), checks that both have the same windows, marks the Join
// with a WindowJoinInfo and replaces each WindowTVF with a WindowAssign,
// which lowers to a stateless operator giving each row its windows (a
// window aggregate's rows carry theirs). The join lowers to exec.NewWindowJoin behind hash exchanges on
// all its keys (the window bounds included): each key's window is joined
// once when the watermark passes its end, and its state dropped.

// WindowJoinInfo marks a Join as a window join.
type WindowJoinInfo struct {
	// Spec and TimeName are each input's windows and time attribute.
	Spec     [2]exec.WindowSpec
	TimeName [2]string
	// End is each input's window_end column.
	End [2]int
	// Text renders each input's windows for EXPLAIN (a window aggregate's
	// output as windows attached to its window_start and window_end).
	Text [2]string
	// Err says why this join of two window TVFs cannot be planned ("": it
	// can); lowering reports it at the statement.
	Err string
}

// text renders the windows for EXPLAIN.
func (w *WindowJoinInfo) text() string {
	return "leftWindow=[" + w.Text[0] + "], rightWindow=[" + w.Text[1] + "]"
}

// WindowAssign gives each row of Input the windows of Spec, as a window
// TVF's rows: the input columns, then window_start, window_end and
// window_time. It replaces a WindowTVF below a window join.
type WindowAssign struct {
	TVF *WindowTVF
	// Err, when set, is why the window join above cannot be planned: the
	// inputs lower first, so the first to lower reports it.
	Err string
}

// Children returns the input.
func (n *WindowAssign) Children() []Node { return []Node{n.TVF.Input} }

// WithChildren replaces the input.
func (n *WindowAssign) WithChildren(k []Node) Node {
	t := *n.TVF
	t.Input = k[0]
	return &WindowAssign{TVF: &t, Err: n.Err}
}

// Schema is the window TVF's.
func (n *WindowAssign) Schema() types.Schema { return n.TVF.Schema() }

// String renders the node for EXPLAIN.
func (n *WindowAssign) String() string {
	return "LogicalWindowTableFunction(window=[" + windowText(n.TVF.Spec, n.TVF.TimeName) + "])"
}

// replaceTVF returns n with the window TVF found by windowProps replaced by
// a WindowAssign.
func replaceTVF(n Node, err string) Node {
	switch x := n.(type) {
	case *WindowTVF:
		return &WindowAssign{TVF: x, Err: err}
	case *Filter, *Project:
		return n.WithChildren([]Node{replaceTVF(n.Children()[0], err)})
	}
	return n
}

// windowJoin marks a keyed join of two windowed inputs (window TVFs or
// window aggregates' outputs, windowProps) as a window join. A join of two
// window TVFs must be one; a join with a window aggregate's output is one
// when its keys pair both window bounds and both sides have the same
// windows, else it stays a regular join.
func windowJoin(n Node) (Node, bool, error) {
	j, ok := n.(*Join)
	if !ok || !j.Keyed || j.Window != nil || j.Interval != nil {
		return n, false, nil
	}
	lw, lok := windowProps(j.Left)
	rw, rok := windowProps(j.Right)
	if !lok || !rok {
		return n, false, nil
	}
	info := &WindowJoinInfo{Spec: [2]exec.WindowSpec{lw.spec, rw.spec}, TimeName: [2]string{lw.timeName, rw.timeName}, End: [2]int{lw.we, rw.we},
		Text: [2]string{lw.text(j.Left.Schema()), rw.text(j.Right.Schema())}}
	pair := func(l, r int) bool {
		for i := range j.LeftKeys {
			if l >= 0 && r >= 0 && j.LeftKeys[i] == l && j.RightKeys[i] == r {
				return true
			}
		}
		return false
	}
	ls, rs := lw.spec, rw.spec
	switch {
	case !pair(lw.ws, rw.ws) || !pair(lw.we, rw.we):
		info.Err = "a join of two window TVFs must be a window join: join ON L.window_start = R.window_start AND L.window_end = R.window_end (and any other keys)"
	case ls.Kind == exec.WindowSession || rs.Kind == exec.WindowSession:
		info.Err = "window joins over SESSION windows are not supported yet"
	case ls.Proctime || rs.Proctime:
		info.Err = "window joins in processing time are not supported yet: use a rowtime attribute in DESCRIPTOR"
	case ls.Kind != rs.Kind || ls.Size != rs.Size || ls.Slide != rs.Slide || ls.Offset != rs.Offset:
		info.Err = fmt.Sprintf("a window join needs the same windows on both sides, but the left has %s and the right %s",
			info.Text[0], info.Text[1])
	}
	if info.Err != "" && (lw.tvf == nil || rw.tvf == nil) {
		return n, false, nil // over a window aggregate's output: a regular join
	}
	c := *j
	c.Window = info
	c.Left, c.Right = replaceTVF(j.Left, info.Err), replaceTVF(j.Right, info.Err)
	return &c, true, nil
}

// windowAssignNode is a WindowAssign, chained to its input.
type windowAssignNode struct {
	physBase
	x *WindowAssign
}

func (x *WindowAssign) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if x.Err != "" {
		return nil, parser.Errorf(b.pos, "%s", x.Err)
	}
	if in := kids[0].traits().mode; !in.IsInsertOnly() {
		return nil, parser.Errorf(b.pos, "a window TVF takes insert-only input, and its input has %s", changeWhat(in))
	}
	return &windowAssignNode{x: x, physBase: physBase{kids: kids, tr: traits{schema: x.Schema(),
		mode: connector.ModeOf(types.Insert), parallelism: kids[0].traits().parallelism}}}, nil
}

func (p *windowAssignNode) operator() {}

func (p *windowAssignNode) desc() string {
	return "WindowTableFunction(window=[" + windowText(p.x.TVF.Spec, p.x.TVF.TimeName) + "])"
}

func (p *windowAssignNode) canon() string {
	s := p.x.TVF.Spec
	c := fmt.Sprintf("windowassign %d %d %d %d %d %v", s.Kind, s.Size, s.Slide, s.Offset, s.TimeCol, s.LTZ)
	if s.Proctime {
		// Only then, so that the ids of event-time ones stay as they were.
		c += " proctime"
	}
	return c
}

func (p *windowAssignNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: exec.NewWindowAssign(p.x.TVF.Spec)}), nil
}

// windowJoinNode is a window join behind hash exchanges on its keys (the
// window bounds among them). Its output is insert-only.
type windowJoinNode struct {
	physBase
	join                    *Join
	leftSchema, rightSchema types.Schema
}

func (x *Join) lowerWindow(b *physBuilder, kids []physNode) (physNode, error) {
	if x.Window.Err != "" {
		return nil, parser.Errorf(b.pos, "%s", x.Window.Err)
	}
	for i, k := range kids {
		if m := k.traits().mode; !m.IsInsertOnly() {
			return nil, parser.Errorf(b.pos, "a window join needs insert-only inputs, but its %s input has %s", [...]string{"left", "right"}[i], changeWhat(m))
		}
	}
	keys := [2][]int{x.LeftKeys, x.RightKeys}
	var exs [2]physNode
	for i := range 2 {
		exs[i] = newExchange(kids[i], exec.Partitioning{Kind: exec.Hash, Keys: keys[i]}, b.parallelism)
	}
	n := &windowJoinNode{join: x, leftSchema: kids[0].traits().schema, rightSchema: kids[1].traits().schema}
	n.physBase = physBase{kids: []physNode{exs[0], exs[1]}, tr: traits{schema: x.Schema(),
		mode: connector.ModeOf(types.Insert), parallelism: b.parallelism}}
	return n, nil
}

func (p *windowJoinNode) operator() {}

func (p *windowJoinNode) desc() string {
	var keys []string
	for i := range p.join.LeftKeys {
		keys = append(keys, p.leftSchema.Columns[p.join.LeftKeys[i]].Name+" = "+p.rightSchema.Columns[p.join.RightKeys[i]].Name)
	}
	s := "WindowJoin(joinType=[" + p.join.Kind.String() + "], keys=[" + strings.Join(keys, ", ") + "], " + p.join.Window.text()
	if p.join.Cond != nil {
		s += ", where=[" + p.join.Cond.String() + "]"
	}
	return s + ", select=[" + fields(p.tr.schema) + "], emit=[once per window, when the watermark passes window_end; later rows are dropped and counted])"
}

func (p *windowJoinNode) canon() string {
	s := fmt.Sprintf("windowjoin %d keys=%v,%v ends=%v", p.join.Kind, p.join.LeftKeys, p.join.RightKeys, p.join.Window.End)
	if p.join.Cond != nil {
		s += " where " + digest(p.join.Cond)
	}
	return s
}

func (p *windowJoinNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	v := &exec.Vertex{Parallelism: p.tr.parallelism}
	for port, outs := range ins {
		for _, o := range outs {
			part := exec.Partitioning{Kind: exec.Forward}
			switch {
			case o.part != nil:
				part = *o.part
			case b.g.Vertices[o.vertex].Parallelism != v.Parallelism:
				part = exec.Partitioning{Kind: exec.Rebalance}
			}
			v.Inputs = append(v.Inputs, exec.Input{From: o.vertex, Partition: part, Port: port})
		}
	}
	kinds := func(s types.Schema) []types.Kind {
		ks := make([]types.Kind, s.Len())
		for i, c := range s.Columns {
			ks[i] = c.Type.Kind
		}
		return ks
	}
	typ := exec.InnerJoin
	if !p.join.Kind.semi() {
		typ = exec.JoinType(p.join.Kind)
	}
	spec := exec.WindowJoinSpec{
		JoinSpec: exec.JoinSpec{Type: typ,
			Left:     exec.JoinSide{Keys: p.join.LeftKeys, Kinds: kinds(p.leftSchema)},
			Right:    exec.JoinSide{Keys: p.join.RightKeys, Kinds: kinds(p.rightSchema)},
			Residual: p.join.Cond},
		Semi: p.join.Kind == JoinSemi, Anti: p.join.Kind == JoinAnti,
		LeftEnd: p.join.Window.End[0], RightEnd: p.join.Window.End[1],
	}
	v.Operators = append(v.Operators, exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewWindowJoin(spec)})
	b.g.Vertices = append(b.g.Vertices, v)
	return []outlet{{vertex: len(b.g.Vertices) - 1}}, nil
}
