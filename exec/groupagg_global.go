package exec

import (
	"fmt"
	"slices"

	"github.com/weir-sql/weir/types"
)

// NewGlobalGroupAgg returns a factory for the global phase of a two-phase
// GroupAggregate: its input is the partial rows of NewLocalGroupAgg
// (nkeys key columns, the row count, the accumulators' state), which it
// merges into its groups; its state, checkpoints and output (+I, -U/+U)
// are the GroupAggregate's (NewGroupAgg) over the rows the partials stand
// for.
func NewGlobalGroupAgg(nkeys int, calls []AggCall) func() Operator {
	keys := make([]int, nkeys)
	for i := range keys {
		keys[i] = i
	}
	return func() Operator {
		g := newGroupAggOp(keys, calls)
		g.partial = true
		return g
	}
}

// scratchGroup returns a group outside the index (never registered, touched or
// stored) that a partial's state is loaded into before it is merged.
func (g *groupAggOp) scratchGroup() int32 {
	if g.scratchGi < 0 {
		g.scratchGi = int32(len(g.heads))
		g.heads = append(g.heads, groupHead{})
		for _, acc := range g.accs {
			acc.grow()
		}
	}
	return g.scratchGi
}

// mergePartials merges a batch of partial rows into their groups: first it
// finds every row's group and keeps the touched groups' last results (as
// Process does), then it adds each partial's row count and merges its
// accumulators' state.
func (g *groupAggOp) mergePartials(b *types.Batch) error {
	nk := len(g.keys)
	if b.Width != nk+PartialGroupCols {
		return fmt.Errorf("%s: partial rows of %d columns, want %d", g.name, b.Width, nk+PartialGroupCols)
	}
	n := b.Len()
	gis := slices.Grow(g.gis[:0], n)[:n]
	g.gis = gis
	first := len(g.touched)
	for i := range gis {
		if b.Kinds[i].IsRetraction() {
			return fmt.Errorf("%s: a partial row is %s", g.name, b.Kinds[i])
		}
		gi, _, err := g.findGroup(b.Row(i), false)
		if err != nil {
			return err
		}
		gis[i] = gi
		if !g.heads[gi].dirty {
			g.touch(gi)
		}
	}
	g.recordBefore(first)
	sc := g.scratchGroup()
	for i, gi := range gis {
		row := b.Row(i)
		g.heads[gi].count += row[nk].Int()
		g.partBuf = append(g.partBuf[:0], row[nk+1].Str()...)
		src := g.partBuf
		for _, acc := range g.accs {
			acc.reset(sc)
			var err error
			if src, err = acc.load(sc, src); err != nil {
				return fmt.Errorf("%s: partial row: %w", g.name, err)
			}
			acc.merge(gi, sc)
		}
	}
	return nil
}
