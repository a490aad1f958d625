package state

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

// TestGroupSearchHint checks that a group's remembered search answers as
// a fresh search does after entries are inserted and removed, whether by
// the searched suffix or another one: random suffixes, inserted and
// removed at random, each step searched twice (the second from the hint).
func TestGroupSearchHint(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	m := newMemBackend()
	g := &memGroup{prefix: "\x00\x01p"}
	var in []*memEntry
	for step := range 5000 {
		s := fmt.Sprintf("s%02d", r.IntN(40))
		if want, got := g.search(s), m.hint.search(g, s); got != want {
			t.Fatalf("seed %d step %d: search(%q) = %d, want %d", seed, step, s, got, want)
		}
		if r.IntN(2) == 0 { // search again after a change by another suffix
			o := fmt.Sprintf("s%02d", r.IntN(40))
			if i := g.search(o); i < len(g.sufs) && g.sufs[i] == o {
				g.remove(g.ents[i], &m.hint)
			} else {
				e := m.newEntry(g.prefix + o)
				g.insert(e, 1<<30, &m.hint)
				in = append(in, e)
			}
		}
		if want, got := g.search(s), m.hint.search(g, s); got != want {
			t.Fatalf("seed %d step %d: after a change, search(%q) = %d, want %d", seed, step, s, got, want)
		}
	}
	if len(in) == 0 {
		t.Fatal("nothing inserted")
	}
}
