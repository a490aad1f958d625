package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// windowAggNode is a WindowAggregate behind the exchange that brings each
// group key to one subtask (hash on the keys; one subtask without keys).
// Its output is insert-only: each window's row once, when the watermark
// passes the window's end.
type windowAggNode struct {
	physBase
	agg *WindowAggregate
}

func (x *WindowAggregate) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if in := kids[0].traits().mode; !in.IsInsertOnly() {
		return nil, parser.Errorf(b.pos, "a window aggregate takes insert-only input, and its input has %s", changeWhat(in))
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if len(x.Keys) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: x.Keys}, b.parallelism
	}
	ex := newExchange(kids[0], part, par)
	nk := len(x.Keys)
	key := make([]int, 0, nk+2)
	for i := range nk + 2 {
		key = append(key, i)
	}
	keys := keySet{key}
	return &windowAggNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: connector.ModeOf(types.Insert),
			uniqueKeys: keys, upsertKeys: keys, parallelism: par}},
		agg: x,
	}, nil
}

func (p *windowAggNode) operator() {}

// desc renders the operator with its window, time attribute, watermark
// and emit strategy.
func (p *windowAggNode) desc() string {
	x := p.agg
	in := x.Input.Schema()
	var parts []string
	if len(x.Keys) > 0 {
		keys := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = in.Columns[k].Name
		}
		parts = append(parts, "groupBy=["+strings.Join(keys, ", ")+"]")
	}
	parts = append(parts, "window=["+windowText(x.Spec, x.TimeName)+"]")
	if x.Spec.Proctime {
		parts = append(parts, "time=[processing time]", "emit=[once per window, when the clock passes window_end]")
	} else {
		wm := x.Watermark
		if wm == "" {
			wm = "from the input"
		}
		parts = append(parts, "time=[event time]", "watermark=["+wm+"]", "emit=[once per window, when the watermark passes window_end; later rows are dropped and counted]")
	}
	sel := make([]string, 0, len(x.Keys)+3+len(x.Aggs))
	for i := range x.Keys {
		sel = append(sel, x.Names[i])
	}
	sel = append(sel, "window_start", "window_end", "window_time")
	for j, a := range x.Aggs {
		name := x.Names[len(x.Keys)+j]
		if name == a.Name {
			sel = append(sel, a.Name)
		} else {
			sel = append(sel, a.Name+" AS "+name)
		}
	}
	parts = append(parts, "select=["+strings.Join(sel, ", ")+"]")
	return "WindowAggregate(" + strings.Join(parts, ", ") + ")"
}

// canon describes the window aggregate by key positions, window and calls.
func (p *windowAggNode) canon() string {
	var b strings.Builder
	w := p.agg.Spec
	fmt.Fprintf(&b, "windowagg keys=%v kind=%d size=%d slide=%d offset=%d gap=%d time=%d proctime=%v ltz=%v",
		p.agg.Keys, w.Kind, w.Size, w.Slide, w.Offset, w.Gap, w.TimeCol, w.Proctime, w.LTZ)
	for _, c := range p.agg.Aggs {
		fmt.Fprintf(&b, " | %d distinct=%v arg=%d %s -> %s", c.Func.Kind, c.Distinct, c.Arg, c.ArgType, c.Type)
	}
	return b.String()
}

func (p *windowAggNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	calls := make([]exec.AggCall, len(p.agg.Aggs))
	for i, c := range p.agg.Aggs {
		calls[i] = exec.AggCallOf(c)
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: exec.NewWindowAgg(p.agg.Keys, p.agg.Spec, calls)}), nil
}

// lower refuses a window TVF whose rows are selected directly: only a
// window aggregation over it is planned so far.
func (x *WindowTVF) lower(b *physBuilder, _ []physNode) (physNode, error) {
	return nil, parser.Errorf(b.pos, "the rows of a window TVF (%s) can only be aggregated so far: GROUP BY window_start, window_end", x.Spec.Kind)
}
