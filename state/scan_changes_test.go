package state

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
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

// TestScanChangesRandom: scans of a sorted map (ascending and
// descending, in memory and spilled) whose fn, at random, removes, changes
// and adds entries ahead of and behind the scan, also from inside a nested
// scan. Each entry that comes must be, at that moment, the next entry of
// the map (a model kept here) after the previous one, with its current
// value: nothing removed comes, no entry in the map is skipped, changes
// are seen.
func TestScanChangesRandom(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 21))
	for _, spilled := range []bool{false, true} {
		for _, desc := range []bool{false, true} {
			k := newTestKeyedCache(t, spilled, Options{}, 1<<10)
			s, err := NewSortedMapState(k, "s", Int64{}, Int64{})
			if err != nil {
				t.Fatal(err)
			}
			if err := k.SetCurrentKey([]byte("k")); err != nil {
				t.Fatal(err)
			}
			model := map[int64]int64{}
			for range 400 {
				key := int64(r.IntN(1000))
				model[key] = key
				if err := s.Put(key, key); err != nil {
					t.Fatal(err)
				}
			}
			// next returns the model's next key after pos (before it when
			// descending); ok is false when there is none.
			next := func(pos int64, started bool) (int64, bool) {
				best, ok := int64(0), false
				for key := range model {
					after := !started || (!desc && key > pos) || (desc && key < pos)
					if after && (!ok || (!desc && key < best) || (desc && key > best)) {
						best, ok = key, true
					}
				}
				return best, ok
			}
			change := func() error {
				key := int64(r.IntN(1000))
				if r.IntN(3) == 0 {
					delete(model, key)
					return s.Remove(key)
				}
				v := -int64(r.IntN(1e6))
				model[key] = v
				return s.Put(key, v)
			}
			var pos int64
			started, came := false, 0
			fn := func(key, v int64) (bool, error) {
				want, ok := next(pos, started)
				if !ok || key != want || v != model[key] {
					return false, fmt.Errorf("seed %d spilled=%v desc=%v: after %d came %d=%d, want %d=%d (present %v)", seed, spilled, desc, pos, key, v, want, model[want], ok)
				}
				pos, started = key, true
				came++
				for range r.IntN(4) {
					if err := change(); err != nil {
						return false, err
					}
				}
				if r.IntN(10) == 0 {
					// A nested scan that changes state too.
					err := s.Ascend(func(int64, int64) (bool, error) { return false, change() })
					if err != nil {
						return false, err
					}
				}
				return true, nil
			}
			if desc {
				err = s.Descend(fn)
			} else {
				err = s.Ascend(fn)
			}
			if err != nil {
				t.Fatal(err)
			}
			if key, ok := next(pos, started); ok {
				t.Fatalf("seed %d spilled=%v desc=%v: the scan ended at %d, the map holds %d after it", seed, spilled, desc, pos, key)
			}
			if came < 100 {
				t.Fatalf("seed %d: only %d entries came", seed, came)
			}
		}
	}
}
