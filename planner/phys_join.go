package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// joinNode is a regular join behind two hash exchanges on the join keys
// (one subtask when there are none). Its mode is its inputs' together,
// plus +I and -D for an outer join (the NULL-padded rows come and go);
// each side keeps its rows in the layout its unique keys allow.
type joinNode struct {
	physBase
	join          *Join
	layout        [2]exec.JoinLayout
	uniqueKey     [2][]int // the unique key a HasUniqueKey side keeps rows by
	leftW, rightW int
	// retention bounds a side's rows by the other input's watermark
	// (retention.go; nil: none).
	retention [2]*sideRetention
}

func (x *Join) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if !x.Keyed {
		return nil, fmt.Errorf("planner: join without extracted keys")
	}
	if x.Window != nil {
		return x.lowerWindow(b, kids)
	}
	if x.Kind.semi() {
		return x.lowerSemi(b, kids)
	}
	for i, k := range kids {
		m := k.traits().mode
		if x.Interval != nil && !m.IsInsertOnly() {
			return nil, parser.Errorf(b.pos, "an interval join needs insert-only inputs, but its %s input has %s: join without the time bounds, or on insert-only input", [...]string{"left", "right"}[i], changeWhat(m))
		}
		if m.Contains(types.UpdateAfter) && !m.Contains(types.UpdateBefore) {
			return nil, parser.Errorf(b.pos, "a join over an upsert changelog (%s input: %s, no -U) is not supported yet", [...]string{"left", "right"}[i], m.Kinds())
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
	n := &joinNode{join: x, leftW: kids[0].traits().schema.Len(), rightW: kids[1].traits().schema.Len(),
		retention: joinRetention(x, kids)}
	for i := range 2 {
		n.layout[i], n.uniqueKey[i] = joinLayout(exs[i].traits().uniqueKeys, keys[i])
	}
	lt, rt := exs[0].traits(), exs[1].traits()
	mode := lt.mode.Union(rt.mode)
	if x.Kind != JoinInner && x.Interval == nil {
		mode |= connector.ModeOf(types.Insert, types.Delete)
	}
	n.physBase = physBase{kids: []physNode{exs[0], exs[1]}, tr: traits{schema: x.Schema(), mode: mode,
		uniqueKeys:  joinKeys(x.Kind, lt.uniqueKeys, rt.uniqueKeys, n.layout, n.leftW),
		upsertKeys:  joinKeys(x.Kind, lt.upsertKeys, rt.upsertKeys, n.layout, n.leftW),
		parallelism: par}}
	return n, nil
}

// joinLayout picks a side's state layout from its unique keys: one row per
// join key if a unique key lies within the join key, one row per unique
// key if it has one (the shortest), else rows with counts.
func joinLayout(unique keySet, joinKey []int) (exec.JoinLayout, []int) {
	if len(joinKey) > 0 && len(keysWithin(unique, joinKey)) > 0 {
		return exec.JoinKeyContainsUniqueKey, nil
	}
	var best []int
	for _, k := range unique {
		if best == nil || len(k) < len(best) {
			best = k
		}
	}
	if best != nil {
		return exec.HasUniqueKey, best
	}
	return exec.NoUniqueKey, nil
}

// keysWithin keeps the keys all of whose columns are in cols.
func keysWithin(ks keySet, cols []int) keySet {
	var out keySet
	for _, k := range ks {
		if len(k) > 0 && !slices.ContainsFunc(k, func(c int) bool { return !slices.Contains(cols, c) }) {
			out = append(out, k)
		}
	}
	return out
}

// joinKeys derives a join's keys (unique or upsert, from the inputs' of
// the same sort): a left key with a right key is one; a side's key alone
// is one when each of its rows matches at most one row of the other side
// (the other side keeps one row per join key) and the other side is not
// preserved by the join (it adds no NULL-padded rows).
func joinKeys(kind JoinKind, left, right keySet, layout [2]exec.JoinLayout, wl int) keySet {
	var out keySet
	shift := func(k []int) []int {
		s := make([]int, len(k))
		for i, c := range k {
			s[i] = c + wl
		}
		return s
	}
	for _, l := range left {
		for _, r := range right {
			out = append(out, append(slices.Clone(l), shift(r)...))
		}
	}
	if layout[1] == exec.JoinKeyContainsUniqueKey && !kind.rightOuter() {
		out = append(out, left...)
	}
	if layout[0] == exec.JoinKeyContainsUniqueKey && !kind.leftOuter() {
		for _, r := range right {
			out = append(out, shift(r))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return normKeys(out)
}

func (p *joinNode) operator() {}

func (p *joinNode) updateCause() string { return p.desc() }

func (p *joinNode) desc() string {
	sch := p.tr.schema
	var keys []string
	for i := range p.join.LeftKeys {
		keys = append(keys, sch.Columns[p.join.LeftKeys[i]].Name+" = "+sch.Columns[p.leftW+p.join.RightKeys[i]].Name)
	}
	if p.join.Interval != nil {
		s := "IntervalJoin(joinType=[" + p.join.Kind.String() + "], keys=[" + strings.Join(keys, ", ") + "], " + p.join.intervalText()
		if p.join.Cond != nil {
			s += ", where=[" + p.join.Cond.String() + "]"
		}
		return s + ", select=[" + fields(sch) + "], state=[rows by time, dropped as the watermark passes])"
	}
	s := "Join(joinType=[" + p.join.Kind.String() + "], keys=[" + strings.Join(keys, ", ") + "]"
	if p.join.Cond != nil {
		s += ", where=[" + p.join.Cond.String() + "]"
	}
	s += ", select=[" + fields(sch) + "]"
	for i, side := range []string{"left", "right"} {
		s += ", " + side + "InputSpec=[" + p.layout[i].String()
		if p.layout[i] == exec.HasUniqueKey {
			s += "(" + keyNames(p.uniqueKey[i], sch, []int{0, p.leftW}[i]) + ")"
		}
		s += "]"
	}
	for i, side := range []string{"left", "right"} {
		if r := p.retention[i]; r != nil {
			s += ", " + side + "StateRetention=[" + r.text + "]"
		}
	}
	return s + ")"
}

func keyNames(k []int, sch types.Schema, off int) string {
	names := make([]string, len(k))
	for i, c := range k {
		names[i] = sch.Columns[off+c].Name
	}
	return strings.Join(names, ", ")
}

// canon describes the join by its kind, keys, residual and state layouts
// (a layout is the format of its state). A retention bound is left out:
// it changes which rows are kept, not how, and a state kept with or
// without one restores into the other.
func (p *joinNode) canon() string {
	s := fmt.Sprintf("join %d keys=%v,%v layouts=%d,%d uk=%v,%v", p.join.Kind, p.join.LeftKeys, p.join.RightKeys,
		p.layout[0], p.layout[1], p.uniqueKey[0], p.uniqueKey[1])
	if p.join.Cond != nil {
		s += " where " + digest(p.join.Cond)
	}
	if iv := p.join.Interval; iv != nil {
		s += fmt.Sprintf(" interval %d %d [%d, %d]", iv.LeftTime, iv.RightTime, iv.Lower, iv.Upper)
	}
	return s
}

func (p *joinNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
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
	spec := exec.JoinSpec{
		Type:     exec.JoinType(p.join.Kind),
		Left:     exec.JoinSide{Keys: p.join.LeftKeys, Kinds: kinds(p.kids[0].traits().schema), Layout: p.layout[0], UniqueKey: p.uniqueKey[0]},
		Right:    exec.JoinSide{Keys: p.join.RightKeys, Kinds: kinds(p.kids[1].traits().schema), Layout: p.layout[1], UniqueKey: p.uniqueKey[1]},
		Residual: p.join.Cond,
	}
	for i, r := range p.retention {
		if r != nil {
			spec.Retention[i] = &r.spec
		}
	}
	newOp := exec.NewJoin(spec)
	if iv := p.join.Interval; iv != nil {
		newOp = exec.NewIntervalJoin(exec.IntervalJoinSpec{JoinSpec: spec, LeftTime: iv.LeftTime, RightTime: iv.RightTime, Lower: iv.Lower, Upper: iv.Upper})
	}
	v.Operators = append(v.Operators, exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: newOp})
	b.g.Vertices = append(b.g.Vertices, v)
	return []outlet{{vertex: len(b.g.Vertices) - 1}}, nil
}
