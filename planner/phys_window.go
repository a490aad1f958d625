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
	// global: the global phase of a two-phase aggregate, over the partial
	// rows of a localWindowAggNode.
	global bool
}

// localWindowAggNode is the local phase of a two-phase window aggregate,
// chained to its input: per key and slice it pre-aggregates the rows and
// emits partial rows (the keys, $slice_end, $rows, $accs) that the hash
// exchange brings to the global phase.
type localWindowAggNode struct {
	physBase
	agg *WindowAggregate
}

func (x *WindowAggregate) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if in := kids[0].traits().mode; !in.IsInsertOnly() {
		return nil, parser.Errorf(b.pos, "a window aggregate takes insert-only input, and its input has %s", changeWhat(in))
	}
	twoPhase, err := b.twoPhaseWindow(x)
	if err != nil {
		return nil, err
	}
	nk := len(x.Keys)
	in, keyCols := kids[0], x.Keys
	if twoPhase {
		in = newLocalWindowAgg(x, kids[0])
		keyCols = leadingKey(nk)[0]
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if nk > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: keyCols}, b.parallelism
	}
	ex := newExchange(in, part, par)
	key := make([]int, 0, nk+2)
	for i := range nk + 2 {
		key = append(key, i)
	}
	keys := keySet{key}
	return &windowAggNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: connector.ModeOf(types.Insert),
			uniqueKeys: keys, upsertKeys: keys, parallelism: par}},
		agg: x, global: twoPhase,
	}, nil
}

// newLocalWindowAgg makes the local phase of x over in.
func newLocalWindowAgg(x *WindowAggregate, in physNode) *localWindowAggNode {
	sch := in.traits().schema
	cols := make([]types.Column, 0, len(x.Keys)+exec.PartialWindowCols)
	for _, k := range x.Keys {
		cols = append(cols, sch.Columns[k])
	}
	bigint := types.Type{Kind: types.KindBigInt, NotNull: true}
	cols = append(cols, types.Column{Name: "$slice_end", Type: bigint}, types.Column{Name: "$rows", Type: bigint},
		types.Column{Name: "$accs", Type: types.Type{Kind: types.KindBytes, NotNull: true}})
	return &localWindowAggNode{
		physBase: physBase{kids: []physNode{in}, tr: traits{schema: types.Schema{Columns: cols}, mode: connector.ModeOf(types.Insert),
			parallelism: in.traits().parallelism}},
		agg: x,
	}
}

// KeyAggPhaseStrategy is the SET key that chooses one- or two-phase
// aggregation (Flink's 'table.optimizer.agg-phase-strategy'): AUTO
// (default), ONE_PHASE or TWO_PHASE.
const KeyAggPhaseStrategy = "table.optimizer.agg-phase-strategy"

// ParseAggPhaseStrategy checks a value of KeyAggPhaseStrategy
// (case-insensitive) and returns it in upper case.
func ParseAggPhaseStrategy(v string) (string, error) {
	switch u := strings.ToUpper(strings.TrimSpace(v)); u {
	case "AUTO", "ONE_PHASE", "TWO_PHASE":
		return u, nil
	}
	return "", fmt.Errorf("config '%s' = '%s': expected 'AUTO', 'ONE_PHASE' or 'TWO_PHASE'", KeyAggPhaseStrategy, v)
}

// twoPhaseWindow decides whether window aggregate x is planned in two
// phases: only event-time TUMBLE, HOP and CUMULATE windows can be (their
// slices are known from a row alone; sessions merge by key, processing
// time is the clock of the subtask that assigns), with every accumulator
// mergeable (all are: slicing merges them). TWO_PHASE and AUTO take it,
// ONE_PHASE does not. AUTO takes it at every parallelism: the global
// phase keeps its slices in memory (the one-phase operator reads and
// writes keyed state per row), so two phases cost about a seventh of the
// CPU of one also at parallelism 1 (measured on W6's query).
func (b *physBuilder) twoPhaseWindow(x *WindowAggregate) (bool, error) {
	if x.Spec.Kind == exec.WindowSession || x.Spec.Proctime {
		return false, nil
	}
	strategy := "AUTO"
	if b.p != nil {
		if v, ok := b.p.Config[KeyAggPhaseStrategy]; ok {
			var err error
			if strategy, err = ParseAggPhaseStrategy(v); err != nil {
				return false, err
			}
		}
	}
	return strategy != "ONE_PHASE", nil
}

func (p *localWindowAggNode) operator() {}

// desc renders the local phase: keys, window, the calls it pre-aggregates
// and when it emits.
func (p *localWindowAggNode) desc() string {
	x := p.agg
	in := x.Input.Schema()
	var parts []string
	if len(x.Keys) > 0 {
		parts = append(parts, "groupBy=["+strings.Join(x.keyNames(in), ", ")+"]")
	}
	parts = append(parts, "window=["+x.windowText()+"]")
	calls := make([]string, len(x.Aggs))
	for j, a := range x.Aggs {
		calls[j] = a.Name
	}
	parts = append(parts, "select=["+strings.Join(append(x.keyNames(in), append(calls, "$slice_end", "$rows")...), ", ")+"]",
		"emit=[partial accumulators per key and slice, when the watermark reaches the slice, at checkpoints and at the end]")
	return "LocalWindowAggregate(" + strings.Join(parts, ", ") + ")"
}

// keyNames returns the input names of the group keys.
func (x *WindowAggregate) keyNames(in types.Schema) []string {
	keys := make([]string, len(x.Keys))
	for i, k := range x.Keys {
		keys[i] = in.Columns[k].Name
	}
	return keys
}

// canon describes the local phase by key positions, window and calls.
func (p *localWindowAggNode) canon() string {
	return "local" + windowAggCanon(p.agg)
}

func (p *localWindowAggNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: exec.NewLocalWindowAgg(p.agg.Keys, p.agg.Spec, windowCalls(p.agg))}), nil
}

// windowCalls returns x's calls in the runtime's form.
func windowCalls(x *WindowAggregate) []exec.AggCall {
	calls := make([]exec.AggCall, len(x.Aggs))
	for i, c := range x.Aggs {
		calls[i] = exec.AggCallOf(c)
	}
	return calls
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
	parts = append(parts, "window=["+x.windowText()+"]")
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
	for _, c := range x.Schema().Columns[len(x.Keys) : len(x.Keys)+3] {
		sel = append(sel, c.Name)
	}
	for j, a := range x.Aggs {
		name := x.Names[len(x.Keys)+j]
		if name == a.Name {
			sel = append(sel, a.Name)
		} else {
			sel = append(sel, a.Name+" AS "+name)
		}
	}
	parts = append(parts, "select=["+strings.Join(sel, ", ")+"]")
	if p.global {
		return "GlobalWindowAggregate(" + strings.Join(parts, ", ") + ")"
	}
	return "WindowAggregate(" + strings.Join(parts, ", ") + ")"
}

// canon describes the window aggregate by key positions, window and calls.
// (The global phase's differs: its input is partial rows.)
func (p *windowAggNode) canon() string {
	switch {
	case p.global:
		return "global" + windowAggCanon(p.agg)
	case p.eventSessions():
		return "sessions " + windowAggCanon(p.agg) // state in Records, not keyed state
	}
	return windowAggCanon(p.agg)
}

// eventSessions reports whether the node runs exec.NewSessionWindowAgg.
func (p *windowAggNode) eventSessions() bool {
	return p.agg.Spec.Kind == exec.WindowSession && !p.agg.Spec.Proctime
}

// windowAggCanon describes x by key positions, window and calls.
func windowAggCanon(x *WindowAggregate) string {
	var b strings.Builder
	w := x.Spec
	fmt.Fprintf(&b, "windowagg keys=%v kind=%d size=%d slide=%d offset=%d gap=%d time=%d proctime=%v ltz=%v",
		x.Keys, w.Kind, w.Size, w.Slide, w.Offset, w.Gap, w.TimeCol, w.Proctime, w.LTZ)
	for _, c := range x.Aggs {
		fmt.Fprintf(&b, " | %d distinct=%v arg=%d %s -> %s", c.Func.Kind, c.Distinct, c.Arg, c.ArgType, c.Type)
	}
	return b.String()
}

func (p *windowAggNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	newOp := exec.NewWindowAggIn(p.agg.Keys, p.agg.Spec, windowCalls(p.agg), p.agg.Zone)
	switch {
	case p.global:
		newOp = exec.NewGlobalWindowAgg(len(p.agg.Keys), p.agg.Spec, windowCalls(p.agg))
	case p.eventSessions():
		newOp = exec.NewSessionWindowAgg(p.agg.Keys, p.agg.Spec, windowCalls(p.agg))
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: newOp}), nil
}

// lower plans a window TVF whose rows are selected directly (not consumed
// by a window aggregate, join or Top-N) as a WindowAssign: a stateless
// operator giving each row one output row per window (TUMBLE, HOP and
// CUMULATE in event time); SESSION and processing-time windows can only be
// aggregated so far.
func (x *WindowTVF) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if x.Spec.Kind == exec.WindowSession {
		return x.lowerSessionRows(b, kids)
	}
	return (&WindowAssign{TVF: x}).lower(b, kids)
}

// sessionRowsNode is the rows of an event-time SESSION window TVF
// without aggregation (exec.NewSessionRows): its input hashed by the
// PARTITION BY columns (one subtask without them); insert-only.
type sessionRowsNode struct {
	physBase
	x *WindowTVF
}

func (x *WindowTVF) lowerSessionRows(b *physBuilder, kids []physNode) (physNode, error) {
	if x.Spec.Proctime {
		return nil, parser.Errorf(b.pos, "the rows of a SESSION window TVF in processing time can only be aggregated so far: GROUP BY window_start, window_end")
	}
	if in := kids[0].traits().mode; !in.IsInsertOnly() {
		return nil, parser.Errorf(b.pos, "a window TVF takes insert-only input, and its input has %s", changeWhat(in))
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if len(x.Partition) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: x.Partition}, b.parallelism
	}
	ex := newExchange(kids[0], part, par)
	return &sessionRowsNode{x: x, physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(),
		mode: connector.ModeOf(types.Insert), parallelism: par}}}, nil
}

func (p *sessionRowsNode) operator() {}

func (p *sessionRowsNode) desc() string {
	s := "WindowTableFunction(window=[" + windowText(p.x.Spec, p.x.TimeName) + "]"
	if len(p.x.Partition) > 0 {
		names := make([]string, len(p.x.Partition))
		for i, c := range p.x.Partition {
			names[i] = p.x.Input.Schema().Columns[c].Name
		}
		s += ", partitionBy=[" + strings.Join(names, ", ") + "]"
	}
	return s + ")"
}

func (p *sessionRowsNode) canon() string {
	w := p.x.Spec
	return fmt.Sprintf("sessionrows part=%v gap=%d time=%d ltz=%v kinds=%v", p.x.Partition, w.Gap, w.TimeCol, w.LTZ, kindsOf(p.x.Input.Schema()))
}

func (p *sessionRowsNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: exec.NewSessionRows(p.x.Partition, p.x.Spec, kindsOf(p.x.Input.Schema()))}), nil
}
