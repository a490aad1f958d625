package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/types"
)

// normalizeNode is Flink's ChangelogNormalize: planned right after a
// source that yields an upsert changelog (+I/+U/-D without -U, as
// upsert-kafka), behind a hash exchange on the table's primary key, it
// keeps each key's last row in keyed state and turns the upserts into a
// retract changelog (+I, -U/+U, -D), which every operator and sink takes.
type normalizeNode struct {
	physBase
	keys []int
}

// needsNormalize reports whether in is an upsert changelog that a
// ChangelogNormalize must turn into a retract one.
func needsNormalize(in traits) bool {
	return !in.mode.IsInsertOnly() && !in.mode.Contains(types.UpdateBefore)
}

// newNormalize plans the exchange on the primary key (columns keys of
// in's schema) and the ChangelogNormalize over it.
func newNormalize(b *physBuilder, in physNode, keys []int) *normalizeNode {
	ex := newExchange(in, exec.Partitioning{Kind: exec.Hash, Keys: keys}, b.parallelism)
	t := ex.traits()
	ks := normKeys(keySet{keys})
	n := &normalizeNode{keys: keys}
	n.physBase = physBase{kids: []physNode{ex}, tr: traits{schema: t.schema,
		mode:       connector.ModeOf(types.Insert, types.UpdateBefore, types.UpdateAfter, types.Delete),
		uniqueKeys: ks, upsertKeys: ks, parallelism: t.parallelism}}
	return n
}

func (p *normalizeNode) operator() {}

// desc renders the node as Flink's EXPLAIN does.
func (p *normalizeNode) desc() string {
	names := make([]string, len(p.keys))
	for i, k := range p.keys {
		names[i] = p.tr.schema.Columns[k].Name
	}
	return "ChangelogNormalize(key=[" + strings.Join(names, ", ") + "])"
}

func (p *normalizeNode) updateCause() string { return p.desc() }

func (p *normalizeNode) canon() string { return fmt.Sprintf("normalize keys=%v", p.keys) }

func (p *normalizeNode) addTo(b *graphBuilder, id string, ins [][]outlet) ([]outlet, error) {
	spec := exec.NormalizeSpec{Keys: p.keys, Kinds: kindsOf(p.tr.schema)}
	return b.chain(p, ins[0], exec.OperatorSpec{Name: p.desc(), ID: id, OutWidth: p.tr.schema.Len(), New: exec.NewChangelogNormalize(spec)}), nil
}
