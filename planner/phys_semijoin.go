package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// semiJoinNode is a semi or anti join (IN, EXISTS and their negations)
// behind two hash exchanges on the join keys (one subtask when there are
// none). Its output is the left rows, so it keeps the left input's unique
// and upsert keys. Its mode, as the changes it emits: a semi join passes
// the left input's kinds on, plus +I and -D when the right input is
// updating (a left row goes when its last match does); an anti join adds
// +I and -D whatever its inputs (a right row that arrives takes back the
// left rows it matches), so it is updating even over insert-only inputs,
// as in Flink.
type semiJoinNode struct {
	physBase
	join          *Join
	layout        [2]exec.JoinLayout
	uniqueKey     [2][]int
	leftW, rightW int
	leftSchema    types.Schema
	rightSchema   types.Schema
}

func (x *Join) lowerSemi(b *physBuilder, kids []physNode) (physNode, error) {
	for i, k := range kids {
		m := k.traits().mode
		if m.Contains(types.UpdateAfter) && !m.Contains(types.UpdateBefore) {
			return nil, parser.Errorf(b.pos, "a %s over an upsert changelog (%s input: %s, no -U) is not supported yet",
				x.Kind, [...]string{"left", "right"}[i], m.Kinds())
		}
	}
	keys := [2][]int{x.LeftKeys, x.RightKeys}
	par := 1
	if len(keys[0]) > 0 {
		par = b.parallelism
	}
	var exs [2]physNode
	for i := range 2 {
		p := exec.Partitioning{Kind: exec.Global}
		if len(keys[i]) > 0 {
			p = exec.Partitioning{Kind: exec.Hash, Keys: keys[i]}
		}
		exs[i] = newExchange(kids[i], p, par)
	}
	n := &semiJoinNode{join: x, leftSchema: kids[0].traits().schema, rightSchema: kids[1].traits().schema}
	n.leftW, n.rightW = n.leftSchema.Len(), n.rightSchema.Len()
	for i := range 2 {
		n.layout[i], n.uniqueKey[i] = joinLayout(exs[i].traits().uniqueKeys, keys[i])
	}
	lt, rt := exs[0].traits(), exs[1].traits()
	mode := lt.mode
	if x.Kind == JoinAnti || !rt.mode.IsInsertOnly() {
		mode |= connector.ModeOf(types.Insert, types.Delete)
	}
	n.physBase = physBase{kids: []physNode{exs[0], exs[1]}, tr: traits{schema: x.Schema(), mode: mode,
		uniqueKeys: lt.uniqueKeys, upsertKeys: lt.upsertKeys, parallelism: par}}
	return n, nil
}

func (p *semiJoinNode) operator() {}

func (p *semiJoinNode) updateCause() string { return p.desc() }

func (p *semiJoinNode) desc() string {
	var keys []string
	for i := range p.join.LeftKeys {
		keys = append(keys, p.leftSchema.Columns[p.join.LeftKeys[i]].Name+" = "+p.rightSchema.Columns[p.join.RightKeys[i]].Name)
	}
	s := "Join(joinType=[" + p.join.Kind.String() + "], keys=[" + strings.Join(keys, ", ") + "]"
	if p.join.Cond != nil {
		s += ", where=[" + p.join.Cond.String() + "]"
	}
	s += ", select=[" + fields(p.tr.schema) + "]"
	for i, side := range []string{"left", "right"} {
		s += ", " + side + "InputSpec=[" + p.layout[i].String()
		if p.layout[i] == exec.HasUniqueKey {
			s += "(" + keyNames(p.uniqueKey[i], []types.Schema{p.leftSchema, p.rightSchema}[i], 0) + ")"
		}
		s += "]"
	}
	return s + ")"
}

// canon describes the join by its kind, keys, residual and state layouts.
func (p *semiJoinNode) canon() string {
	s := fmt.Sprintf("semijoin %d keys=%v,%v layouts=%d,%d uk=%v,%v", p.join.Kind, p.join.LeftKeys, p.join.RightKeys,
		p.layout[0], p.layout[1], p.uniqueKey[0], p.uniqueKey[1])
	if p.join.Cond != nil {
		s += " where " + digest(p.join.Cond)
	}
	return s
}

func (p *semiJoinNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
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
	spec := exec.SemiJoinSpec{
		Anti:     p.join.Kind == JoinAnti,
		Left:     exec.JoinSide{Keys: p.join.LeftKeys, Kinds: kinds(p.leftSchema), Layout: p.layout[0], UniqueKey: p.uniqueKey[0]},
		Right:    exec.JoinSide{Keys: p.join.RightKeys, Kinds: kinds(p.rightSchema), Layout: p.layout[1], UniqueKey: p.uniqueKey[1]},
		Residual: p.join.Cond,
	}
	v.Operators = append(v.Operators, exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewSemiJoin(spec)})
	b.g.Vertices = append(b.g.Vertices, v)
	return []outlet{{vertex: len(b.g.Vertices) - 1}}, nil
}

// semiSchema is a semi or anti join's output: the left columns, their
// time attributes made plain timestamps (as for a regular join).
func semiSchema(l types.Schema) types.Schema {
	cols := make([]types.Column, l.Len())
	for i, c := range l.Columns {
		c.Type = c.Type.Plain()
		cols[i] = c
	}
	return types.Schema{Columns: cols}
}

// dropKeyColumns projects the first w columns of n (a semi join whose left
// input got computed key columns).
func dropKeyColumns(n Node, w int) Node {
	sch := n.Schema()
	exprs := make([]expr.Expr, w)
	names := make([]string, w)
	for i := range w {
		c := sch.Columns[i]
		exprs[i], names[i] = expr.NewColumn(i, c.Type, c.Name), c.Name
	}
	return &Project{Input: n, Exprs: exprs, Names: names}
}
