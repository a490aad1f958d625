package state

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

// TestSortDirtyOrder checks sortDirty (a checkpoint's order of the changed
// entries: by their first 32 bytes as words, then whole keys) against
// sorting the keys as strings: keys of 0 to 48 bytes over a small
// alphabet with zero bytes, many sharing long prefixes (32 bytes and
// more), prefixes of one another and zero-padded look-alikes ("ab" and
// "ab\x00").
func TestSortDirtyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t), 20))
	for round := range 200 {
		bases := make([]string, 1+r.IntN(4))
		for i := range bases {
			b := make([]byte, r.IntN(40))
			for j := range b {
				b[j] = "\x00\x01ab\xff"[r.IntN(5)]
			}
			bases[i] = string(b)
		}
		seen := map[string]bool{}
		var d []*memEntry
		for range r.IntN(300) {
			k := bases[r.IntN(len(bases))]
			k = k[:r.IntN(len(k)+1)]
			for range r.IntN(12) {
				k += string("\x00\x01ab\xff"[r.IntN(5)])
			}
			if r.IntN(8) == 0 {
				k += strings.Repeat("\x00", r.IntN(4))
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			d = append(d, &memEntry{key: k})
		}
		want := make([]string, len(d))
		for i, e := range d {
			want[i] = e.key
		}
		slices.Sort(want)
		ds := sortDirty(d)
		got := make([]string, len(ds))
		for i, de := range ds {
			got[i] = de.e.key
		}
		if !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("round %d: at %d of %d: %q, want %q", round, i, len(got), got[i], want[i])
				}
			}
		}
	}
}

// TestSortDirtyEdges (review): sortDirty on keys around the 32 bytes it
// compares as words: 31, 32 and 33 bytes differing only at their last
// byte, a key and itself followed by zeros (shorter, equal words), bytes
// 0x7f and 0x80 (the words are unsigned), every permutation's order the
// same as sorting the strings.
func TestSortDirtyEdges(t *testing.T) {
	p31 := strings.Repeat("\x00", 31)
	p32 := strings.Repeat("\xff", 32)
	keys := []string{
		"", "\x00", "\x00\x00", "ab", "ab\x00", "ab\x00\x00", "ab\x01", "a\x7f", "a\x80", "a\xff",
		p31, p31 + "\x00", p31 + "\x01", p31 + "\x00\x00", p31 + "\x00\x01",
		p32, p32 + "\x00", p32 + "\x01", p32 + "\x00\x00", p32[:31] + "\xfe", p32[:31] + "\xfe\xff",
		strings.Repeat("\x80", 8) + "\x7f", strings.Repeat("\x7f", 8) + "\x80", strings.Repeat("\x80", 9),
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	r := rand.New(rand.NewPCG(testseed.Seed(t), 21))
	for range 200 {
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		d := make([]*memEntry, len(keys))
		for i, k := range keys {
			d[i] = &memEntry{key: k}
		}
		ds := sortDirty(d)
		for i, de := range ds {
			if de.e.key != want[i] {
				t.Fatalf("at %d: %q, want %q", i, de.e.key, want[i])
			}
		}
	}
}
