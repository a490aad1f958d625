package state

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
)

// TestTimersStepwiseRestore registers event-time timers for random keys
// and times, and advances the watermark in small random steps (each round
// seeks from its key group's head), while callbacks register timers for
// times already passed (due at the next advance) and later ones, and
// delete some; half-way, the store is snapshotted and restored at
// parallelism 2. Every timer must fire exactly once, not before the
// watermark reached it, in time order within each advance; deleted timers
// never fire. In memory (no restore) and over a store whose cache is tiny,
// so that fired timers lie in Pebble as deletions.
func TestTimersStepwiseRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, onPebble := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "pebble"}[onPebble], func(t *testing.T) {
			testTimersStepwise(t, seed, onPebble)
		})
	}
}

type stepTimer struct {
	key int64
	ts  int64
}

func testTimersStepwise(t *testing.T, seed uint64, onPebble bool) {
	const maxPar = 16
	r := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	var stores []*statestore.Store
	open := func(st *statestore.Store, sub, par int) *Keyed {
		if st == nil {
			k, err := NewMemory(Options{MaxParallelism: maxPar})
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		k, err := Open(st, Options{OperatorID: "op", MaxParallelism: maxPar, Subtask: sub, Parallelism: par})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	var ks []*Keyed
	if onPebble {
		st, err := statestore.Open(filepath.Join(dir, "w0"), statestore.Options{CacheBytes: 1 << 10, MaxParallelism: maxPar})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, st)
		ks = append(ks, open(st, 0, 1))
	} else {
		ks = append(ks, open(nil, 0, 1))
	}
	pending := map[stepTimer]bool{} // registered, not fired, not deleted
	owner := func(key int64) *Keyed {
		kg := KeyGroup(Int64{}.Append(nil, key), maxPar)
		for _, k := range ks {
			if first, last := k.KeyGroups(); kg >= first && kg <= last {
				return k
			}
		}
		t.Fatalf("key %d of no subtask", key)
		return nil
	}
	register := func(key, ts int64) {
		k := owner(key)
		if err := k.SetCurrentKey(Int64{}.Append(nil, key)); err != nil {
			t.Fatal(err)
		}
		if err := k.RegisterTimer(EventTime, ts, nil); err != nil {
			t.Fatal(err)
		}
		pending[stepTimer{key, ts}] = true
	}
	for range 3000 {
		register(r.Int64N(200), r.Int64N(5000))
	}
	wm := int64(-1)
	for step := 0; wm < 6000; step++ {
		if onPebble && step == 150 {
			// Snapshot and restore at parallelism 2.
			snap := filepath.Join(dir, "snap")
			if _, err := stores[0].Snapshot(snap); err != nil {
				t.Fatal(err)
			}
			ks = nil
			for sub := range 2 {
				first, last := KeyGroupRange(sub, 2, maxPar)
				st, err := statestore.RestoreKeyGroups([]string{snap}, filepath.Join(dir, fmt.Sprintf("r%d", sub)), first, last, statestore.Options{CacheBytes: 1 << 10, MaxParallelism: maxPar})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st.Close() })
				ks = append(ks, open(st, sub, 2))
			}
		}
		wm += 1 + r.Int64N(60)
		for _, k := range ks {
			last := int64(math.MinInt64)
			err := k.AdvanceWatermark(wm, func(tm Timer) error {
				key, err := Int64{}.Decode(tm.Key)
				if err != nil {
					return err
				}
				id := stepTimer{key, tm.Timestamp}
				switch {
				case !pending[id]:
					return fmt.Errorf("timer %v fired but not pending (twice, deleted or never registered)", id)
				case tm.Timestamp > wm:
					return fmt.Errorf("timer %v fired at watermark %d", id, wm)
				case tm.Timestamp < last:
					return fmt.Errorf("timer %v fired after one at %d", id, last)
				}
				last = tm.Timestamp
				delete(pending, id)
				switch r.IntN(6) {
				case 0: // a timer for a time passed: fires in this advance
					if err := k.RegisterTimer(EventTime, tm.Timestamp, []byte{1}); err != nil {
						return err
					}
					return k.DeleteTimer(EventTime, tm.Timestamp, []byte{1})
				case 1: // a later timer of the same key
					ts := tm.Timestamp + 1 + r.Int64N(300)
					if err := k.RegisterTimer(EventTime, ts, nil); err != nil {
						return err
					}
					pending[stepTimer{key, ts}] = true
				}
				return nil
			})
			if err != nil {
				t.Fatalf("seed %d, watermark %d: %v", seed, wm, err)
			}
		}
		for id := range pending {
			if id.ts <= wm {
				t.Fatalf("seed %d: timer %v not fired at watermark %d", seed, id, wm)
			}
		}
		if r.IntN(4) == 0 {
			// Timers registered between advances, some for times passed
			// (due at the next advance), some deleted again.
			key, ts := r.Int64N(200), wm-r.Int64N(100)+r.Int64N(400)
			register(key, ts)
			if r.IntN(3) == 0 {
				k := owner(key)
				if err := k.DeleteTimer(EventTime, ts, nil); err != nil {
					t.Fatal(err)
				}
				delete(pending, stepTimer{key, ts})
			}
		}
	}
	for _, k := range ks {
		if err := k.AdvanceWatermark(math.MaxInt64, func(tm Timer) error {
			key, _ := Int64{}.Decode(tm.Key)
			delete(pending, stepTimer{key, tm.Timestamp})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for id := range pending {
		t.Fatalf("seed %d: timer %v never fired", seed, id)
	}
}
