package state

import (
	"fmt"
	"testing"
)

// TestScanSeesChangesAhead checks what Keyed.scan promised: fn "sees
// changes to keys it has not reached yet". An ascending scan of 200
// entries (value = key) removes key 2 and sets key 3 to -3 (in the scan's
// first chunk), removes 150 and sets 160 to -160 (in a later one) when it
// reaches key 0, in memory and over the store (spilled: the memory budget
// is far below the state).
func TestScanSeesChangesAhead(t *testing.T) {
	for _, spilled := range []bool{false, true} {
		t.Run(fmt.Sprintf("spilled=%v", spilled), func(t *testing.T) {
			k := newTestKeyedCache(t, spilled, Options{}, 1<<10)
			s, err := NewSortedMapState(k, "s", Int64{}, Int64{})
			if err != nil {
				t.Fatal(err)
			}
			if err := k.SetCurrentKey([]byte("k")); err != nil {
				t.Fatal(err)
			}
			const n = 200
			for i := range int64(n) {
				if err := s.Put(i, i); err != nil {
					t.Fatal(err)
				}
			}
			if h, ok := k.be.(*hybridBackend); spilled && (!ok || h.mem != nil) {
				t.Fatal("the state did not spill")
			}
			removed := map[int64]bool{2: true, 150: true}
			changed := map[int64]int64{3: -3, 160: -160}
			var got []int64
			err = s.Ascend(func(key, v int64) (bool, error) {
				if key == 0 {
					for r := range removed {
						if err := s.Remove(r); err != nil {
							return false, err
						}
					}
					for c, nv := range changed {
						if err := s.Put(c, nv); err != nil {
							return false, err
						}
					}
				}
				if removed[key] {
					t.Errorf("key %d came after fn removed it", key)
				}
				want := key
				if nv, ok := changed[key]; ok {
					want = nv
				}
				if v != want {
					t.Errorf("key %d came with %d, want %d (set by fn before the scan reached it)", key, v, want)
				}
				got = append(got, key)
				return true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n-len(removed) {
				t.Errorf("%d entries came, want %d", len(got), n-len(removed))
			}
		})
	}
}
