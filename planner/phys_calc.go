package planner

import (
	"strings"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
)

// calcNode is a Calc: a filter and a projection in one operator. It keeps
// its input's mode, and the keys whose columns it passes on unchanged.
type calcNode struct {
	physBase
	calc *Calc
}

func (x *Calc) lower(_ *physBuilder, kids []physNode) (physNode, error) {
	in := kids[0].traits()
	return &calcNode{
		physBase: physBase{kids: kids, tr: traits{schema: x.Schema(), mode: in.mode,
			uniqueKeys:  projectKeys(in.uniqueKeys, x.Exprs),
			upsertKeys:  projectKeys(in.upsertKeys, x.Exprs),
			parallelism: maxParallelism(kids)}},
		calc: x,
	}, nil
}

func (p *calcNode) operator() {}

func (p *calcNode) desc() string { return p.calc.String() }

// canon describes the Calc by its expressions over input positions.
func (p *calcNode) canon() string {
	var b strings.Builder
	b.WriteString("calc")
	if p.calc.Cond != nil {
		b.WriteString(" where " + digest(p.calc.Cond))
	}
	for _, e := range p.calc.Exprs {
		b.WriteString(" | " + digest(e))
	}
	return b.String()
}

func (p *calcNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	exprs := p.calc.Exprs
	if exprs == nil {
		exprs = []expr.Expr{} // no columns (COUNT(*) needs only rows), not "pass through"
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: len(exprs),
		New: exec.NewCalc(p.calc.Cond, exprs)}), nil
}
