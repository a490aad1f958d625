package planner

// unionNode is UNION ALL: not an operator, but several inputs of its
// consumer in the job graph. Its mode is the union of its inputs'; it has
// no key.
type unionNode struct {
	physBase
}

func (x *Union) lower(_ *physBuilder, kids []physNode) (physNode, error) {
	t := traits{schema: x.Schema(), parallelism: maxParallelism(kids)}
	for _, k := range kids {
		t.mode = t.mode.Union(k.traits().mode)
	}
	return &unionNode{physBase{kids: kids, tr: t}}, nil
}

func (p *unionNode) desc() string { return "Union(all=[true], union=[" + fields(p.tr.schema) + "])" }

func (p *unionNode) canon() string { return "union" }

func (p *unionNode) addTo(_ *graphBuilder, _ string, ins [][]outlet) ([]outlet, error) {
	var outs []outlet
	for _, o := range ins {
		outs = append(outs, o...)
	}
	return outs, nil
}
