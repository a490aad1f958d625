package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// physNode is a node of the physical plan: an operator with its
// parallelism, an exchange between operators, or a union (which becomes
// several inputs of its consumer in the job graph). Nodes are immutable:
// each is made from its inputs by its kind's constructor, which derives
// its traits bottom-up; operator ids are kept apart (assignIDs). Each kind
// lives in its own file (phys_*.go); adding an operator is adding one.
type physNode interface {
	// Children returns the inputs.
	Children() []physNode
	// traits returns the output schema, changelog mode, keys and
	// parallelism.
	traits() traits
	// desc is the operator's description as EXPLAIN prints it, e.g.
	// "Calc(select=[a, b])" (label adds the traits).
	desc() string
	// canon describes what the node computes, without column names or
	// aliases: with its inputs' ids, the basis of its id.
	canon() string
	// addTo adds the node to the job graph under construction, given the
	// outlets of each of its inputs, and returns its own outlets. id is
	// the node's operator id.
	addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error)
}

// operatorNode is a physNode that runs an operator of its own (Calc,
// GroupAggregate, …): its id must be unique in the job, as the id keys
// its state in checkpoints.
type operatorNode interface {
	physNode
	operator()
}

// updateOrigin is a physNode that can make a changelog of insert-only
// input, or reads one: a sink that cannot take updates names it in its
// error (updateCauses).
type updateOrigin interface {
	physNode
	// updateCause names the node in "… because of X".
	updateCause() string
}

// lowerable is a logical node with a physical operator: lower makes it
// from its inputs, already lowered.
type lowerable interface {
	lower(b *physBuilder, kids []physNode) (physNode, error)
}

// traits are what a physical node's consumers and EXPLAIN know of its
// result.
type traits struct {
	schema      types.Schema
	mode        connector.ChangelogMode
	uniqueKeys  keySet // sets of columns unique in the result; nil: none known
	upsertKeys  keySet // sets of columns by which the changes apply; nil: none known
	parallelism int
}

// physBase holds what every node has: its inputs and traits.
type physBase struct {
	kids []physNode
	tr   traits
}

// Children returns the inputs.
func (p *physBase) Children() []physNode { return p.kids }

func (p *physBase) traits() traits { return p.tr }

// label is a node's line in EXPLAIN: its description with its changelog
// mode and keys (unique keys only where they differ from the upsert keys).
func label(p physNode) string {
	d, t := p.desc(), p.traits()
	s := d[:len(d)-1] + ", changelogMode=[" + t.mode.String() + "]"
	if t.upsertKeys != nil {
		s += ", upsertKeys=" + keysText(t.upsertKeys, t.schema)
	}
	if t.uniqueKeys != nil && !slices.EqualFunc(t.uniqueKeys, t.upsertKeys, slices.Equal) {
		s += ", uniqueKeys=" + keysText(t.uniqueKeys, t.schema)
	}
	return s + ")"
}

// physBuilder lowers optimized logical plans to physical ones.
type physBuilder struct {
	p           *Planner
	parallelism int
	sinks       func(s *Sink, updating bool) (connector.Sink, error)
	pos         parser.Pos // the statement, for errors
}

func fields(s types.Schema) string { return strings.Join(s.Names(), ", ") }

// build lowers n and its inputs, inputs first.
func (b *physBuilder) build(n Node) (physNode, error) {
	var kids []physNode
	for _, k := range n.Children() {
		pk, err := b.build(k)
		if err != nil {
			return nil, err
		}
		kids = append(kids, pk)
	}
	l, ok := n.(lowerable)
	if !ok {
		return nil, fmt.Errorf("planner: no physical operator for %T", n)
	}
	return l.lower(b, kids)
}

func maxParallelism(ps []physNode) int {
	m := 1
	for _, p := range ps {
		m = max(m, p.traits().parallelism)
	}
	return m
}
