package planner

import (
	"fmt"

	"github.com/weir-sql/weir/exec"
)

// notNullNode checks the NOT NULL columns of a sink's table that its
// input may fill with NULL, as Flink's ConstraintEnforcer does. It keeps
// its input's traits.
type notNullNode struct {
	physBase
	table  string
	cols   []int    // the NOT NULL columns it checks
	names  []string // and their names
	action exec.NotNullAction
}

// notNullEnforcer returns the enforcer of the NOT NULL columns of sink
// x's table which its input in may fill with NULL; nil when the input's
// types prove every NOT NULL column non-null (then nothing is checked at
// run time).
func (b *physBuilder) notNullEnforcer(x *Sink, in physNode) (physNode, error) {
	if x.Table == nil {
		return nil, nil
	}
	schema := in.traits().schema
	var cols []int
	var names []string
	for i, c := range x.Table.Schema.Columns {
		if c.Type.NotNull && i < schema.Len() && !schema.Columns[i].Type.NotNull {
			cols = append(cols, i)
			names = append(names, c.Name)
		}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	action, err := b.p.notNullAction()
	if err != nil {
		return nil, err
	}
	return &notNullNode{physBase: physBase{kids: []physNode{in}, tr: in.traits()},
		table: x.Name, cols: cols, names: names, action: action}, nil
}

func (p *notNullNode) operator() {}

func (p *notNullNode) desc() string { return exec.NotNullDesc(p.names, p.action) }

func (p *notNullNode) canon() string {
	return fmt.Sprintf("notnull %s %v %v", key(p.table), p.cols, p.action)
}

func (p *notNullNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(),
		New: exec.NewNotNullEnforcer(p.table, p.cols, p.names, p.action)}), nil
}
