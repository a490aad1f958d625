package state

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestRecordsFreshRemoved checks that a record removed before any
// snapshot wrote it writes no deletion while one a snapshot wrote is
// deleted, with records in memory (not backed): random adds, changes and
// removals, a snapshot every 400 steps whose stored records must be
// exactly the Go model's, and restores from the last snapshot (the
// restored records are stored, so their removal must delete them).
func TestRecordsFreshRemoved(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		t.Run(fmt.Sprint("exclusive=", exclusive), func(t *testing.T) { testRecordsFreshRemoved(t, exclusive) })
	}
}

func testRecordsFreshRemoved(t *testing.T, exclusive bool) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	dir := t.TempDir()
	// Few changes per snapshot against the records held, so that a
	// snapshot writes the changes rather than replacing the state whole.
	opts := RecordOptions{Name: "recs", OperatorID: "op", Budget: 64 << 20, RecordBytes: 64, Exclusive: exclusive}
	var (
		st      *statestore.Store
		own     *fakeOwner
		rec     *Records
		gen     int
		snapDir string
		snapMd  map[string]int64
	)
	open := func(from string) {
		gen++
		work := filepath.Join(dir, fmt.Sprint("work", gen))
		var err error
		if from == "" {
			st, err = statestore.Open(work, statestore.Options{CacheBytes: 64 << 20})
		} else {
			st, err = statestore.Restore(from, work, statestore.Options{CacheBytes: 64 << 20})
		}
		must(t, err)
		own = newFakeOwner()
		rec, err = NewRecords(opts, own)
		must(t, err)
		must(t, rec.Attach(st, from != ""))
		if rec.Backed() {
			t.Fatal("records backed: the test needs them in memory")
		}
	}
	// stored returns the records the store holds.
	stored := func() map[string]int64 {
		sp, err := st.Space("op")
		must(t, err)
		got := map[string]int64{}
		for kg := range types.DefaultMaxParallelism {
			must(t, sp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
				x, n := binary.Varint(v)
				if n != len(v) || len(k) < len(rec.prefix) {
					return false, fmt.Errorf("bad entry %x %x", k, v)
				}
				got[string(k[len(rec.prefix):])] = x
				return true, nil
			}))
		}
		return got
	}
	open("")
	model := map[string]int64{}
	freshGone, storedGone, restores := 0, 0, 0
	for step := range 12000 {
		k := r.Int64N(3000)
		key := AppendValue(nil, types.BigIntValue(k))
		slot, ok := own.index[string(key)]
		if step > 3000 && r.IntN(3) == 0 {
			if ok {
				w, bit := int(slot>>6), uint64(1)<<(slot&63)
				if w < len(rec.fresh) && rec.fresh[w]&bit != 0 {
					freshGone++
				} else {
					storedGone++
				}
				must(t, rec.Removed(slot))
				own.remove(slot)
			}
			delete(model, string(key))
		} else {
			if !ok {
				slot = own.add(key)
				rec.AddedInt(slot, types.KindBigInt, k)
			}
			v := r.Int64N(1000)
			own.vals[slot] = v
			rec.Changed(slot)
			model[string(key)] = v
		}
		switch {
		case step%400 == 399:
			must(t, rec.Snapshot())
			snapDir = filepath.Join(dir, fmt.Sprint("snap", step))
			_, err := st.Snapshot(snapDir)
			must(t, err)
			snapMd = maps.Clone(model)
			if got := stored(); !maps.Equal(got, model) {
				t.Fatalf("seed %d, step %d: the store holds %d records, the model %d", seed, step, len(got), len(model))
			}
		case step%1900 == 1899:
			must(t, st.Close())
			open(snapDir)
			restores++
			model = maps.Clone(snapMd)
			if len(own.index) != len(model) {
				t.Fatalf("seed %d: %d records restored, want %d", seed, len(own.index), len(model))
			}
			for ks, v := range model {
				if slot, ok := own.index[ks]; !ok || own.vals[slot] != v {
					t.Fatalf("seed %d: restored key %x: %v, want %d", seed, ks, ok, v)
				}
			}
		}
	}
	must(t, st.Close())
	t.Logf("%d removals of fresh records, %d of stored ones, %d restores", freshGone, storedGone, restores)
	if freshGone == 0 || storedGone == 0 {
		t.Fatalf("removals: %d fresh, %d stored; the test needs both", freshGone, storedGone)
	}
}
