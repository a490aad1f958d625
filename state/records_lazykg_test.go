package state

import (
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

// TestRecordsLazyKeyGroup checks the key groups of records AddedInt adds
// fresh, which it leaves to be computed later: random adds (some never
// changed, so that they outlive a snapshot unwritten), changes, removals
// (Removed or Forget) and KeyGroupOf calls, a snapshot every 500 steps
// whose stored records must be the Go model's, each in the key group the
// test computes from its key (xxhash64 modulo 128); then the last
// snapshot restored at parallelism 1, 2 and 3, where each subtask must
// hold exactly the model's keys of its key groups.
func TestRecordsLazyKeyGroup(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 19))
	const maxPar = 128
	kgOfKey := func(key []byte) int { return int(xxhash.Sum64(key) % maxPar) }
	dir := t.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "work"), statestore.Options{CacheBytes: 64 << 20, MaxParallelism: maxPar})
	must(t, err)
	opts := RecordOptions{Name: "recs", OperatorID: "op", Budget: 64 << 20, RecordBytes: 64, MaxParallelism: maxPar}
	own := newFakeOwner()
	rec, err := NewRecords(opts, own)
	must(t, err)
	must(t, rec.Attach(st, false))
	// stored returns the records the store holds, checking that each is
	// in its key's key group.
	stored := func() map[string]int64 {
		sp, err := st.Space("op")
		must(t, err)
		got := map[string]int64{}
		for kg := range maxPar {
			must(t, sp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
				x, n := binary.Varint(v)
				if n != len(v) || len(k) < len(rec.prefix) {
					return false, fmt.Errorf("bad entry %x %x", k, v)
				}
				key := k[len(rec.prefix):]
				if want := kgOfKey(key); want != kg {
					return false, fmt.Errorf("key %x stored in key group %d, its key group is %d", key, kg, want)
				}
				got[string(key)] = x
				return true, nil
			}))
		}
		return got
	}
	model := map[string]int64{} // the records changed at least once: the ones a snapshot writes
	var snapDir string
	var snapMd map[string]int64
	forgot, removed, checked := 0, 0, 0
	for step := range 6000 {
		k := r.Int64N(2000) - 1000
		key := AppendValue(nil, types.BigIntValue(k))
		slot, ok := own.index[string(key)]
		switch op := r.IntN(10); {
		case op < 3 && ok:
			w, bit := int(slot>>6), uint64(1)<<(slot&63)
			_, written := snapMd[string(key)]
			if w < len(rec.fresh) && rec.fresh[w]&bit != 0 && !written && r.IntN(2) == 0 {
				rec.Forget(slot)
				forgot++
			} else {
				must(t, rec.Removed(slot))
				removed++
			}
			own.remove(slot)
			delete(model, string(key))
		case op < 3:
		case op == 3 && ok:
			if got, want := rec.KeyGroupOf(slot), kgOfKey(key); got != want {
				t.Fatalf("seed %d, step %d: KeyGroupOf(key %d) = %d, want %d", seed, step, k, got, want)
			}
			checked++
		default:
			if !ok {
				slot = own.add(key)
				rec.AddedInt(slot, types.KindBigInt, k)
				if r.IntN(4) == 0 {
					continue // added, not changed yet: not written
				}
			}
			v := r.Int64N(1000)
			own.vals[slot] = v
			rec.Changed(slot)
			model[string(key)] = v
		}
		if step%500 == 499 {
			must(t, rec.Snapshot())
			snapDir = filepath.Join(dir, fmt.Sprint("snap", step))
			_, err := st.Snapshot(snapDir)
			must(t, err)
			snapMd = maps.Clone(model)
			if got := stored(); !maps.Equal(got, model) {
				t.Fatalf("seed %d, step %d: the store holds %d records, the model %d", seed, step, len(got), len(model))
			}
		}
	}
	must(t, st.Close())
	t.Logf("%d Forget, %d Removed, %d KeyGroupOf checked", forgot, removed, checked)
	if forgot == 0 || removed == 0 || checked == 0 {
		t.Fatal("the test needs Forget, Removed and KeyGroupOf calls")
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
			must(t, rst.Close())
		}
	}
}
