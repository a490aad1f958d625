package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/exec"
)

// exchangeNode redistributes its input's rows to its consumer's subtasks:
// an edge of the job graph, not an operator. It keeps its input's mode; a
// hash exchange keeps the upsert keys that contain its hash columns (all
// changes of such a key go to one subtask, in order), a single-subtask
// exchange keeps them all, a rebalance none. Unique keys stay.
type exchangeNode struct {
	physBase
	part exec.Partitioning
}

// newExchange makes an exchange of in's rows to a consumer of the given
// parallelism.
func newExchange(in physNode, part exec.Partitioning, parallelism int) *exchangeNode {
	t := in.traits()
	t.parallelism = parallelism
	switch part.Kind {
	case exec.Hash:
		t.upsertKeys = keysContaining(t.upsertKeys, part.Keys)
	case exec.Global:
	default:
		t.upsertKeys = nil // a rebalance reorders the changes of a key
	}
	return &exchangeNode{physBase: physBase{kids: []physNode{in}, tr: t}, part: part}
}

func (p *exchangeNode) desc() string {
	switch p.part.Kind {
	case exec.Global:
		return "Exchange(distribution=[single])"
	case exec.Hash:
		names := make([]string, len(p.part.Keys))
		for i, k := range p.part.Keys {
			names[i] = p.tr.schema.Columns[k].Name
		}
		return "Exchange(distribution=[hash[" + strings.Join(names, ", ") + "]])"
	}
	return "Exchange(distribution=[" + strings.ToLower(p.part.Kind.String()) + "])"
}

func (p *exchangeNode) canon() string { return fmt.Sprintf("exchange %v %v", p.part.Kind, p.part.Keys) }

func (p *exchangeNode) addTo(_ *graphBuilder, _ string, ins [][]outlet) ([]outlet, error) {
	outs := ins[0]
	for i := range outs {
		part := p.part
		outs[i].part = &part
	}
	return outs, nil
}
