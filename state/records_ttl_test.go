package state

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// ttlSumModel is the Go answer for TestRecordsTTL: per key a running sum
// and its last write time; a key not written for ttl ms starts from zero.
type ttlSumModel struct {
	ttl  int64
	sum  map[string]int64
	last map[string]int64
}

func (m *ttlSumModel) live(key string, now int64) (int64, bool) {
	l, ok := m.last[key]
	if !ok || l+m.ttl <= now {
		return 0, false
	}
	return m.sum[key], true
}

// TestRecordsTTL drives Records with a TTL like an operator keeping a
// running sum per key (find the key, in memory or by Load; add to it, or
// start a new record), with a clock that jumps forward: every read must see
// the model's sum (a key not written for the TTL starts from zero: expired
// state is never returned), in memory, over a store with spills past a
// small budget and snapshots, and after a restore at parallelism 1 and 3
// (the write times are stored with the records: restored keys expire on
// time, and Expire drops every in-memory record that is due).
func TestRecordsTTL(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	const ttl = 10_000
	for _, persisted := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "store"}[persisted], func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			dir := t.TempDir()
			own := newFakeOwner()
			opts := RecordOptions{Name: "recs", OperatorID: "op", Budget: 1, RecordBytes: 100, Exclusive: true, TTL: ttl * time.Millisecond}
			rec, err := NewRecords(opts, own)
			if err != nil {
				t.Fatal(err)
			}
			var st *statestore.Store
			if persisted {
				st = openStore(t, filepath.Join(dir, "work"))
				if err := rec.Attach(st, false); err != nil {
					t.Fatal(err)
				}
				rec.chunk = 300
			}
			m := &ttlSumModel{ttl: ttl, sum: map[string]int64{}, last: map[string]int64{}}
			keyOf := func(k int64) []byte {
				if k%5 == 0 {
					return AppendString(nil, fmt.Sprint("s", k))
				}
				return AppendInt64(nil, k)
			}
			drop := func(own *fakeOwner, rec *Records) func(int32) error {
				return func(slot int32) error {
					if err := rec.Removed(slot); err != nil {
						return err
					}
					own.remove(slot)
					return nil
				}
			}
			find := func(own *fakeOwner, rec *Records, key []byte) (int32, bool) {
				return findOrLoad(t, rec, own.index, key)
			}
			now := int64(1_700_000_000_000)
			expired, spills := 0, 0
			var snapDir string
			var snapAt int64
			var snapModel *ttlSumModel
			for step := range 20000 {
				if r.IntN(800) == 0 {
					now += r.Int64N(2 * ttl) // sometimes past the TTL of everything
				} else {
					now += r.Int64N(3)
				}
				rec.SetTime(now)
				if err := rec.Expire(drop(own, rec)); err != nil {
					t.Fatal(err)
				}
				k := r.Int64N(5000)
				key := keyOf(k)
				want, live := m.live(string(key), now)
				if _, had := m.last[string(key)]; had && !live {
					expired++
				}
				slot, ok := find(own, rec, key)
				if ok != live || (ok && own.vals[slot] != want) {
					t.Fatalf("seed %d step %d: key %x: found %v (%d), model %v (%d)", seed, step, key, ok, own.vals[slot], live, want)
				}
				if !ok {
					slot = own.add(key)
					own.vals[slot] = 0
					if k%5 == 0 {
						rec.AddedKey(slot, key)
					} else {
						rec.AddedInt(slot, types.KindBigInt, k)
					}
				}
				v := 1 + r.Int64N(9)
				own.vals[slot] += v
				rec.Changed(slot)
				m.sum[string(key)] = want + v
				m.last[string(key)] = now
				if rec.OverBudget() {
					if err := rec.Spill(); err != nil {
						t.Fatal(err)
					}
					spills++
				}
				if persisted && step%4000 == 3999 {
					if err := rec.Snapshot(); err != nil {
						t.Fatal(err)
					}
					snapDir = filepath.Join(dir, fmt.Sprint("snap", step))
					if _, err := st.Snapshot(snapDir); err != nil {
						t.Fatal(err)
					}
					snapAt = now
					snapModel = &ttlSumModel{ttl: ttl, sum: map[string]int64{}, last: map[string]int64{}}
					for k, v := range m.sum {
						snapModel.sum[k], snapModel.last[k] = v, m.last[k]
					}
				}
			}
			if expired == 0 {
				t.Fatalf("seed %d: no key expired: the test proves nothing", seed)
			}
			// Past the TTL of everything: Expire empties memory.
			rec.SetTime(now + ttl)
			if err := rec.Expire(drop(own, rec)); err != nil {
				t.Fatal(err)
			}
			if len(own.index) != 0 || rec.ExpiryDue() {
				t.Fatalf("%d records in memory after all expired (due %v)", len(own.index), rec.ExpiryDue())
			}
			if !persisted {
				return
			}
			if spills == 0 {
				t.Fatal("no spill: the test needs state over the budget")
			}
			// Restore the last snapshot at several times after it: at each,
			// exactly the model's live keys are found, with their sums.
			for _, par := range []int{1, 3} {
				for _, later := range []int64{0, ttl / 2, ttl + 1} {
					at := snapAt + later
					for sub := range par {
						first, last := KeyGroupRange(sub, par, 128)
						work := filepath.Join(dir, fmt.Sprintf("r-%d-%d-%d", par, later, sub))
						rst, err := statestore.RestoreKeyGroups([]string{snapDir}, work, first, last, statestore.Options{})
						if err != nil {
							t.Fatal(err)
						}
						o := opts
						o.Budget, o.Subtask, o.Parallelism = 64<<20, sub, par
						if later == ttl/2 {
							o.Budget = 1 // partly loaded: the rest by Load
						}
						own2 := newFakeOwner()
						rec2, err := NewRecords(o, own2)
						if err != nil {
							t.Fatal(err)
						}
						if err := rec2.Attach(rst, true); err != nil {
							t.Fatal(err)
						}
						rec2.SetTime(at)
						if err := rec2.Expire(drop(own2, rec2)); err != nil {
							t.Fatal(err)
						}
						for ks := range own2.index {
							if _, live := snapModel.live(ks, at); !live {
								t.Fatalf("seed %d: expired key %x in memory after a restore at +%d ms", seed, ks, later)
							}
						}
						for ks := range snapModel.last {
							key := []byte(ks)
							if kg := KeyGroup(key, 128); kg < first || kg > last {
								continue
							}
							want, live := snapModel.live(ks, at)
							slot, ok := find(own2, rec2, key)
							if ok != live || (ok && own2.vals[slot] != want) {
								t.Fatalf("seed %d: restored at +%d ms, parallelism %d: key %x found %v, model %v (%d)", seed, later, par, key, ok, live, want)
							}
						}
						if err := rst.Close(); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		})
	}
}

// TestRecordsTTLBeforeClock: records written before the first SetTime
// (the operator's first input may come before its task set the clock)
// count as written at that SetTime, also one that a restore loaded with
// its stored time and that was written again; restored records not
// written again keep their stored time.
func TestRecordsTTLBeforeClock(t *testing.T) {
	const ttl = 1000
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "work"))
	opts := RecordOptions{Name: "recs", OperatorID: "op", Budget: 64 << 20, RecordBytes: 100, Exclusive: true, TTL: ttl * time.Millisecond}
	own := newFakeOwner()
	rec, err := NewRecords(opts, own)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Attach(st, false); err != nil {
		t.Fatal(err)
	}
	rec.SetTime(5000)
	for k := range int64(2) {
		slot := own.add(AppendInt64(nil, k))
		rec.AddedInt(slot, types.KindBigInt, k)
		rec.Changed(slot)
	}
	if err := rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "snap")
	if _, err := st.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	rst, err := statestore.Restore(snap, filepath.Join(dir, "work2"), statestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rst.Close()
	own2 := newFakeOwner()
	rec2, err := NewRecords(opts, own2)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec2.Attach(rst, true); err != nil {
		t.Fatal(err)
	}
	if len(own2.index) != 2 {
		t.Fatalf("%d records restored, want 2", len(own2.index))
	}
	// Key 0 is written before the clock is set; key 1 is not.
	rec2.Changed(own2.index[string(AppendInt64(nil, 0))])
	fresh := own2.add(AppendInt64(nil, 2))
	rec2.AddedInt(fresh, types.KindBigInt, 2)
	var dropped []int64
	drop := func(slot int32) error {
		v, _, err := DecodeValue(own2.keys[slot])
		if err != nil {
			return err
		}
		dropped = append(dropped, v.Int())
		if err := rec2.Removed(slot); err != nil {
			return err
		}
		own2.remove(slot)
		return nil
	}
	rec2.SetTime(5000 + 3*ttl) // key 1's stored time is past its TTL
	if err := rec2.Expire(drop); err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 1 || dropped[0] != 1 {
		t.Fatalf("expired %v at the first SetTime, want [1]", dropped)
	}
	rec2.SetTime(5000 + 4*ttl - 1)
	if err := rec2.Expire(drop); err != nil || len(dropped) != 1 {
		t.Fatalf("expired %v (%v) within the TTL of the first SetTime", dropped, err)
	}
	rec2.SetTime(5000 + 4*ttl)
	if err := rec2.Expire(drop); err != nil || len(dropped) != 3 {
		t.Fatalf("expired %v (%v) at the TTL after the first SetTime, want all", dropped, err)
	}
}
