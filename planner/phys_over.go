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
// partition to one subtask (one subtask without a partition). Over
// insert-only input ordered by a time attribute it takes and emits
// inserts only (Flink's operator). Over updating input, or ordered by
// other columns, it is the updating form (exec.NewOverAggUpdating): rows
// processed on arrival, each change re-emitting the rows whose frame it
// touches, an updating changelog out.
type overNode struct {
	physBase
	over     *OverAgg
	rowtime  bool
	updating bool
}

func (x *OverAgg) lower(b *physBuilder, kids []physNode) (physNode, error) {
	in := kids[0].traits()
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if len(x.Partition) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: x.Partition}, b.parallelism
	}
	if in.mode.IsInsertOnly() && x.TimeCol >= 0 {
		ex := newExchange(kids[0], part, par)
		rowtime := x.Input.Schema().Columns[x.TimeCol].Type.Attr == types.Rowtime
		return &overNode{
			physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: connector.ModeInsertOnly, parallelism: par}},
			over:     x, rowtime: rowtime,
		}, nil
	}
	why := "ordered by " + (&Rank{Input: x.Input, Order: x.Order}).orderText() + ", not by one time attribute ascending"
	if !in.mode.IsInsertOnly() {
		why = "over updating input (" + changeWhat(in.mode) + ")"
	}
	if !x.Frame.IsRows && !x.Frame.Unbounded {
		return nil, parser.Errorf(x.OrderPos, "%s %s takes ROWS BETWEEN n PRECEDING AND CURRENT ROW or UNBOUNDED PRECEDING, not %s", x.desc(), why, x.FrameText)
	}
	if !in.mode.IsInsertOnly() {
		for _, o := range x.Order {
			if c := x.Input.Schema().Columns[o.Col]; c.Type.Attr == types.Proctime {
				return nil, parser.Errorf(x.OrderPos, "%s over updating input (%s) cannot be ordered by the processing-time attribute %s: a retraction would not find its row (its time is read again); order by a column of the input", x.desc(), changeWhat(in.mode), c.Name)
			}
		}
	}
	if in.mode.Contains(types.UpdateAfter) && !in.mode.Contains(types.UpdateBefore) {
		return nil, parser.Errorf(x.OrderPos, "%s over an upsert changelog (%s, no -U) is not supported", x.desc(), in.mode.Kinds())
	}
	ex := newExchange(kids[0], part, par)
	et := ex.traits()
	return &overNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: connector.ModeRetract,
			uniqueKeys: et.uniqueKeys, upsertKeys: et.upsertKeys, parallelism: par}},
		over: x, updating: true,
	}, nil
}

func (p *overNode) operator() {}

func (p *overNode) desc() string {
	if p.updating {
		return "Updating" + p.over.desc()
	}
	return p.over.desc()
}

func (p *overNode) updateCause() string { return p.desc() }

func (p *overNode) canon() string {
	var b strings.Builder
	if p.updating {
		fmt.Fprintf(&b, "overupd part=%v order=%v frame=%+v", p.over.Partition, p.over.Order, p.over.Frame)
	} else {
		fmt.Fprintf(&b, "over part=%v time=%d rowtime=%v frame=%+v", p.over.Partition, p.over.TimeCol, p.rowtime, p.over.Frame)
	}
	for _, c := range p.over.Calls {
		fmt.Fprintf(&b, " | %d arg=%d %s -> %s", c.Func.Kind, c.Arg, c.ArgType, c.Type)
	}
	return b.String()
}

func (p *overNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	x := p.over
	spec := exec.OverSpec{Partition: x.Partition, TimeCol: x.TimeCol, Rowtime: p.rowtime, Frame: x.Frame, Calls: x.Calls,
		Kinds: kindsOf(x.Input.Schema()), Order: x.Order}
	newOp := exec.NewOverAgg(spec)
	if p.updating {
		newOp = exec.NewOverAggUpdating(spec)
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: newOp}), nil
}
