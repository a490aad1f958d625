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
	// global: the global phase of a two-phase aggregate, over the partial
	// rows of a localAggNode.
	global bool
}

// localAggNode is the local phase of a two-phase GroupAggregate, chained
// to its insert-only input: it pre-aggregates each key's rows between the
// task's flushes and emits partial rows (the keys, $rows, $accs).
type localAggNode struct {
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
	buckets, err := b.splitBuckets()
	if err != nil {
		return nil, err
	}
	if buckets > 0 && inMode.IsInsertOnly() && !x.partial && !x.final && splittable(x.Aggs) {
		return x.lowerSplit(b, kids[0], buckets)
	}
	twoPhase, err := b.twoPhaseGroup(inMode)
	if err != nil {
		return nil, err
	}
	in, keyCols := kids[0], x.Keys
	if twoPhase {
		in = newLocalAgg(x, kids[0])
		keyCols = leadingKey(len(x.Keys))[0]
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if len(x.Keys) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: keyCols}, b.parallelism
	}
	ex := newExchange(in, part, par)
	keys := leadingKey(len(x.Keys))
	mode := aggMode(inMode)
	if x.final {
		// The inner aggregate's input is insert-only: it never deletes a
		// group, so neither does the outer (NewFinalGroupAgg).
		mode = aggMode(connector.ModeOf(types.Insert))
	}
	return &aggNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: mode,
			uniqueKeys: keys, upsertKeys: keys, parallelism: par}},
		agg: x, global: twoPhase,
	}, nil
}

// twoPhaseGroup decides whether a GroupAggregate over input of mode in is
// planned in two phases: only over insert-only input (a partial cannot
// take a retraction back), when 'table.optimizer.agg-phase-strategy' is
// TWO_PHASE. AUTO keeps one phase for now, although two phases cost about
// two thirds of the CPU on W1's query and emit far fewer updates: turning
// it on changes the plan of every GROUP BY, which waits for the other
// work of this round to merge.
func (b *physBuilder) twoPhaseGroup(in connector.ChangelogMode) (bool, error) {
	if !in.IsInsertOnly() || b.p == nil {
		return false, nil
	}
	v, ok := b.p.Config[KeyAggPhaseStrategy]
	if !ok {
		return false, nil
	}
	strategy, err := ParseAggPhaseStrategy(v)
	return strategy == "TWO_PHASE", err
}

// newLocalAgg makes the local phase of x over in.
func newLocalAgg(x *Aggregate, in physNode) *localAggNode {
	sch := in.traits().schema
	cols := make([]types.Column, 0, len(x.Keys)+exec.PartialGroupCols)
	for _, k := range x.Keys {
		cols = append(cols, sch.Columns[k])
	}
	cols = append(cols, types.Column{Name: "$rows", Type: types.Type{Kind: types.KindBigInt, NotNull: true}},
		types.Column{Name: "$accs", Type: types.Type{Kind: types.KindBytes, NotNull: true}})
	return &localAggNode{
		physBase: physBase{kids: []physNode{in}, tr: traits{schema: types.Schema{Columns: cols}, mode: connector.ModeOf(types.Insert),
			parallelism: in.traits().parallelism}},
		agg: x,
	}
}

func (p *localAggNode) operator() {}

// desc renders the local phase: its keys, the calls it pre-aggregates and
// when it emits.
func (p *localAggNode) desc() string {
	d := strings.Replace(p.agg.groupAggDesc(), "GroupAggregate(", "LocalGroupAggregate(", 1)
	return strings.TrimSuffix(d, ")") + ", emit=[partial accumulators per key, when the task flushes])"
}

func (p *localAggNode) canon() string { return "local" + p.agg.aggCanon() }

func (p *localAggNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: exec.NewLocalGroupAgg(p.agg.Keys, aggCalls(p.agg))}), nil
}

// aggCalls returns x's calls in the runtime's form.
func aggCalls(x *Aggregate) []exec.AggCall {
	calls := make([]exec.AggCall, len(x.Aggs))
	for i, c := range x.Aggs {
		calls[i] = exec.AggCallOf(c)
	}
	return calls
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

func (p *aggNode) desc() string {
	if p.global {
		return "Global" + p.agg.groupAggDesc()
	}
	return p.agg.groupAggDesc()
}

func (p *aggNode) updateCause() string { return p.desc() }

// canon describes the aggregate by its key positions and calls (the
// global phase's differs: its input is partial rows).
func (p *aggNode) canon() string {
	if p.global {
		return "global" + p.agg.aggCanon()
	}
	return p.agg.aggCanon()
}

// aggCanon describes x by its key positions and calls.
func (x *Aggregate) aggCanon() string {
	var b strings.Builder
	switch {
	case x.partial:
		b.WriteString("partial ")
	case x.final:
		b.WriteString("final ")
	}
	fmt.Fprintf(&b, "groupagg keys=%v", x.Keys)
	for _, c := range x.Aggs {
		fmt.Fprintf(&b, " | %d distinct=%v arg=%d %s -> %s", c.Func.Kind, c.Distinct, c.Arg, c.ArgType, c.Type)
		if c.Sep != "" {
			fmt.Fprintf(&b, " sep=%q", c.Sep)
		}
	}
	return b.String()
}

func (p *aggNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	newOp := exec.NewGroupAgg(p.agg.Keys, aggCalls(p.agg))
	if p.kids[0].traits().mode.IsInsertOnly() {
		newOp = exec.NewGroupAggOverInserts(p.agg.Keys, aggCalls(p.agg))
	}
	if p.global {
		newOp = exec.NewGlobalGroupAgg(len(p.agg.Keys), aggCalls(p.agg))
	}
	if p.agg.final {
		newOp = exec.NewFinalGroupAgg(p.agg.Keys, aggCalls(p.agg))
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: newOp}), nil
}
