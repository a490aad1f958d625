package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// Sort is ORDER BY and/or LIMIT n (Limit 0: none). ORDER BY alone runs on
// a stream ordered first by a time attribute ascending (Flink's
// TemporalSort), or on a bounded input by anything (the rows come out at
// its end). With a LIMIT over a bounded insert-only input it keeps the
// first n rows in order and emits them at the end (a batch SortLimit);
// otherwise (and for LIMIT alone) it is a Top-N with one partition (a Rank without the rank
// column: Flink's global Top-N; with no ORDER BY the first n rows).
// OFFSET m skips the first m rows: the Top-N keeps the ranks m+1 to m+n,
// the SortLimit the first m+n rows and emits those after the first m.
type Sort struct {
	Input  Node
	Order  []exec.SortKey
	Limit  int64
	Offset int64
	Pos    parser.Pos // the query, for errors
}

var _ Node = (*Sort)(nil)

// Children returns the input.
func (n *Sort) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Sort) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the input's.
func (n *Sort) Schema() types.Schema { return n.Input.Schema() }

// String renders the node for EXPLAIN.
func (n *Sort) String() string {
	return "LogicalSort(orderBy=[" + n.orderText() + "]" + n.fetchText() + ")"
}

func (n *Sort) fetchText() string {
	s := ""
	if n.Offset > 0 {
		s = ", offset=[" + strconv.FormatInt(n.Offset, 10) + "]"
	}
	if n.Limit == 0 {
		return s
	}
	return s + ", fetch=[" + strconv.FormatInt(n.Limit, 10) + "]"
}

func (n *Sort) orderText() string {
	r := &Rank{Input: n.Input, Order: n.Order}
	return r.orderText()
}

// sortNode runs the sort on one subtask behind a global exchange.
type sortNode struct {
	physBase
	sort *Sort
	spec exec.SortSpec
	kind string // TemporalSort or Sort
}

func (x *Sort) lower(b *physBuilder, kids []physNode) (physNode, error) {
	in := kids[0].traits()
	sch := x.Input.Schema()
	if x.Limit > 0 && x.Offset > math.MaxInt64-x.Limit {
		return nil, parser.Errorf(x.Pos, "OFFSET %d and LIMIT %d: the last row's position does not fit a BIGINT", x.Offset, x.Limit)
	}
	if x.Limit > 0 {
		// LIMIT alone is a Top-N also on a bounded input: it emits the
		// first rows as they come (the shell stops the query then).
		if len(x.Order) == 0 || !in.mode.IsInsertOnly() || !boundedInput(kids[0]) {
			r := &Rank{Input: x.Input, Func: exec.RowNumber, Order: x.Order, Start: x.Offset + 1, End: x.Offset + x.Limit, RankName: "$rn", Pos: x.Pos}
			p, err := r.lower(b, kids)
			if rn, ok := p.(*rankNode); ok && err == nil {
				// EXPLAIN names it as Flink does: Limit without ORDER BY,
				// else SortLimit (the operator and its id are the Rank's).
				rn.limit = x
				if len(x.Order) == 0 && in.mode.IsInsertOnly() {
					// Ordered by nothing, a row never displaces one kept
					// (ties keep arrival order): the rows m+1 to m+n are
					// inserted and nothing else is emitted, as Flink's Limit.
					rn.tr.mode = connector.ModeInsertOnly
				}
			}
			return p, err
		}
		ex := newExchange(kids[0], exec.Partitioning{Kind: exec.Global}, 1)
		return &sortNode{
			physBase: physBase{kids: []physNode{ex}, tr: traits{schema: sch, mode: connector.ModeInsertOnly, parallelism: 1}},
			sort:     x, spec: exec.SortSpec{Order: x.Order, TimeCol: -1, Limit: x.Offset + x.Limit, Offset: x.Offset, Kinds: kindsOf(sch)}, kind: "SortLimit",
		}, nil
	}
	if x.Offset > 0 && (len(x.Order) == 0 || !in.mode.IsInsertOnly() || !boundedInput(kids[0])) {
		return nil, parser.Errorf(x.Pos, "OFFSET without LIMIT or FETCH needs ORDER BY over a bounded insert-only input (on a stream it would keep every row): add FETCH NEXT n ROWS ONLY")
	}
	if !in.mode.IsInsertOnly() {
		return nil, parser.Errorf(x.Pos, "ORDER BY without LIMIT needs an insert-only input, and this one is updating (%s): add a LIMIT for a Top-N (ORDER BY … LIMIT n)", in.mode.Kinds())
	}
	spec := exec.SortSpec{Order: x.Order, TimeCol: -1, Offset: x.Offset, Kinds: kindsOf(sch)}
	kind := "Sort"
	first := x.Order[0]
	attr := sch.Columns[first.Col].Type.Attr
	switch {
	case x.Offset > 0:
		// A bounded input (checked above), sorted at its end: the
		// first rows are skipped there.
	case attr == types.Rowtime && !first.Desc:
		spec.TimeCol, kind = first.Col, "TemporalSort"
	case attr == types.Proctime && !first.Desc:
		spec.Arrival, kind = true, "TemporalSort"
	case !boundedInput(kids[0]):
		return nil, parser.Errorf(x.Pos, "ORDER BY on an unbounded input must start with a time attribute in ascending order (as in Flink: ORDER BY ts), or have a LIMIT (a Top-N); %s is not one", sch.Columns[first.Col].Name)
	}
	ex := newExchange(kids[0], exec.Partitioning{Kind: exec.Global}, 1)
	return &sortNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: sch, mode: connector.ModeInsertOnly, parallelism: 1}},
		sort:     x, spec: spec, kind: kind,
	}, nil
}

// boundedInput reports whether every source under p ends by itself.
func boundedInput(p physNode) bool {
	switch s := p.(type) {
	case *scanNode:
		return s.source.Bounded()
	case *valuesNode:
		return true
	}
	for _, k := range p.Children() {
		if !boundedInput(k) {
			return false
		}
	}
	return len(p.Children()) > 0
}

func (p *sortNode) operator() {}

func (p *sortNode) desc() string {
	if p.kind == "SortLimit" {
		return "SortLimit(orderBy=[" + p.sort.orderText() + "], offset=[" + strconv.FormatInt(p.sort.Offset, 10) + "], fetch=[" + strconv.FormatInt(p.sort.Limit, 10) + "])"
	}
	if p.spec.Offset > 0 {
		return p.kind + "(orderBy=[" + p.sort.orderText() + "], offset=[" + strconv.FormatInt(p.spec.Offset, 10) + "])"
	}
	return p.kind + "(orderBy=[" + p.sort.orderText() + "])"
}

func (p *sortNode) canon() string {
	s := fmt.Sprintf("sort order=%v time=%d arrival=%v limit=%d kinds=%s", p.spec.Order, p.spec.TimeCol, p.spec.Arrival, p.spec.Limit, strings.Trim(fmt.Sprint(p.spec.Kinds), "[]"))
	if p.spec.Offset > 0 {
		// Only then, so that the ids of sorts without one stay as they were.
		s += fmt.Sprintf(" offset=%d", p.spec.Offset)
	}
	return s
}

func (p *sortNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewSort(p.spec)}), nil
}
