package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// reviewDropper is fakeOwner as a RecordDropper: a spill keeps the records
// Touched since the last one and frees the others' slots (reused later).
type reviewDropper struct{ *fakeOwner }

func (d reviewDropper) DropRecord(slot int32) { d.remove(slot) }

// TestReviewRecordsLazyKGSpillWith drives records with lazy key groups
// (AddedInt) through the paths the base test leaves out: spills with a
// RecordDropper (Touched records kept, the others' slots reused, adds
// then eager as Records is backed, Load of spilled keys), and
// SnapshotWith of a second Records whose entries live in the key group
// of their record (AddedInKeyGroup with KeyGroupOf, as GroupAgg's
// DISTINCT entries). After every SnapshotWith both names' stored entries
// must equal the Go model, each in the key group of its integer key
// (xxhash64 % 128, computed here); the last snapshot is restored at
// parallelism 1, 2 and 3, each subtask holding exactly its key groups'
// records.
func TestReviewRecordsLazyKGSpillWith(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1019))
	const maxPar = 128
	kgOfKey := func(key []byte) int { return int(xxhash.Sum64(key) % maxPar) }
	dir := t.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "work"), statestore.Options{CacheBytes: 64 << 20, MaxParallelism: maxPar})
	must(t, err)
	opts := RecordOptions{Name: "recs", OperatorID: "op", Budget: 64 << 20, RecordBytes: 64, MaxParallelism: maxPar}
	gopts := opts
	gopts.Name = "dist"
	own := reviewDropper{newFakeOwner()}
	gown := newFakeOwner()
	rec, err := NewRecords(opts, own)
	must(t, err)
	grp, err := NewRecords(gopts, gown)
	must(t, err)
	must(t, rec.Attach(st, false))
	must(t, grp.Attach(st, false))
	// stored returns what the store holds under prefix, keyed by the
	// integer key's encoding, checking each entry's key group.
	stored := func(s *statestore.Store, prefix []byte, first, last int) (map[string]int64, error) {
		sp, err := s.Space("op")
		if err != nil {
			return nil, err
		}
		got := map[string]int64{}
		for kg := first; kg <= last; kg++ {
			err := sp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
				if !bytes.HasPrefix(k, prefix) {
					return true, nil
				}
				x, n := binary.Varint(v)
				if n != len(v) {
					return false, fmt.Errorf("bad entry %x %x", k, v)
				}
				key := k[len(prefix):]
				if want := kgOfKey(key); want != kg {
					return false, fmt.Errorf("%s key %x stored in key group %d, its key group is %d", prefix[1:], key, kg, want)
				}
				got[string(key)] = x
				return true, nil
			})
			if err != nil {
				return nil, err
			}
		}
		return got, nil
	}
	model := map[string]int64{} // records changed at least once: written
	// dist returns the entries of m that grp holds too (keys % 3 == 0).
	dist := func(m map[string]int64) map[string]int64 {
		d := map[string]int64{}
		for ks, v := range m {
			if keyInt(t, ks)%3 == 0 {
				d[ks] = v
			}
		}
		return d
	}
	var snapDir string
	var snapMd map[string]int64
	spills, loads, kept := 0, 0, 0 // spills only past step 1200 of each 3000: the first snapshots see lazy records
	// slotOf finds key's record in memory or loads it (backed).
	slotOf := func(key []byte) (int32, bool) {
		if s, ok := own.index[string(key)]; ok {
			return s, true
		}
		s, ok, err := rec.Load(key)
		must(t, err)
		if ok {
			loads++
		}
		return s, ok
	}
	// setDist writes key's DISTINCT-like entry in the key group of rec's slot.
	setDist := func(slot int32, key []byte, v int64) {
		gs, ok := gown.index[string(key)]
		if !ok {
			kg := rec.KeyGroupOf(slot)
			if ls, found, err := grp.LoadInKeyGroup(kg, key); err != nil {
				t.Fatal(err)
			} else if found {
				gs = ls
			} else {
				gs = gown.add(key)
				grp.AddedInKeyGroup(gs, kg)
			}
		}
		gown.vals[gs] = v
		grp.Changed(gs)
	}
	for step := range 8000 {
		k := r.Int64N(1500) - 700
		key := AppendValue(nil, types.BigIntValue(k))
		slot, ok := slotOf(key)
		switch op := r.IntN(12); {
		case op < 3 && ok:
			w, bit := int(slot>>6), uint64(1)<<(slot&63)
			_, written := snapMd[string(key)]
			_, inModel := model[string(key)]
			if !rec.Backed() && w < len(rec.fresh) && rec.fresh[w]&bit != 0 && !written && r.IntN(2) == 0 {
				rec.Forget(slot)
			} else {
				must(t, rec.Removed(slot))
			}
			own.remove(slot)
			delete(model, string(key))
			if gs, ok := gown.index[string(key)]; ok {
				must(t, grp.Removed(gs))
				gown.remove(gs)
			} else if inModel && k%3 == 0 {
				// Spilled? grp never spills: its entry is in memory.
				t.Fatalf("seed %d, step %d: no DISTINCT entry for key %d", seed, step, k)
			}
		case op < 3:
		case op == 3 && ok:
			if got, want := rec.KeyGroupOf(slot), kgOfKey(key); got != want {
				t.Fatalf("seed %d, step %d: KeyGroupOf(key %d) = %d, want %d", seed, step, k, got, want)
			}
			rec.Touched(slot)
		case op == 4 && ok:
			rec.Touched(slot)
			kept++
		default:
			if !ok {
				slot = own.add(key)
				rec.AddedInt(slot, types.KindBigInt, k)
				if r.IntN(4) == 0 {
					rec.Touched(slot) // added, not changed: not written
					continue
				}
			}
			v := r.Int64N(1000)
			own.vals[slot] = v
			rec.Changed(slot)
			model[string(key)] = v
			if k%3 == 0 {
				setDist(slot, key, v) // the others' key groups wait for the snapshot
			}
		}
		if step == 3000 || step == 6000 {
			// Clear: not backed again, so adds are lazy again.
			must(t, rec.Clear())
			must(t, grp.Clear())
			*own.fakeOwner, *gown = *newFakeOwner(), *newFakeOwner()
			clear(model)
		}
		if step%3000 > 1200 && r.IntN(400) == 0 {
			// The added-only records the spill drops are gone (the
			// operator held nothing for them).
			must(t, rec.Spill())
			spills++
		}
		if step%500 == 499 {
			must(t, rec.SnapshotWith(grp))
			snapDir = filepath.Join(dir, fmt.Sprint("snap", step))
			_, err := st.Snapshot(snapDir)
			must(t, err)
			snapMd = maps.Clone(model)
			for i, p := range [][]byte{rec.prefix, grp.prefix} {
				got, err := stored(st, p, 0, maxPar-1)
				if err != nil {
					t.Fatalf("seed %d, step %d: %v", seed, step, err)
				}
				want := model
				if i == 1 {
					want = dist(model)
				}
				if !maps.Equal(got, want) {
					t.Fatalf("seed %d, step %d: the store holds %d %s records, the model %d", seed, step, len(got), p[1:], len(want))
				}
			}
		}
	}
	must(t, st.Close())
	t.Logf("%d spills, %d loads, %d touched", spills, loads, kept)
	if spills == 0 || loads == 0 {
		t.Fatal("the test needs spills and loads")
	}
	for _, par := range []int{1, 2, 3} {
		for sub := range par {
			first, last := KeyGroupRange(sub, par, maxPar)
			work := filepath.Join(dir, fmt.Sprintf("r-%d-%d", par, sub))
			rst, err := statestore.RestoreKeyGroups([]string{snapDir}, work, first, last, statestore.Options{MaxParallelism: maxPar})
			must(t, err)
			o := opts
			o.Subtask, o.Parallelism = sub, par
			own2 := newFakeOwner()
			rec2, err := NewRecords(o, own2)
			must(t, err)
			must(t, rec2.Attach(rst, true))
			want := map[string]int64{}
			for ks, v := range snapMd {
				if kg := kgOfKey([]byte(ks)); kg >= first && kg <= last {
					want[ks] = v
				}
			}
			got := map[string]int64{}
			for ks, slot := range own2.index {
				got[ks] = own2.vals[slot]
			}
			if !maps.Equal(got, want) {
				t.Fatalf("seed %d, parallelism %d subtask %d: %d records restored, want %d", seed, par, sub, len(got), len(want))
			}
			gotD, err := stored(rst, grp.prefix, first, last)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if !maps.Equal(gotD, dist(want)) {
				t.Fatalf("seed %d, parallelism %d subtask %d: %d DISTINCT entries restored, want %d", seed, par, sub, len(gotD), len(want))
			}
			must(t, rst.Close())
		}
	}
}

// keyInt decodes an integer key's encoding.
func keyInt(t *testing.T, ks string) int64 {
	v, rest, err := DecodeValue([]byte(ks))
	if err != nil || len(rest) != 0 {
		t.Fatalf("key %x: %v", ks, err)
	}
	return v.Int()
}
