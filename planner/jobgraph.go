package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/weir-sql/weir/exec"
)

// assignIDs gives every node an id derived from what it computes: a hash of
// its canonical description (expressions over input positions, without
// column names or aliases) and its inputs' ids. An operator's id therefore
// changes only if it or something upstream changes. Operators that compute the
// same thing on the same inputs in one job (two INSERTs computing the same
// aggregate of the same table) get suffixes -2, -3, ... in plan order.
func assignIDs(p physNode, used map[string]int, ids map[physNode]string) {
	h := sha256.New()
	for _, k := range p.Children() {
		assignIDs(k, used, ids)
		h.Write([]byte(ids[k]))
		h.Write([]byte{0})
	}
	canons := []string{p.canon()}
	if m, ok := p.(interface{ idCanons() []string }); ok && m.idCanons() != nil {
		canons = m.idCanons()
	}
	var id string
	for i, c := range canons {
		if i > 0 {
			// A merged node: the next layer over the id just made.
			h = sha256.New()
			h.Write([]byte(id))
			h.Write([]byte{0})
		}
		h.Write([]byte(c))
		id = hex.EncodeToString(h.Sum(nil))[:16]
		if _, ok := p.(operatorNode); ok {
			// Only operators need unique ids; a source read by two INSERTs
			// hashes alike so that what is built on it does too.
			used[id]++
			if n := used[id]; n > 1 {
				id = fmt.Sprintf("%s-%d", id, n)
			}
		}
	}
	ids[p] = id
}

// outlet is an output of the job graph under construction that a consumer
// can attach to: the tail of a vertex, possibly through an exchange.
type outlet struct {
	vertex int
	part   *exec.Partitioning // nil: no exchange (forward or chain)
}

type graphBuilder struct {
	g       *exec.JobGraph
	sources map[string]int // source ids handed out, for duplicates
}

// sourceID returns the id of a source vertex: its scan's id, suffixed -2,
// -3, ... when the same table is scanned again in the job (each scan has its
// own positions in checkpoints).
func (b *graphBuilder) sourceID(id string) string {
	if b.sources == nil {
		b.sources = map[string]int{}
	}
	b.sources[id]++
	if n := b.sources[id]; n > 1 {
		return fmt.Sprintf("%s-%d", id, n)
	}
	return id
}

// emit adds p and its inputs to the job graph, inputs first, and returns
// p's outlets.
func (b *graphBuilder) emit(p physNode, ids map[physNode]string) ([]outlet, error) {
	kids := p.Children()
	ins := make([][]outlet, len(kids))
	for i, k := range kids {
		outs, err := b.emit(k, ids)
		if err != nil {
			return nil, err
		}
		ins[i] = outs
	}
	return p.addTo(b, ids[p], ins)
}

// chain adds the operator of p (one input, reached through outs) to the
// vertex attach picks, and returns that vertex as p's outlet.
func (b *graphBuilder) chain(p physNode, outs []outlet, op exec.OperatorSpec) []outlet {
	vi := b.attach(p.traits().parallelism, outs)
	v := b.g.Vertices[vi]
	v.Operators = append(v.Operators, op)
	return []outlet{{vertex: vi}}
}

// attach returns the vertex that an operator of the given parallelism
// joins: the input's vertex when it can be chained to it (one input, no
// exchange, equal parallelism, not yet ending in a sink), else a new vertex
// with one input edge per outlet.
func (b *graphBuilder) attach(parallelism int, outs []outlet) int {
	if len(outs) == 1 && outs[0].part == nil {
		v := b.g.Vertices[outs[0].vertex]
		if v.Parallelism == parallelism && v.Sink == nil {
			return outs[0].vertex
		}
	}
	v := &exec.Vertex{Parallelism: parallelism}
	for _, o := range outs {
		part := exec.Partitioning{Kind: exec.Forward}
		switch {
		case o.part != nil:
			part = *o.part
		case b.g.Vertices[o.vertex].Parallelism != parallelism:
			part = exec.Partitioning{Kind: exec.Rebalance}
		}
		v.Inputs = append(v.Inputs, exec.Input{From: o.vertex, Partition: part})
	}
	b.g.Vertices = append(b.g.Vertices, v)
	return len(b.g.Vertices) - 1
}

func shortName(desc string) string {
	if i := strings.IndexByte(desc, '('); i > 0 {
		return desc[:i]
	}
	return desc
}

// nameVertices names each vertex after its chain, e.g. "Source: t -> Calc -> Sink: out".
func nameVertices(g *exec.JobGraph) {
	for _, v := range g.Vertices {
		var parts []string
		if v.Source != nil {
			parts = append(parts, "Source: "+v.SourceName)
		}
		for _, op := range v.Operators {
			parts = append(parts, shortName(op.Name))
		}
		if v.Sink != nil {
			parts = append(parts, "Sink: "+v.SinkName)
		}
		v.Name = strings.Join(parts, " -> ")
	}
}

func partitionText(p exec.Partitioning) string {
	if p.Kind != exec.Hash {
		return p.Kind.String()
	}
	ks := make([]string, len(p.Keys))
	for i, k := range p.Keys {
		ks[i] = fmt.Sprint(k)
	}
	return "HASH[" + strings.Join(ks, ", ") + "]"
}

// graphText renders the job graph for EXPLAIN.
func graphText(g *exec.JobGraph) string {
	var b strings.Builder
	for i, v := range g.Vertices {
		fmt.Fprintf(&b, "Vertex %d: %s (parallelism=%d)\n", i, v.Name, v.Parallelism)
		for _, in := range v.Inputs {
			fmt.Fprintf(&b, "  input: vertex %d, %s\n", in.From, partitionText(in.Partition))
		}
		if v.Source != nil {
			fmt.Fprintf(&b, "  source: %s\n", v.SourceName)
		}
		for _, op := range v.Operators {
			fmt.Fprintf(&b, "  operator %s: %s\n", op.ID, op.Name)
		}
		if v.Sink != nil {
			fmt.Fprintf(&b, "  sink: %s\n", v.SinkName)
		}
	}
	return b.String()
}
