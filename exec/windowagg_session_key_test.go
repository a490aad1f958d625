package exec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSessKeyMatchesSlice: a key's sessions (the first in the slot, the
// others in a slice) behave as one plain slice under random adds and
// removes.
func TestSessKeyMatchesSlice(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 13))
	var k sessKey
	var model []openSession
	for step := range 5000 {
		if len(model) > 0 && r.IntN(2) == 0 {
			j := r.IntN(len(model))
			k.remove(j)
			model = slices.Delete(model, j, j+1)
		} else {
			s := openSession{start: int64(step), end: int64(step + r.IntN(10)), acc: int32(step)}
			if got, want := k.add(s), len(model); got != want {
				t.Fatalf("step %d: add returned %d, want %d", step, got, want)
			}
			model = append(model, s)
		}
		if r.IntN(500) == 0 {
			k.reset()
			model = model[:0]
		}
		if int(k.n) != len(model) {
			t.Fatalf("step %d: %d sessions, want %d", step, k.n, len(model))
		}
		for j, s := range model {
			if *k.at(j) != s {
				t.Fatalf("step %d: session %d is %+v, want %+v", step, j, *k.at(j), s)
			}
		}
	}
}
