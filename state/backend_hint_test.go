package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

// TestGroupSearchHint checks that a group's remembered search answers as
// a fresh search does after entries are inserted and removed, whether by
// the searched suffix or another one: random suffixes, inserted and
// removed at random, each step searched twice (the second from the hint).
// Suffixes are often prefixes of others ("s1", "s12"), so that searches
// fall between a remembered search and the suffix it found, and inserts
// go at, before and after the remembered position.
func TestGroupSearchHint(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	m := newMemBackend()
	g := &memGroup{prefix: "\x00\x01p"}
	var in []*memEntry
	for step := range 5000 {
		s := fmt.Sprintf("s%d", r.IntN(400))
		if want, got := g.search(s), m.hint.search(g, s); got != want {
			t.Fatalf("seed %d step %d: search(%q) = %d, want %d", seed, step, s, got, want)
		}
		if r.IntN(2) == 0 { // search again after a change by another suffix
			o := fmt.Sprintf("s%d", r.IntN(400))
			if i := g.search(o); i < len(g.sufs) && g.sufs[i] == o {
				g.remove(g.ents[i], &m.hint)
			} else {
				e := m.newEntry(g.prefix + o)
				if r.IntN(2) == 0 {
					g.insert(e, 1<<30, &m.hint)
				} else { // where a search, not the hint's, placed it
					g.insertAt(e, i, &m.hint)
				}
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

// TestGroupSearchHintPrefixes checks the searches the hint answers
// without searching: after a search for a prefix, a key with that prefix
// at the position found (a retraction found by its prefix, then removed),
// and after inserts (at the place a search found) and removals before, at
// and after the hint's position, where it moved. Each answer is compared with a fresh search.
func TestGroupSearchHintPrefixes(t *testing.T) {
	for _, c := range []struct {
		name   string
		sufs   []string
		search string // the first search, remembered
		insert string // then inserted ("" none)
		remove string // then removed ("" none)
		q      string // searched after
		hit    bool   // answered by the hint
	}{
		{name: "same", sufs: []string{"a", "b1", "c"}, search: "b", q: "b", hit: true},
		{name: "found by prefix", sufs: []string{"a", "b1", "b2", "c"}, search: "b", q: "b1", hit: true},
		{name: "between prefix and found", sufs: []string{"a", "b5", "c"}, search: "b", q: "b3"},
		{name: "past found", sufs: []string{"a", "b1", "b2", "c"}, search: "b", q: "b2"},
		{name: "below prefix", sufs: []string{"a", "b1", "c"}, search: "b", q: "a5"},
		{name: "at end", sufs: []string{"a", "b"}, search: "c", q: "d"},
		{name: "empty", sufs: nil, search: "c", q: "d"},
		{name: "found removed", sufs: []string{"a", "b1", "b2", "c"}, search: "b", remove: "b1", q: "b2", hit: true},
		{name: "removed before", sufs: []string{"a", "b1", "c"}, search: "b", remove: "a", q: "b1", hit: true},
		// A removal searches for its key (the hint then is that key's).
		{name: "removed after", sufs: []string{"a", "b1", "c"}, search: "b", remove: "c", q: "b1"},
		{name: "removed after, searched again", sufs: []string{"a", "b1", "c"}, search: "b", remove: "c", q: "c", hit: true},
		{name: "inserted where ended", sufs: []string{"a", "b5", "c"}, search: "b", insert: "b3", q: "b3", hit: true},
		{name: "inserted where ended, then the one after", sufs: []string{"a", "b5", "c"}, search: "b", insert: "b3", q: "b5"},
		{name: "inserted before the found", sufs: []string{"a", "b5", "c"}, search: "b5", insert: "b3", q: "b5", hit: true},
		{name: "inserted where ended, then its prefix", sufs: []string{"a", "b5", "c"}, search: "b3", insert: "b", q: "b3", hit: true},
		{name: "inserted before", sufs: []string{"b", "d1", "e"}, search: "d", insert: "a", q: "d1", hit: true},
		{name: "inserted after", sufs: []string{"a", "d1", "e"}, search: "d", insert: "f", q: "d1", hit: true},
		{name: "inserted equal prefix", sufs: []string{"a", "d1"}, search: "d", insert: "d", q: "d", hit: true},
		{name: "inserted between, then found", sufs: []string{"a", "d5"}, search: "d", insert: "d2", q: "d5"},
		{name: "inserted between, then it", sufs: []string{"a", "d5"}, search: "d", insert: "d2", q: "d2", hit: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMemBackend()
			g := &memGroup{prefix: "\x00\x01p"}
			for _, s := range c.sufs {
				g.insert(m.newEntry(g.prefix+s), 1<<30, &m.hint)
			}
			m.hint.search(g, c.search)
			if c.insert != "" { // at the place a search found (not the hint's)
				g.insertAt(m.newEntry(g.prefix+c.insert), g.search(c.insert), &m.hint)
			}
			if c.remove != "" {
				i := g.search(c.remove)
				g.remove(g.ents[i], &m.hint)
			}
			// The hint still answers its own search as a search does.
			if got, want := m.hint.search(g, unsafeString(m.hint.s)), g.search(unsafeString(m.hint.s)); got != want {
				t.Fatalf("after the changes, the hint's search(%q) = %d, want %d", m.hint.s, got, want)
			}
			hs := string(m.hint.s)
			at, hit := m.hint.lookup(g, c.q)
			if hit != c.hit {
				t.Fatalf("lookup(%q) after search(%q) (hint %q): answered %v, want %v", c.q, c.search, hs, hit, c.hit)
			}
			if want := g.search(c.q); hit && at != want {
				t.Fatalf("lookup(%q) = %d, want %d (sufs %q)", c.q, at, want, g.sufs)
			}
		})
	}
}

// TestGroupSearchHintMoves checks inserted and removed on their own, at
// any position: g.remove and g.insert search their suffix through the
// hint first (so the hint is then theirs and does not move), but the
// hint's position must stay the first suffix >= its own whatever the
// position changed. Random suffixes, one remembered search, then changes
// at random positions, each followed by a check against a fresh search.
func TestGroupSearchHintMoves(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 2))
	for round := range 200 {
		m := newMemBackend()
		g := &memGroup{prefix: "\x00\x01p"}
		for range r.IntN(20) {
			s := fmt.Sprintf("s%d", r.IntN(100))
			if i := g.search(s); i == len(g.sufs) || g.sufs[i] != s {
				g.insertAt(m.newEntry(g.prefix+s), i, &m.hint)
			}
		}
		m.hint.search(g, fmt.Sprintf("s%d", r.IntN(100)))
		for step := range 20 {
			if len(g.sufs) > 0 && r.IntN(2) == 0 { // removed at a random position
				i := r.IntN(len(g.sufs))
				m.hint.removed(g, i)
				g.sufs = slices.Delete(g.sufs, i, i+1)
				g.ents = slices.Delete(g.ents, i, i+1)
			} else { // inserted where it belongs
				s := fmt.Sprintf("s%d", r.IntN(100))
				i := g.search(s)
				if i < len(g.sufs) && g.sufs[i] == s {
					continue
				}
				m.hint.inserted(g, s, i)
				g.sufs = slices.Insert(g.sufs, i, s)
				g.ents = slices.Insert(g.ents, i, m.newEntry(g.prefix+s))
			}
			if want := g.search(string(m.hint.s)); m.hint.at != want {
				t.Fatalf("seed %d round %d step %d: hint %q at %d, want %d (sufs %q)", seed, round, step, m.hint.s, m.hint.at, want, g.sufs)
			}
		}
	}
}
