package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// overNode is an OverAggregate behind the exchange that brings each
// partition to one subtask (one subtask without a partition). It takes
// and emits inserts only.
type overNode struct {
	physBase
	over    *OverAgg
	rowtime bool
}

func (x *OverAgg) lower(b *physBuilder, kids []physNode) (physNode, error) {
	in := kids[0].traits()
	if !in.mode.IsInsertOnly() {
		return nil, parser.Errorf(b.pos, "%s over updating input (%s) is not supported yet: its input must be insert-only", x.desc(), changeWhat(in.mode))
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if len(x.Partition) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: x.Partition}, b.parallelism
	}
	ex := newExchange(kids[0], part, par)
	rowtime := x.Input.Schema().Columns[x.TimeCol].Type.Attr == types.Rowtime
	return &overNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: connector.ModeInsertOnly, parallelism: par}},
		over:     x, rowtime: rowtime,
	}, nil
}

func (p *overNode) operator() {}

func (p *overNode) desc() string { return p.over.desc() }

func (p *overNode) canon() string {
	var b strings.Builder
	fmt.Fprintf(&b, "over part=%v time=%d rowtime=%v frame=%+v", p.over.Partition, p.over.TimeCol, p.rowtime, p.over.Frame)
	for _, c := range p.over.Calls {
		fmt.Fprintf(&b, " | %d arg=%d %s -> %s", c.Func.Kind, c.Arg, c.ArgType, c.Type)
	}
	return b.String()
}

func (p *overNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	x := p.over
	spec := exec.OverSpec{Partition: x.Partition, TimeCol: x.TimeCol, Rowtime: p.rowtime, Frame: x.Frame, Calls: x.Calls,
		Kinds: kindsOf(x.Input.Schema())}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewOverAgg(spec)}), nil
}
