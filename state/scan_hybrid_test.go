package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

// TestScanChangesHybrid is the review's companion of TestScanChangesRandom
// for the two backend states that test leaves out: a hybrid backend still
// in memory whose entries were written back (so a remove buries a stored
// entry in its group's dead list and a put revives the same entry), and
// one that spills in the middle of the scan (fn's chunk lists memory
// entries, the rest of the scan reads the store). fn removes, changes,
// adds, and removes then re-adds keys ahead of, behind and at the scan's
// position, sometimes from a nested scan. Each entry that comes must be the
// next key of a model kept here, with its current value; nothing may be
// left after the scan.
func TestScanChangesHybrid(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 19))
	for _, mode := range []string{"stored", "spill-mid-scan"} {
		for _, desc := range []bool{false, true} {
			for round := range 4 {
				name := fmt.Sprintf("seed %d %s desc=%v round %d", seed, mode, desc, round)
				k := newTestKeyedCache(t, true, Options{}, 64<<20)
				h, ok := k.be.(*hybridBackend)
				if !ok || h.mem == nil {
					t.Fatalf("%s: not a hybrid backend in memory", name)
				}
				s, err := NewSortedMapState(k, "s", Int64{}, Int64{})
				if err != nil {
					t.Fatal(err)
				}
				if err := k.SetCurrentKey([]byte("k")); err != nil {
					t.Fatal(err)
				}
				model := map[int64]int64{}
				for range 300 {
					key := int64(r.IntN(600))
					model[key] = key
					if err := s.Put(key, key); err != nil {
						t.Fatal(err)
					}
				}
				// Stored: removes bury entries, puts revive them.
				if err := h.writeBack(); err != nil {
					t.Fatal(err)
				}
				spillAt := -1
				if mode == "spill-mid-scan" {
					spillAt = 1 + r.IntN(40)
				}
				keys := func() []int64 {
					ks := make([]int64, 0, len(model))
					for key := range model {
						ks = append(ks, key)
					}
					slices.Sort(ks)
					if desc {
						slices.Reverse(ks)
					}
					return ks
				}
				next := func(pos int64, started bool) (int64, bool) {
					for _, key := range keys() {
						if !started || (!desc && key > pos) || (desc && key < pos) {
							return key, true
						}
					}
					return 0, false
				}
				var pos int64
				started, came := false, 0
				put := func(key, v int64) error { model[key] = v; return s.Put(key, v) }
				del := func(key int64) error { delete(model, key); return s.Remove(key) }
				change := func() error {
					// Near the position, ahead or behind (or at it).
					key := pos + int64(r.IntN(41)-20)
					if key < 0 {
						key = 0
					}
					switch r.IntN(4) {
					case 0:
						return del(key)
					case 1: // remove, then put back
						if err := del(key); err != nil {
							return err
						}
						return put(key, -key-1)
					default:
						return put(key, -int64(r.IntN(1e6)))
					}
				}
				fn := func(key, v int64) (bool, error) {
					want, ok := next(pos, started)
					if !ok || key != want || v != model[key] {
						return false, fmt.Errorf("%s: after %d came %d=%d, want %d=%d (present %v)", name, pos, key, v, want, model[want], ok)
					}
					pos, started = key, true
					came++
					if came == spillAt {
						if err := h.spill(); err != nil {
							return false, err
						}
					}
					for range r.IntN(4) {
						if err := change(); err != nil {
							return false, err
						}
					}
					if r.IntN(10) == 0 {
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
					t.Fatalf("%s: the scan ended at %d, the map holds %d after it", name, pos, key)
				}
				if spillAt > 0 && h.mem != nil {
					t.Fatalf("%s: did not spill", name)
				}
				// The map read afresh equals the model.
				var got []int64
				if err := s.Ascend(func(key, v int64) (bool, error) {
					if v != model[key] {
						return false, fmt.Errorf("%s: after the scan %d=%d, want %d", name, key, v, model[key])
					}
					got = append(got, key)
					return true, nil
				}); err != nil {
					t.Fatal(err)
				}
				want := keys()
				if desc {
					slices.Reverse(want)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: after the scan the map holds %v, want %v", name, got, want)
				}
			}
		}
	}
}
