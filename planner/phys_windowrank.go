package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// WindowRank is a Top-N per window: a Rank partitioned by window_start
// and window_end (and maybe more) of a window TVF (TVF set: the operator
// assigns the windows of the TVF's input rows itself, as WindowAggregate
// does) or of a window aggregate's output (TVF nil: the rows carry their
// window). It emits each window's ranked rows once, when the watermark
// passes the window's end (Flink's WindowRank, or WindowDeduplicate).
type WindowRank struct {
	R   Rank       // R.Input is TVF when TVF is set
	TVF *WindowTVF // nil over a window aggregate
	// WinStart and WinEnd are the window's columns in R.Input's schema.
	WinStart, WinEnd int
	// Spec and TimeName describe the window for EXPLAIN.
	Spec     exec.WindowSpec
	TimeName string
}

var _ Node = (*WindowRank)(nil)

// Children returns the input: the TVF's input, or the window aggregate.
func (n *WindowRank) Children() []Node {
	if n.TVF != nil {
		return []Node{n.TVF.Input}
	}
	return []Node{n.R.Input}
}

// WithChildren replaces the input.
func (n *WindowRank) WithChildren(k []Node) Node {
	c := *n
	if c.TVF != nil {
		t := *c.TVF
		t.Input = k[0]
		c.TVF = &t
		c.R.Input = &t
	} else {
		c.R.Input = k[0]
	}
	return &c
}

// Schema is the Rank's: its input's columns (with the window's), then
// the rank when output.
func (n *WindowRank) Schema() types.Schema { return n.R.Schema() }

// String renders the node for EXPLAIN.
func (n *WindowRank) String() string { return "Logical" + n.desc() }

// dedup reports whether the Top-N is a window deduplication: ROW_NUMBER
// = 1, rank not output, ordered by one time attribute.
func (n *WindowRank) dedup() bool {
	r := &n.R
	return r.Func == exec.RowNumber && r.Start == 1 && r.End == 1 && !r.OutputRank && len(r.Order) == 1 &&
		r.Input.Schema().Columns[r.Order[0].Col].Type.Attr == types.Rowtime
}

// keys are the partition's columns other than the window's.
func (n *WindowRank) keys() []int {
	var ks []int
	for _, c := range n.R.Partition {
		if c != n.WinStart && c != n.WinEnd {
			ks = append(ks, c)
		}
	}
	return ks
}

func (n *WindowRank) desc() string {
	in := n.R.Input.Schema()
	w := windowText(n.Spec, n.TimeName)
	w = strings.Replace(w, "(", "(win_start=["+in.Columns[n.WinStart].Name+"], win_end=["+in.Columns[n.WinEnd].Name+"], ", 1)
	var ks []string
	for _, c := range n.keys() {
		ks = append(ks, in.Columns[c].Name)
	}
	if n.dedup() {
		keep := "FirstRow"
		if n.R.Order[0].Desc {
			keep = "LastRow"
		}
		return "WindowDeduplicate(window=[" + w + "], keep=[" + keep + "], partitionKeys=[" + strings.Join(ks, ", ") +
			"], orderKey=[" + in.Columns[n.R.Order[0].Col].Name + "], order=[ROWTIME])"
	}
	return "WindowRank(window=[" + w + "], rankType=[" + n.R.Func.String() + "], rankRange=[" + n.R.rangeText() +
		"], partitionBy=[" + strings.Join(ks, ", ") + "], orderBy=[" + n.R.orderText() + "], select=[" + fields(n.Schema()) + "])"
}

// windowRankOf makes r, a Rank with its range, a WindowRank when it is
// partitioned by the window_start and window_end of a window TVF right
// below it or of a window aggregate below it (through projections that
// pass columns on); otherwise it returns r.
func windowRankOf(r *Rank) (Node, error) {
	has := func(c int) bool { return slices.Contains(r.Partition, c) }
	if tvf, ok := r.Input.(*WindowTVF); ok {
		in := tvf.Input.Schema().Len()
		if !has(in) || !has(in+1) {
			return r, nil
		}
		if tvf.Spec.Kind == exec.WindowSession || tvf.Spec.Proctime {
			return nil, parser.Errorf(r.Pos, "a window Top-N over %s is not supported: use TUMBLE, HOP or CUMULATE on an event-time attribute", windowText(tvf.Spec, tvf.TimeName))
		}
		for _, c := range r.Partition {
			if c == in+2 {
				return r, nil
			}
		}
		return &WindowRank{R: *r, TVF: tvf, WinStart: in, WinEnd: in + 1, Spec: tvf.Spec, TimeName: tvf.TimeName}, nil
	}
	// A window aggregate, maybe under projections of its columns.
	cols := make([]int, r.Input.Schema().Len())
	for i := range cols {
		cols[i] = i
	}
	n := r.Input
	for {
		var exprs []expr.Expr
		var below Node
		switch x := n.(type) {
		case *Project:
			exprs, below = x.Exprs, x.Input
		case *Calc:
			if x.Cond != nil {
				return r, nil
			}
			exprs, below = x.Exprs, x.Input
		case *WindowAggregate:
			if x.Spec.Proctime || x.Spec.Kind == exec.WindowSession {
				return r, nil // processing time, or sessions: the plain Top-N
			}
			w, _ := windowProps(x)
			ws, we := -1, -1
			for i, c := range cols {
				switch c {
				case w.ws:
					ws = i
				case w.we:
					we = i
				}
			}
			if ws < 0 || we < 0 || !has(ws) || !has(we) {
				return r, nil
			}
			return &WindowRank{R: *r, WinStart: ws, WinEnd: we, Spec: w.spec, TimeName: w.timeName}, nil
		default:
			return r, nil
		}
		for i, c := range cols {
			if c < 0 {
				continue
			}
			if col, ok := exprs[c].(*expr.Column); ok {
				cols[i] = col.Index
			} else {
				cols[i] = -1
			}
		}
		n = below
	}
}

// windowRankNode is a WindowRank behind a hash exchange on the partition's
// columns other than the window's (one subtask without them); insert-only.
type windowRankNode struct {
	physBase
	wr *WindowRank
}

func (x *WindowRank) lower(b *physBuilder, kids []physNode) (physNode, error) {
	if in := kids[0].traits().mode; !in.IsInsertOnly() {
		return nil, parser.Errorf(x.R.Pos, "a window Top-N takes insert-only input, and its input has %s", changeWhat(in))
	}
	part, par := exec.Partitioning{Kind: exec.Global}, 1
	if ks := x.keys(); len(ks) > 0 {
		part, par = exec.Partitioning{Kind: exec.Hash, Keys: ks}, b.parallelism
	}
	ex := newExchange(kids[0], part, par)
	return &windowRankNode{
		physBase: physBase{kids: []physNode{ex}, tr: traits{schema: x.Schema(), mode: connector.ModeInsertOnly, parallelism: par}},
		wr:       x,
	}, nil
}

func (p *windowRankNode) operator() {}

func (p *windowRankNode) desc() string { return p.wr.desc() }

func (p *windowRankNode) canon() string {
	x := p.wr
	return fmt.Sprintf("windowrank f=%d keys=%v order=%v range=%d-%d out=%v tvf=%v spec=%+v ws=%d we=%d",
		x.R.Func, x.keys(), x.R.Order, x.R.Start, x.R.End, x.R.OutputRank, x.TVF != nil, x.Spec, x.WinStart, x.WinEnd)
}

func (p *windowRankNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	x := p.wr
	in := x.R.Input
	if x.TVF != nil {
		in = x.TVF.Input
	}
	spec := exec.WindowRankSpec{Keys: x.keys(), Order: x.R.Order, Func: x.R.Func, Start: x.R.Start, End: x.R.End,
		OutputRank: x.R.OutputRank, WinStart: x.WinStart, WinEnd: x.WinEnd, Kinds: kindsOf(in.Schema()),
		LaterFirst: x.dedup() && x.R.Order[0].Desc}
	if x.TVF != nil {
		s := x.TVF.Spec
		spec.Assign = &s
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewWindowRank(spec)}), nil
}
