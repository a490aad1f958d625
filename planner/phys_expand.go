package planner

import (
	"fmt"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/types"
)

// Expand is the expansion of GROUPING SETS, ROLLUP and CUBE: each input
// row once per grouping set, with the grouping columns that the set leaves
// out NULL, and a last BIGINT NOT NULL column $e holding the set's index.
// The aggregate above it groups by the grouping columns and $e.
type Expand struct {
	Input Node
	// Keys are the input's grouping columns.
	Keys []int
	// Sets are, per grouping set, the positions in Keys that it keeps.
	Sets [][]int
}

// Children returns the input.
func (n *Expand) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Expand) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// nulls returns, per set, the input columns that it sets to NULL.
func (n *Expand) nulls() [][]int {
	out := make([][]int, len(n.Sets))
	for i, s := range n.Sets {
		kept := make([]bool, len(n.Keys))
		for _, k := range s {
			kept[k] = true
		}
		out[i] = []int{}
		for j, k := range n.Keys {
			if !kept[j] {
				out[i] = append(out[i], k)
			}
		}
	}
	return out
}

// Schema is the input's columns (those some set leaves out nullable),
// then $e.
func (n *Expand) Schema() types.Schema {
	in := n.Input.Schema()
	cols := append([]types.Column{}, in.Columns...)
	for _, ns := range n.nulls() {
		for _, c := range ns {
			cols[c].Type = cols[c].Type.Plain()
			cols[c].Type.NotNull = false
		}
	}
	cols = append(cols, types.Column{Name: "$e", Type: types.Type{Kind: types.KindBigInt, NotNull: true}})
	return types.Schema{Columns: cols}
}

// setNames returns the names of the columns each set keeps.
func (n *Expand) setNames() [][]string {
	in := n.Input.Schema()
	out := make([][]string, len(n.Sets))
	for i, s := range n.Sets {
		out[i] = []string{}
		for _, k := range s {
			out[i] = append(out[i], in.Columns[n.Keys[k]].Name)
		}
	}
	return out
}

// String renders the node for EXPLAIN.
func (n *Expand) String() string { return exec.ExpandDesc(n.setNames()) }

// expandNode is the physical Expand: stateless, chained, keeping its
// input's changelog mode; it has no keys (a row becomes several).
type expandNode struct {
	physBase
	x *Expand
}

func (x *Expand) lower(_ *physBuilder, kids []physNode) (physNode, error) {
	in := kids[0].traits()
	return &expandNode{physBase: physBase{kids: kids, tr: traits{schema: x.Schema(), mode: in.mode,
		parallelism: maxParallelism(kids)}}, x: x}, nil
}

func (p *expandNode) operator() {}

func (p *expandNode) desc() string { return p.x.String() }

func (p *expandNode) canon() string { return fmt.Sprintf("expand %v %v", p.x.Keys, p.x.Sets) }

func (p *expandNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	width := p.x.Input.Schema().Len()
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: width + 1,
		New: exec.NewExpand(width, p.x.nulls())}), nil
}
