package minheap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type item struct{ at, id int64 }

func (a item) Less(b item) bool { return a.at < b.at }

// TestHeapSorts pushes and pops random items, interleaved, and checks that
// every pop returns the least time left (compared with a sorted copy).
func TestHeapSorts(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	var h []item
	var ref []int64
	for step := range 20000 {
		if len(h) > 0 && r.IntN(3) == 0 {
			var got item
			got, h = Pop(h)
			slices.Sort(ref)
			if got.at != ref[0] {
				t.Fatalf("step %d: popped %d, least is %d", step, got.at, ref[0])
			}
			ref = ref[1:]
			continue
		}
		e := item{at: r.Int64N(500), id: int64(step)}
		h = Push(h, e)
		ref = append(ref, e.at)
	}
	if len(h) != len(ref) {
		t.Fatalf("%d left, want %d", len(h), len(ref))
	}
}
