package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// aggNode is a GroupAggregate behind the exchange that brings each group
// to one subtask (hash on the keys; one subtask for a global aggregate).
// It emits +I, -U and +U, and -D too when its input has updates or
// deletes; its group key is its unique and upsert key (a global
// aggregate, one row at most, has the empty key).
type aggNode struct {
	physBase
	agg *Aggregate
}

func (x *Aggregate) lower(b *physBuilder, kids []physNode) (physNode, error) {
	inMode := kids[0].traits().mode
	if inMode.Contains(types.UpdateAfter) && !inMode.Contains(types.UpdateBefore) {
		return nil, parser.Errorf(b.pos, "%s over an upsert changelog (%s, no -U) is not supported yet", x.groupAggDesc(), inMode.Kinds())
	}
	if err := checkRetracts(x.Aggs, inMode); err != nil {
		return nil, parser.Errorf(b.pos, "%s: %s", x.groupAggDesc(), err.Error())
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if len(x.Keys) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: x.Keys}, b.parallelism
	}
	ex := newExchange(kids[0], part, par)
	keys := leadingKey(len(x.Keys))
	return &aggNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: aggMode(inMode),
			uniqueKeys: keys, upsertKeys: keys, parallelism: par}},
		agg: x,
	}, nil
}

// checkRetracts returns an error when input of mode in has retractions
// (-U, -D) and a call's function cannot take them back out.
func checkRetracts(calls []aggfunc.Call, in connector.ChangelogMode) error {
	if !in.Contains(types.UpdateBefore) && !in.Contains(types.Delete) {
		return nil
	}
	for _, c := range calls {
		if !c.Func.Retracts {
			return fmt.Errorf("%s cannot consume retractions, and its input has %s", c.Name, changeWhat(in))
		}
	}
	return nil
}

func (p *aggNode) operator() {}

func (p *aggNode) desc() string { return p.agg.groupAggDesc() }

func (p *aggNode) updateCause() string { return p.desc() }

// canon describes the aggregate by its key positions and calls.
func (p *aggNode) canon() string {
	var b strings.Builder
	fmt.Fprintf(&b, "groupagg keys=%v", p.agg.Keys)
	for _, c := range p.agg.Aggs {
		fmt.Fprintf(&b, " | %d distinct=%v arg=%d %s -> %s", c.Func.Kind, c.Distinct, c.Arg, c.ArgType, c.Type)
		if c.Sep != "" {
			fmt.Fprintf(&b, " sep=%q", c.Sep)
		}
	}
	return b.String()
}

func (p *aggNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	calls := make([]exec.AggCall, len(p.agg.Aggs))
	for i, c := range p.agg.Aggs {
		calls[i] = exec.AggCallOf(c)
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: exec.NewGroupAgg(p.agg.Keys, calls)}), nil
}
