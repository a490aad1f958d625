package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// rankNode is a Top-N behind the exchange that brings each partition to
// one subtask (hash on the partition keys; one subtask without them). Its
// strategy follows its input as Flink's planner picks it: AppendFast over
// insert-only input, UpdateFast over input with an upsert key (Weir's
// keeps every row by that key, so it needs no monotonic sort key),
// Retract otherwise. It emits +I, -U, +U and -D; its keys are the
// partition and the rank for a ROW_NUMBER with the rank in the output,
// else its input's upsert keys when the rank is not output.
type rankNode struct {
	physBase
	rank      *Rank
	strategy  exec.RankStrategy
	uniqueKey []int
	// limit is the ORDER BY … LIMIT or LIMIT this Top-N runs, if it is
	// one: EXPLAIN then shows it as Flink does (only the label differs;
	// the operator and its id, from canon, are the Rank's).
	limit *Sort
}

// dedupNode is a Deduplicate: ROW_NUMBER() = 1 ordered by a time
// attribute over insert-only input, without the rank in the output.
type dedupNode struct {
	physBase
	rank     *Rank
	keepLast bool
	rowtime  bool
}

func (x *Rank) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if x.End == 0 {
		return nil, parser.Errorf(x.Pos, "%s() OVER without a filter on its result is not supported: a streaming ranking is a Top-N, as in SELECT * FROM (SELECT …, %s() OVER (…) AS rn FROM t) WHERE rn <= 3", x.Func, x.Func)
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if len(x.Partition) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: x.Partition}, b.parallelism
	}
	ex := newExchange(kids[0], part, par)
	in := ex.traits()
	all := connector.ModeOf(types.Insert, types.UpdateBefore, types.UpdateAfter, types.Delete)
	if x.Func == exec.RowNumber && x.Start == 1 && x.End == 1 && !x.OutputRank && len(x.Order) == 1 && in.mode.IsInsertOnly() {
		if attr := x.Input.Schema().Columns[x.Order[0].Col].Type.Attr; attr != types.NoTimeAttr {
			d := &dedupNode{rank: x, keepLast: x.Order[0].Desc, rowtime: attr == types.Rowtime}
			mode := connector.ModeOf(types.Insert, types.UpdateBefore, types.UpdateAfter)
			if !d.keepLast && !d.rowtime {
				mode = connector.ModeInsertOnly
			}
			keys := normKeys(keySet{x.Partition})
			d.physBase = physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: mode,
				uniqueKeys: keys, upsertKeys: keys, parallelism: par}}
			return d, nil
		}
	}
	n := &rankNode{rank: x}
	switch {
	case in.mode.IsInsertOnly():
		n.strategy = exec.AppendFast
	case len(in.upsertKeys) > 0:
		n.strategy, n.uniqueKey = exec.UpdateFast, in.upsertKeys[0]
	default:
		if in.mode.Contains(types.UpdateAfter) && !in.mode.Contains(types.UpdateBefore) {
			return nil, parser.Errorf(x.Pos, "%s over an upsert changelog (%s, no -U) without an upsert key is not supported", n.desc(), in.mode.Kinds())
		}
		n.strategy = exec.Retract
	}
	var keys keySet
	switch {
	case x.OutputRank && x.Func == exec.RowNumber:
		keys = normKeys(keySet{append(append([]int{}, x.Partition...), x.Input.Schema().Len())})
	case !x.OutputRank:
		keys = in.upsertKeys
	}
	n.physBase = physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: all,
		uniqueKeys: keys, upsertKeys: keys, parallelism: par}}
	return n, nil
}

func (p *rankNode) operator() {}

func (p *rankNode) strategyText() string {
	switch p.strategy {
	case exec.AppendFast:
		return "AppendFastStrategy"
	case exec.UpdateFast:
		parts := make([]string, len(p.uniqueKey))
		for i, c := range p.uniqueKey {
			parts[i] = strconv.Itoa(c)
		}
		return "UpdateFastStrategy[" + strings.Join(parts, ",") + "]"
	}
	return "RetractStrategy"
}

// desc renders the node as Flink's EXPLAIN does.
func (p *rankNode) desc() string {
	x := p.rank
	if l := p.limit; l != nil {
		r := "offset=[" + strconv.FormatInt(l.Offset, 10) + "], fetch=[" + strconv.FormatInt(l.Limit, 10) + "]"
		if len(l.Order) == 0 {
			return "Limit(" + r + ")"
		}
		return "SortLimit(orderBy=[" + l.orderText() + "], " + r + ", strategy=[" + p.strategyText() + "])"
	}
	return "Rank(strategy=[" + p.strategyText() + "], rankType=[" + x.Func.String() + "], rankRange=[" + x.rangeText() +
		"], partitionBy=[" + x.partitionText() + "], orderBy=[" + x.orderText() + "], select=[" + fields(x.Schema()) + "])"
}

func (p *rankNode) updateCause() string { return p.desc() }

func (p *rankNode) canon() string {
	x := p.rank
	return fmt.Sprintf("rank f=%d part=%v order=%v range=%d-%d out=%v strategy=%d ukey=%v",
		x.Func, x.Partition, x.Order, x.Start, x.End, x.OutputRank, p.strategy, p.uniqueKey)
}

func kindsOf(s types.Schema) []types.Kind {
	ks := make([]types.Kind, s.Len())
	for i, c := range s.Columns {
		ks[i] = c.Type.Kind
	}
	return ks
}

func (p *rankNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	x := p.rank
	spec := exec.RankSpec{Partition: x.Partition, Order: x.Order, Func: x.Func, Start: x.Start, End: x.End,
		OutputRank: x.OutputRank, Strategy: p.strategy, UniqueKey: p.uniqueKey, Kinds: kindsOf(x.Input.Schema())}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewRank(spec)}), nil
}

func (p *dedupNode) operator() {}

// desc renders the node as Flink's EXPLAIN does.
func (p *dedupNode) desc() string {
	keep, order := "FirstRow", "PROCTIME"
	if p.keepLast {
		keep = "LastRow"
	}
	if p.rowtime {
		order = "ROWTIME"
	}
	return "Deduplicate(keep=[" + keep + "], key=[" + p.rank.partitionText() + "], order=[" + order + "])"
}

func (p *dedupNode) updateCause() string { return p.desc() }

func (p *dedupNode) canon() string {
	return fmt.Sprintf("dedup keys=%v time=%d last=%v rowtime=%v", p.rank.Partition, p.rank.Order[0].Col, p.keepLast, p.rowtime)
}

func (p *dedupNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	x := p.rank
	spec := exec.DedupSpec{Keys: x.Partition, TimeCol: x.Order[0].Col, KeepLast: p.keepLast, Rowtime: p.rowtime,
		Kinds: kindsOf(x.Input.Schema())}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewDedup(spec)}), nil
}
