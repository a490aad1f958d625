package state

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestAroundCallbackWriteIsError checks that a callback of Around that
// changes state gets an error (in memory Around reads the group in place,
// so a change would move the entries under it), in the memory backend
// and in the hybrid one before it spills, from either side.
func TestAroundCallbackWriteIsError(t *testing.T) {
	mem, err := NewMemory(Options{MaxParallelism: revMaxPar})
	must(t, err)
	memS, err := NewSortedMapState(mem, "s", Int64{}, Int64{})
	must(t, err)
	hyb := revOpen(t, filepath.Join(t.TempDir(), "a"), nil, 0, 1, 64<<20)
	defer hyb.st.Close()
	for _, c := range []struct {
		name string
		k    *Keyed
		s    *SortedMapState[int64, int64]
	}{{"memory", mem, memS}, {"hybrid", hyb.k, hyb.s}} {
		must(t, c.k.SetCurrentKey(Int64{}.Append(nil, 7)))
		for i := range int64(10) {
			must(t, c.s.Put(i*10, i))
		}
		noop := func(int64, int64) (bool, error) { return true, nil }
		put := func(k, _ int64) (bool, error) { return true, c.s.Put(k+1, 0) }
		del := func(k, _ int64) (bool, error) { return true, c.s.Remove(k) }
		for _, tc := range []struct {
			name        string
			below, from func(int64, int64) (bool, error)
		}{{"put below", put, noop}, {"remove from", noop, del}} {
			if err := c.s.Around(45, tc.below, tc.from); !errors.Is(err, errChangedInAround) {
				t.Fatalf("%s: %s in a callback: err %v, want errChangedInAround", c.name, tc.name, err)
			}
		}
		// Reads only: no error, and the entries are all there.
		n := 0
		count := func(int64, int64) (bool, error) { n++; return true, nil }
		must(t, c.s.Around(45, count, count))
		if n != 10 { // 10 puts, 41 put by the first failing callback, 50 removed by the second
			t.Fatalf("%s: %d entries after the refused callbacks, want 10", c.name, n)
		}
	}
}
