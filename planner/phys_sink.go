package planner

import (
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
)

// sinkNode writes its input into a table: the end of a vertex's chain.
// It keeps its input's mode; it is checked against what the sink accepts
// when made (checkSinkMode). In front of it may come a NOT NULL enforcer
// and, when the sink's parallelism differs from its input's, an exchange
// (hash on the primary key for an updating input, else rebalance).
type sinkNode struct {
	physBase
	sink  connector.Sink
	table string
}

func (x *Sink) lower(b *physBuilder, kids []physNode) (physNode, error) {
	in := kids[0]
	mode := in.traits().mode
	upd := !mode.IsInsertOnly()
	sink, err := b.sinks(x, upd)
	if err != nil {
		return nil, err
	}
	if err := checkSinkMode(x, sink, in); err != nil {
		return nil, parser.Errorf(b.pos, "%s", err.Error())
	}
	if enf, err := b.notNullEnforcer(x, in); err != nil {
		return nil, err
	} else if enf != nil {
		in = enf
	}
	par := in.traits().parallelism
	if sp := sink.Parallelism(); sp > 0 && sp != par {
		par = sp
		part := exec.Partitioning{Kind: exec.Rebalance}
		if x.Table != nil && len(x.Table.PrimaryKey) > 0 && upd {
			part = exec.Partitioning{Kind: exec.Hash, Keys: x.Table.PrimaryKey}
		}
		in = newExchange(in, part, sp)
	}
	it := in.traits()
	return &sinkNode{
		physBase: physBase{kids: []physNode{in}, tr: traits{schema: x.Schema(), mode: mode,
			uniqueKeys: it.uniqueKeys, upsertKeys: it.upsertKeys, parallelism: par}},
		sink: sink, table: x.Name,
	}, nil
}

func (p *sinkNode) desc() string {
	return "Sink(table=[" + p.table + "], fields=[" + fields(p.tr.schema) + "])"
}

func (p *sinkNode) canon() string { return "sink " + key(p.table) }

func (p *sinkNode) addTo(b *graphBuilder, _ string, ins [][]outlet) ([]outlet, error) {
	vi := b.attach(p.tr.parallelism, ins[0])
	v := b.g.Vertices[vi]
	v.Sink, v.SinkName = p.sink, p.table
	return []outlet{{vertex: vi}}, nil
}
