package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
)

// assignIDs gives every node an id derived from what it computes: a hash of
// its canonical description (expressions over input positions, without
// column names or aliases) and its inputs' ids. An operator's id therefore
// changes only if it or something upstream changes. Operators that compute the
// same thing on the same inputs in one job (two INSERTs computing the same
// aggregate of the same table) get suffixes -2, -3, ... in plan order.
func assignIDs(p *pnode, used map[string]int) {
	h := sha256.New()
	for _, k := range p.kids {
		assignIDs(k, used)
		h.Write([]byte(k.id))
		h.Write([]byte{0})
	}
	h.Write([]byte(p.canon))
	id := hex.EncodeToString(h.Sum(nil))[:16]
	if p.kind == pCalc || p.kind == pAgg || p.kind == pEnforcer {
		// Only operators need unique ids; a source read by two INSERTs
		// hashes alike so that what is built on it does too.
		used[id]++
		if n := used[id]; n > 1 {
			id = fmt.Sprintf("%s-%d", id, n)
		}
	}
	p.id = id
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

func (b *graphBuilder) emit(p *pnode) ([]outlet, error) {
	switch p.kind {
	case pScan:
		v := &exec.Vertex{
			ID:          b.sourceID(p.id),
			Parallelism: p.parallelism,
			Source:      p.source,
			SourceWidth: p.scan.Table.Schema.Len(),
			SourceName:  p.scan.Table.Name,
			Watermark:   p.watermark,
		}
		v.SourceConnector = p.scan.Table.Options["connector"]
		b.g.Vertices = append(b.g.Vertices, v)
		return []outlet{{vertex: len(b.g.Vertices) - 1}}, nil
	case pExchange:
		outs, err := b.emit(p.kids[0])
		if err != nil {
			return nil, err
		}
		for i := range outs {
			part := p.part
			outs[i].part = &part
		}
		return outs, nil
	case pUnion:
		var outs []outlet
		for _, k := range p.kids {
			o, err := b.emit(k)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o...)
		}
		return outs, nil
	}
	outs, err := b.emit(p.kids[0])
	if err != nil {
		return nil, err
	}
	vi := b.attach(p, outs)
	v := b.g.Vertices[vi]
	switch p.kind {
	case pCalc:
		c := p.calc
		exprs := c.Exprs
		if exprs == nil {
			exprs = []expr.Expr{} // no columns (COUNT(*) needs only rows), not "pass through"
		}
		v.Operators = append(v.Operators, exec.OperatorSpec{Name: p.desc, ID: p.id, OutWidth: len(exprs), New: exec.NewCalc(c.Cond, exprs)})
	case pAgg:
		a := p.agg
		calls := make([]exec.AggCall, len(a.Aggs))
		for i, c := range a.Aggs {
			calls[i] = exec.AggCallOf(c)
		}
		v.Operators = append(v.Operators, exec.OperatorSpec{Name: p.desc, ID: p.id, OutWidth: p.schema.Len(), New: exec.NewGroupAgg(a.Keys, calls)})
	case pEnforcer:
		v.Operators = append(v.Operators, exec.OperatorSpec{Name: p.desc, ID: p.id, OutWidth: p.schema.Len(),
			New: exec.NewNotNullEnforcer(p.table, p.notNull, p.notNullNames, p.action)})
	case pSink:
		v.Sink, v.SinkName = p.sink, p.table
	}
	return []outlet{{vertex: vi}}, nil
}

// attach returns the vertex that p's operator joins: the input's vertex when
// p can be chained to it (one input, no exchange, equal parallelism, not
// yet ending in a sink), else a new vertex with one input edge per outlet.
func (b *graphBuilder) attach(p *pnode, outs []outlet) int {
	if len(outs) == 1 && outs[0].part == nil {
		v := b.g.Vertices[outs[0].vertex]
		if v.Parallelism == p.parallelism && v.Sink == nil {
			return outs[0].vertex
		}
	}
	v := &exec.Vertex{Parallelism: p.parallelism}
	for _, o := range outs {
		part := exec.Partitioning{Kind: exec.Forward}
		switch {
		case o.part != nil:
			part = *o.part
		case b.g.Vertices[o.vertex].Parallelism != p.parallelism:
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
