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
	// computed marks the Calc of a table's computed columns, right above
	// its scan (Scan.lower): mergeComputedCalcs may merge it into the
	// Calc above.
	computed bool
	// idCalcs, set on a merged Calc, are the Calcs it was merged from,
	// lowest first: its id is computed as theirs were, one after the
	// other (idCanons), so that the ids of the operators above it, their
	// state's names in checkpoints, stay what they were without the
	// merge.
	idCalcs []*Calc
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
func (p *calcNode) canon() string { return calcCanon(p.calc) }

// idCanons returns the canonical descriptions assignIDs hashes in turn
// for a merged Calc: those of the Calcs it was merged from.
func (p *calcNode) idCanons() []string {
	if p.idCalcs == nil {
		return nil
	}
	cs := make([]string, len(p.idCalcs))
	for i, c := range p.idCalcs {
		cs[i] = calcCanon(c)
	}
	return cs
}

func calcCanon(c *Calc) string {
	var b strings.Builder
	b.WriteString("calc")
	if c.Cond != nil {
		b.WriteString(" where " + digest(c.Cond))
	}
	for _, e := range c.Exprs {
		b.WriteString(" | " + digest(e))
	}
	return b.String()
}

// mergeComputedCalcs merges, everywhere in the tree under p, a Calc
// directly above the Calc of a table's computed columns into one Calc
// over the scan, so that a source row goes through one projection rather
// than two (the logical mergeCalcs runs before lowering adds the computed
// columns' Calc). The merged Calc keeps the upper one's schema (with its
// time attributes) and keys, and hashes its id as the two did
// (idCalcs). It merges only when the upper Calc reads each computed
// expression that is more than a column or a literal at most once, so
// that none is evaluated twice a row (PROCTIME() included). The watermark
// is the scan's own, over the source's rows, so it is unchanged.
func mergeComputedCalcs(p physNode) (physNode, error) {
	kids := p.Children()
	for i, k := range kids {
		m, err := mergeComputedCalcs(k)
		if err != nil {
			return nil, err
		}
		kids[i] = m
	}
	up, ok := p.(*calcNode)
	if !ok || len(kids) != 1 {
		return p, nil
	}
	lo, ok := kids[0].(*calcNode)
	if !ok || !lo.computed || lo.calc.Cond != nil || !readsOnce(up.calc, lo.calc.Exprs) {
		return p, nil
	}
	cond := up.calc.Cond
	if cond != nil {
		c, err := substituteFold(cond, lo.calc.Exprs)
		if err != nil {
			return nil, err
		}
		cond = c
	}
	es := make([]expr.Expr, len(up.calc.Exprs))
	for i, e := range up.calc.Exprs {
		s, err := substituteFold(e, lo.calc.Exprs)
		if err != nil {
			return nil, err
		}
		es[i] = s
	}
	return &calcNode{
		physBase: physBase{kids: lo.kids, tr: up.tr},
		calc:     &Calc{Input: lo.calc.Input, Cond: cond, Exprs: es, Names: up.calc.Names},
		idCalcs:  []*Calc{lo.calc, up.calc},
	}, nil
}

// readsOnce reports whether c reads each of cols that is more than a
// column or a literal at most once.
func readsOnce(c *Calc, cols []expr.Expr) bool {
	reads := make([]int, len(cols))
	count := func(i int) {
		if i >= 0 && i < len(reads) {
			reads[i]++
		}
	}
	if c.Cond != nil {
		expr.VisitColumns(c.Cond, count)
	}
	for _, e := range c.Exprs {
		expr.VisitColumns(e, count)
	}
	for i, n := range reads {
		if n <= 1 {
			continue
		}
		switch cols[i].(type) {
		case *expr.Column, *expr.Literal:
		default:
			return false
		}
	}
	return true
}

func (p *calcNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	exprs := p.calc.Exprs
	if exprs == nil {
		exprs = []expr.Expr{} // no columns (COUNT(*) needs only rows), not "pass through"
	}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: len(exprs),
		New: exec.NewCalc(p.calc.Cond, exprs)}), nil
}
