package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// temporalJoinNode is an event-time temporal join behind a hash exchange
// of each input on the join key. Insert-only output; it keeps its left
// rows until the watermark passes them and the right versions by time.
type temporalJoinNode struct {
	physBase
	join   *TemporalJoin
	leftW  int
	rightW int
}

// lookupJoinNode is a lookup join chained to its (left) input: no
// exchange, the whole table in memory in each subtask. Its mode is its
// input's.
type lookupJoinNode struct {
	physBase
	join   *TemporalJoin
	scan   *Scan
	open   func() (connector.Source, error)
	reload time.Duration
	leftW  int
}

func (x *TemporalJoin) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if !x.Keyed {
		return nil, fmt.Errorf("planner: temporal join without extracted keys")
	}
	if x.Lookup {
		return x.lowerLookup(b, kids[0])
	}
	if m := kids[0].traits().mode; !m.IsInsertOnly() {
		return nil, parser.Errorf(x.Pos, "an event-time temporal join needs an insert-only left input, but it has %s", changeWhat(m))
	}
	rt := kids[1].traits()
	if len(rt.uniqueKeys) == 0 {
		return nil, parser.Errorf(x.Pos, "'%s' is not a versioned table: an event-time temporal join needs a primary key on its right side (PRIMARY KEY (…) NOT ENFORCED, or a view that keeps the last row per key with ROW_NUMBER)", x.Table)
	}
	if len(keysWithin(rt.uniqueKeys, x.RightKeyCols)) == 0 {
		rs := kids[1].traits().schema
		return nil, parser.Errorf(x.Pos, "the join key of a temporal join must contain the primary key of the versioned table '%s' (%s), but it is (%s)", x.Table, keyNames(rt.uniqueKeys[0], rs, 0), keyNames(x.RightKeys, rs, 0))
	}
	var exs [2]physNode
	for i, keys := range [][]int{x.LeftKeys, x.RightKeys} {
		exs[i] = newExchange(kids[i], exec.Partitioning{Kind: exec.Hash, Keys: keys}, b.parallelism)
	}
	n := &temporalJoinNode{join: x, leftW: kids[0].traits().schema.Len(), rightW: rt.schema.Len()}
	n.physBase = physBase{kids: []physNode{exs[0], exs[1]}, tr: traits{schema: x.Schema(),
		mode: connector.ModeOf(types.Insert), parallelism: b.parallelism}}
	return n, nil
}

func (x *TemporalJoin) lowerLookup(b *physBuilder, in physNode) (physNode, error) {
	scan, ok := x.Right.(*Scan)
	if !ok {
		return nil, parser.Errorf(x.Pos, "a lookup join reads a table, but '%s' is not one", x.Table)
	}
	src, err := b.p.Connectors.Source(scan.Table, b.p.Env)
	if err != nil {
		return nil, parser.Errorf(x.Pos, "lookup table '%s': %s", x.Table, errMsg(err))
	}
	if !src.Bounded() || !connector.SourceChangelogMode(src).IsInsertOnly() {
		return nil, parser.Errorf(x.Pos, "lookup table '%s' (%s) must be bounded and insert-only: a lookup join loads the whole table into memory (use a 'filesystem' table)", x.Table, connectorText(scan.Table))
	}
	reload, err := connector.LookupReload(scan.Table)
	if err != nil {
		return nil, parser.Errorf(x.Pos, "lookup table '%s': %s", x.Table, errMsg(err))
	}
	t, p := scan.Table, b.p
	n := &lookupJoinNode{join: x, scan: scan, reload: reload, leftW: in.traits().schema.Len(),
		open: func() (connector.Source, error) { return p.Connectors.Source(t, p.Env) }}
	it := in.traits()
	n.physBase = physBase{kids: []physNode{in}, tr: traits{schema: x.Schema(), mode: it.mode, parallelism: it.parallelism}}
	return n, nil
}

// keysText renders the key pairs as "l = r, …" over the output schema.
func (x *TemporalJoin) keysTextAt(sch types.Schema, leftW int) string {
	keys := make([]string, len(x.LeftKeys))
	for i := range x.LeftKeys {
		keys[i] = sch.Columns[x.LeftKeys[i]].Name + " = " + sch.Columns[leftW+x.RightKeys[i]].Name
	}
	return strings.Join(keys, ", ")
}

func (p *temporalJoinNode) operator() {}

func (p *temporalJoinNode) desc() string {
	sch := p.tr.schema
	s := "TemporalJoin(joinType=[" + p.join.Kind.String() + "], keys=[" + p.join.keysTextAt(sch, p.leftW) +
		"], leftTime=[" + sch.Columns[p.join.LeftTime].Name + "], rightTime=[" + sch.Columns[p.leftW+p.join.RightTime].Name + "]"
	if p.join.Cond != nil {
		s += ", where=[" + p.join.Cond.String() + "]"
	}
	return s + ", select=[" + fields(sch) + "], state=[left rows until the watermark, right versions by time])"
}

// canon describes the join by its kind, keys, times and residual.
func (p *temporalJoinNode) canon() string {
	s := fmt.Sprintf("temporaljoin %d keys=%v,%v times=%d,%d", p.join.Kind, p.join.LeftKeys, p.join.RightKeys, p.join.LeftTime, p.join.RightTime)
	if p.join.Cond != nil {
		s += " where " + digest(p.join.Cond)
	}
	return s
}

func (p *temporalJoinNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
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
	spec := exec.TemporalJoinSpec{JoinSpec: exec.JoinSpec{
		Type:     exec.JoinType(p.join.Kind),
		Left:     exec.JoinSide{Keys: p.join.LeftKeys, Kinds: kindsOf(p.kids[0].traits().schema)},
		Right:    exec.JoinSide{Keys: p.join.RightKeys, Kinds: kindsOf(p.kids[1].traits().schema)},
		Residual: p.join.Cond,
	}, LeftTime: p.join.LeftTime, RightTime: p.join.RightTime}
	v.Operators = append(v.Operators, exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewTemporalJoin(spec)})
	b.g.Vertices = append(b.g.Vertices, v)
	return []outlet{{vertex: len(b.g.Vertices) - 1}}, nil
}

func (p *lookupJoinNode) operator() {}

func (p *lookupJoinNode) desc() string {
	sch := p.tr.schema
	s := "LookupJoin(table=[" + p.join.Table + "], joinType=[" + p.join.Kind.String() + "], lookup=[" + p.join.keysTextAt(sch, p.leftW) + "]"
	if p.join.Cond != nil {
		s += ", where=[" + p.join.Cond.String() + "]"
	}
	s += ", select=[" + fields(sch) + "], cache=[FULL, "
	if p.reload == 0 {
		s += "loaded once"
	} else {
		s += "reloaded every " + durationText(p.reload)
	}
	return s + "])"
}

// canon describes the join by its table, kind, keys and residual; the
// table is not state, so its options are left out.
func (p *lookupJoinNode) canon() string {
	s := fmt.Sprintf("lookupjoin %s %s %d keys=%v,%v", key(p.join.Table), p.scan.Table.Schema, p.join.Kind, p.join.LeftKeys, p.join.RightKeys)
	for _, e := range p.join.RightExtra {
		s += " extra " + digest(e)
	}
	if p.join.Cond != nil {
		s += " where " + digest(p.join.Cond)
	}
	return s
}

func (p *lookupJoinNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	spec := exec.LookupJoinSpec{
		Type:     exec.JoinType(p.join.Kind),
		LeftKeys: p.join.LeftKeys, RightKeys: p.join.RightKeys,
		LeftWidth: p.leftW, RightWidth: p.tr.schema.Len() - p.leftW,
		Residual: p.join.Cond, Open: p.open, SourceWidth: p.scan.Table.Schema.Len(),
		Computed: p.scan.Computed, Extra: p.join.RightExtra, Reload: p.reload, Table: p.join.Table,
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewLookupJoin(spec)}), nil
}

// durationText renders d as a Flink duration: "10 min", "1 h", "30 s", "250 ms".
func durationText(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return fmt.Sprintf("%d ms", d/time.Millisecond)
}
