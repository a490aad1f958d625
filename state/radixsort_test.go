package state

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSort checks radixSort against a stable comparison sort by (hi,
// num), for entries that differ in a few low bytes (integer keys of one key
// group), in scattered bytes, in hi only, and not at all, with duplicates
// (the sort is stable: entries keep their idx order among equals).
func TestRadixSort(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	gens := map[string]func() (uint8, uint64){
		"low bytes": func() (uint8, uint64) { return 0x05, 1<<63 | r.Uint64N(1<<20) },
		"scattered": func() (uint8, uint64) { return 0, r.Uint64() & 0xFF00_00FF_0000_FF00 },
		"hi only":   func() (uint8, uint64) { return uint8(r.IntN(4)), 42 },
		"all equal": func() (uint8, uint64) { return 7, 7 },
		"any":       func() (uint8, uint64) { return uint8(r.Uint32()), r.Uint64() },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 300, 5000} {
			a := make([]recEnt, n)
			for i := range a {
				a[i].hi, a[i].num = gen()
				a[i].idx = uint32(i)
			}
			want := slices.Clone(a)
			slices.SortStableFunc(want, compareFixed)
			got := radixSort(slices.Clone(a), make([]recEnt, n))
			if !slices.Equal(got, want) {
				t.Fatalf("%s, %d entries: radixSort differs from a stable sort by (hi, num)", name, n)
			}
		}
	}
}
