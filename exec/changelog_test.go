package exec

import (
	"math/rand/v2"
	"slices"

	"github.com/weir-sql/weir/types"
)

// changelogMix says, out of 100, where each step of a random changelog
// ends: a new row below insert, the same live row again below same, a -U/+U
// of a live row below update, the delete of a live row below del, and
// above it the retraction of a row never there. same == insert never
// repeats a row.
type changelogMix struct{ insert, same, update, del int }

// changelogOf describes the rows of a random changelog: next makes a new
// row of key k (a key is drawn below keys), key and values give a row's key
// and columns. With skipLive, a retraction of a "never there" row that
// happens to equal a live one is left out.
type changelogOf[R comparable] struct {
	keys     int64
	mix      changelogMix
	next     func(k int64) R
	key      func(R) int64
	values   func(R) []types.Value
	skipLive bool
}

// make returns a random changelog of at least n rows drawn from rng, and
// the rows live at its end (the batch input it amounts to).
func (c changelogOf[R]) make(rng *rand.Rand, n int) (kinds []types.RowKind, rows [][]types.Value, live []R) {
	add := func(k types.RowKind, r R) { kinds, rows = append(kinds, k), append(rows, c.values(r)) }
	for len(rows) < n {
		switch p := rng.IntN(100); {
		case len(live) == 0 || p < c.mix.insert:
			r := c.next(rng.Int64N(c.keys))
			live = append(live, r)
			add(types.Insert, r)
		case p < c.mix.same:
			r := live[rng.IntN(len(live))]
			live = append(live, r)
			add(types.Insert, r)
		case p < c.mix.update:
			i := rng.IntN(len(live))
			r := c.next(c.key(live[i]))
			add(types.UpdateBefore, live[i])
			add(types.UpdateAfter, r)
			live[i] = r
		case p < c.mix.del:
			i := rng.IntN(len(live))
			add(types.Delete, live[i])
			live = slices.Delete(live, i, i+1)
		default:
			r := c.next(rng.Int64N(c.keys))
			if !c.skipLive || !slices.Contains(live, r) {
				add(types.Delete, r) // never inserted: ignored
			}
		}
	}
	return kinds, rows, live
}
