package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/types"
)

// Replicate emits each input row as many times as its last column (a
// BIGINT count; NULL or <= 0: not at all), without that column: the
// replicate_rows table function by which Flink rewrites INTERSECT ALL and
// EXCEPT ALL. Each copy keeps its row's kind, so a retraction of a count
// retracts that many copies.
type Replicate struct {
	Input Node
}

// Children returns the input.
func (n *Replicate) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Replicate) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the input's columns but the last.
func (n *Replicate) Schema() types.Schema {
	in := n.Input.Schema()
	return types.Schema{Columns: in.Columns[: in.Len()-1 : in.Len()-1]}
}

// String renders the node for EXPLAIN.
func (n *Replicate) String() string { return "Logical" + n.desc() }

func (n *Replicate) desc() string {
	in := n.Input.Schema()
	return "ReplicateRows(count=[" + in.Columns[in.Len()-1].Name + "], select=[" + strings.Join(n.Schema().Names(), ", ") + "])"
}

// replicateNode is the physical Replicate: stateless, chained, keeping
// its input's changelog mode; it has no keys (a row becomes several).
type replicateNode struct {
	physBase
	x *Replicate
}

func (x *Replicate) lower(_ *physBuilder, kids []physNode) (physNode, error) {
	in := kids[0].traits()
	return &replicateNode{physBase: physBase{kids: kids, tr: traits{schema: x.Schema(), mode: in.mode,
		parallelism: maxParallelism(kids)}}, x: x}, nil
}

func (p *replicateNode) operator() {}

func (p *replicateNode) desc() string { return p.x.desc() }

func (p *replicateNode) canon() string { return fmt.Sprintf("replicate %d", p.x.Input.Schema().Len()) }

func (p *replicateNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	width := p.x.Input.Schema().Len() - 1
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: width,
		New: exec.NewReplicate(width, width)}), nil
}
