package state

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// joinedModel is the Go answer for TestRecordsSnapshotWithModel: per key
// of one Records its value and last write time (ms).
type joinedModel map[string][2]int64

// live returns key's value if it has one at now (ttl 0: no expiry).
func (m joinedModel) live(key string, now, ttl int64) (int64, bool) {
	e, ok := m[key]
	if !ok || (ttl > 0 && e[1]+ttl <= now) {
		return 0, false
	}
	return e[0], true
}

// joinedSub is one subtask of TestRecordsSnapshotWithModel's operator: its
// store and its two Records.
type joinedSub struct {
	st          *statestore.Store
	lead, oth   *Records
	lown, oown  *fakeOwner
	first, last int
}

// TestRecordsSnapshotWithModel drives an operator of two Records (a
// GroupAgg's DISTINCT entries and groups) whose checkpoints write both
// with SnapshotWith, against a Go model: random adds, changes and removals
// of both (some checkpoints change only one, or neither), spills past a
// small budget of one or both, a TTL, names that sort either way (and of
// one length), keys of one length and of mixed lengths, small chunks of
// random sizes, a small max parallelism; every read finds the model's
// value, each checkpoint restores at parallelism 1 and 3 to exactly the
// model's records, and the operator goes on from some checkpoints at the
// other parallelism (1 <-> 3), its state restored from them.
func TestRecordsSnapshotWithModel(t *testing.T) {
	seed := rand.Uint64()
	if s, err := strconv.ParseUint(os.Getenv("WEIR_TEST_SEED"), 10, 64); err == nil {
		seed = s // replay a failure
	}
	t.Logf("seed %d", seed)
	const big = 64 << 20
	for i, tc := range []struct {
		name             string
		lead, other      string
		lbudget, obudget int64
		ttl              int64
		mixed            bool // lead keys of several lengths (not fixed)
		maxPar           int
	}{
		{"memory, other first", "distinct.v1", "groups", big, big, 0, false, 128},
		{"memory, other last, mixed keys", "d", "groups", big, big, 0, true, 128},
		{"names of one length", "entriez", "entries", big, big, 0, true, 128},
		{"both spilled", "distinct.v1", "groups", 1, 1, 0, false, 128},
		{"lead spilled only", "distinct.v1", "groups", 1, big, 0, true, 128},
		{"other spilled only", "d", "groups", big, 1, 0, false, 128},
		{"ttl, lead spilled", "distinct.v1", "groups", 1, big, 60_000, false, 128},
		{"ttl, both spilled, mixed", "x", "groups", 1, 1, 60_000, true, 128},
		{"max parallelism 5", "distinct.v1", "groups", 1, big, 0, true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			dir := t.TempDir()
			maxPar := tc.maxPar
			sopts := statestore.Options{MaxParallelism: maxPar, CacheBytes: 256 << 10}
			ttl := tc.ttl
			opts := func(name string, budget int64, sub, par int) RecordOptions {
				return RecordOptions{Name: name, OperatorID: "op", MaxParallelism: maxPar, Subtask: sub, Parallelism: par,
					Budget: budget, RecordBytes: 40, TTL: time.Duration(ttl) * time.Millisecond}
			}
			now := int64(1_700_000_000_000)
			open := func(sub, par int, st *statestore.Store, restored bool, budgetL, budgetO int64) *joinedSub {
				s := &joinedSub{st: st, lown: newFakeOwner(), oown: newFakeOwner()}
				s.first, s.last = KeyGroupRange(sub, par, maxPar)
				var err error
				if s.lead, err = NewRecords(opts(tc.lead, budgetL, sub, par), s.lown); err != nil {
					t.Fatal(err)
				}
				if s.oth, err = NewRecords(opts(tc.other, budgetO, sub, par), s.oown); err != nil {
					t.Fatal(err)
				}
				for _, x := range []*Records{s.lead, s.oth} {
					if err := x.Attach(st, restored); err != nil {
						t.Fatal(err)
					}
					if ttl > 0 {
						x.SetTime(now)
					}
				}
				return s
			}
			drop := func(rec *Records, own *fakeOwner) func(int32) error {
				return func(slot int32) error {
					if err := rec.Removed(slot); err != nil {
						return err
					}
					own.remove(slot)
					return nil
				}
			}
			par := 1 + 2*r.IntN(2)
			subs := make([]*joinedSub, par)
			for sub := range par {
				st, err := statestore.Open(filepath.Join(dir, fmt.Sprint("work-0-", sub)), sopts)
				if err != nil {
					t.Fatal(err)
				}
				subs[sub] = open(sub, par, st, false, tc.lbudget, tc.obudget)
			}
			defer func() {
				for _, s := range subs {
					_ = s.st.Close()
				}
			}()
			subOf := func(key []byte) *joinedSub {
				kg := KeyGroup(key, maxPar)
				for _, s := range subs {
					if kg >= s.first && kg <= s.last {
						return s
					}
				}
				t.Fatalf("no subtask of key group %d", kg)
				return nil
			}
			lm, om := joinedModel{}, joinedModel{}
			ckpt := 0    // the checkpoint the operator works towards
			expired := 0 // keys found expired
			var lkeys, okeys []string
			leadKey := func() ([]byte, int64, bool) {
				n := r.Int64N(30000) - 100
				if tc.mixed && r.IntN(3) == 0 {
					ks := fmt.Sprint("s", n, "-", r.IntN(3))
					return AppendString(nil, ks[:1+r.IntN(len(ks))]), 0, false
				}
				return AppendInt64(nil, n), n, true
			}
			// step writes (or removes) one record of the lead Records or
			// the other, checking what is found against the model first.
			step := func(lead, remove bool) {
				var key []byte
				var n int64
				isInt := false
				m, keys := om, &okeys
				if lead {
					m, keys = lm, &lkeys
				}
				if len(*keys) > 0 && r.IntN(3) == 0 {
					key = []byte((*keys)[r.IntN(len(*keys))])
					if lead {
						if v, _, err := DecodeValue(key); err == nil && v.Kind() == types.KindBigInt {
							n, isInt = v.Int(), true
						}
					}
				} else if lead {
					key, n, isInt = leadKey()
					*keys = append(*keys, string(key))
				} else {
					key = AppendString(nil, fmt.Sprint("g", r.IntN(60000)))
					*keys = append(*keys, string(key))
				}
				s := subOf(key)
				rec, own := s.oth, s.oown
				if lead {
					rec, own = s.lead, s.lown
				}
				want, live := m.live(string(key), now, ttl)
				if _, had := m[string(key)]; had && !live {
					expired++
				}
				slot, ok := findOrLoad(t, rec, own.index, key)
				got := int64(-1)
				if ok {
					got = own.vals[slot]
				}
				if ok != live || got != want && ok {
					t.Fatalf("checkpoint %d: %s key %x: found %v (%d), model %v (%d)", ckpt, rec.opts.Name, key, ok, got, live, want)
				}
				if remove {
					if ok {
						if err := rec.Removed(slot); err != nil {
							t.Fatal(err)
						}
						own.remove(slot)
					}
					delete(m, string(key))
					return
				}
				if !ok {
					slot = own.add(key)
					if isInt {
						rec.AddedInt(slot, types.KindBigInt, n)
					} else {
						rec.AddedKey(slot, key)
					}
				}
				v := r.Int64N(1 << 40)
				own.vals[slot] = v
				rec.Changed(slot)
				m[string(key)] = [2]int64{v, now}
			}
			const cycles = 7
			spills, rescales := [2]int{}, 0
			for c := range cycles {
				ckpt = c
				for _, s := range subs {
					for _, x := range [2]*Records{s.lead, s.oth} {
						if r.IntN(2) == 0 {
							x.chunk = 1 + r.IntN(400)
						} else {
							x.chunk = chunkEntries
						}
					}
				}
				// Which Records change this time: both mostly, sometimes
				// one or neither.
				pl, po := 1, 1
				switch r.IntN(6) {
				case 0:
					pl = 0
				case 1:
					po = 0
				case 2:
					pl, po = 0, 0
				}
				nops := 1000 + r.IntN(4000)
				if tc.obudget == 1 {
					nops *= 3 // the other Records past MinRecords a subtask
				}
				for i := range nops {
					if ttl > 0 && i%50 == 0 {
						if r.IntN(250) == 0 {
							now += r.Int64N(2 * ttl)
						} else {
							now += r.Int64N(1000)
						}
						for _, s := range subs {
							for _, x := range [2]struct {
								rec *Records
								own *fakeOwner
							}{{s.lead, s.lown}, {s.oth, s.oown}} {
								x.rec.SetTime(now)
								if err := x.rec.Expire(drop(x.rec, x.own)); err != nil {
									t.Fatal(err)
								}
							}
						}
					}
					lead := r.IntN(3) != 0
					if tc.obudget == 1 {
						lead = r.IntN(2) == 0
					}
					if (lead && pl == 0) || (!lead && po == 0) {
						continue
					}
					step(lead, r.IntN(6) == 0)
					if i%97 == 0 {
						for _, s := range subs {
							for k, x := range [2]*Records{s.lead, s.oth} {
								if x.OverBudget() {
									if err := x.Spill(); err != nil {
										t.Fatal(err)
									}
									spills[k]++
								}
							}
						}
					}
				}
				if c == cycles-1 {
					// A Records whose budget is for spilling that has not
					// spilled yet gets records until it does.
					for k, budget := range [2]int64{tc.lbudget, tc.obudget} {
						for i := 0; budget == 1 && spills[k] == 0 && i < 50000; i++ {
							step(k == 0, false)
							for _, s := range subs {
								if x := [2]*Records{s.lead, s.oth}[k]; x.OverBudget() {
									if err := x.Spill(); err != nil {
										t.Fatal(err)
									}
									spills[k]++
								}
							}
						}
					}
				}
				snaps := make([]string, len(subs))
				for sub, s := range subs {
					if err := s.lead.SnapshotWith(s.oth); err != nil {
						t.Fatal(err)
					}
					snaps[sub] = filepath.Join(dir, fmt.Sprintf("snap-%d-%d", c, sub))
					if _, err := s.st.Snapshot(snaps[sub]); err != nil {
						t.Fatal(err)
					}
				}
				checkJoinedRestore(t, dir, snaps, c, maxPar, now, ttl, opts(tc.lead, big, 0, 1), opts(tc.other, big, 0, 1), lm, om)
				if r.IntN(2) == 0 {
					// Go on from this checkpoint at the other parallelism.
					npar := 4 - len(subs)
					for _, s := range subs {
						if err := s.st.Close(); err != nil {
							t.Fatal(err)
						}
					}
					nsubs := make([]*joinedSub, npar)
					for sub := range npar {
						first, last := KeyGroupRange(sub, npar, maxPar)
						st, err := statestore.RestoreKeyGroups(snaps, filepath.Join(dir, fmt.Sprintf("work-%d-%d", c+1, sub)), first, last, sopts)
						if err != nil {
							t.Fatal(err)
						}
						nsubs[sub] = open(sub, npar, st, true, tc.lbudget, tc.obudget)
					}
					subs = nsubs
					rescales++
				}
			}
			if tc.lbudget == 1 && spills[0] == 0 || tc.obudget == 1 && spills[1] == 0 {
				t.Fatalf("spills %v: the case needs spilled Records", spills)
			}
			if ttl > 0 && expired == 0 {
				t.Fatal("no key expired: the case needs expiries")
			}
			t.Logf("spills %v, rescales %d, expired %d, records %d and %d", spills, rescales, expired, len(lm), len(om))
		})
	}
}

// checkJoinedRestore restores the snapshots snaps (one per subtask) at
// parallelism 1 and 3, and requires both Records to hold exactly the
// models' records live at now.
func checkJoinedRestore(t *testing.T, dir string, snaps []string, c, maxPar int, now, ttl int64, lopts, oopts RecordOptions, lm, om joinedModel) {
	t.Helper()
	for _, par := range []int{1, 3} {
		for sub := range par {
			first, last := KeyGroupRange(sub, par, maxPar)
			work := filepath.Join(dir, fmt.Sprintf("check-%d-%d-%d", c, par, sub))
			rst, err := statestore.RestoreKeyGroups(snaps, work, first, last, statestore.Options{MaxParallelism: maxPar})
			if err != nil {
				t.Fatal(err)
			}
			for _, side := range []struct {
				opts RecordOptions
				m    joinedModel
			}{{lopts, lm}, {oopts, om}} {
				o := side.opts
				o.Subtask, o.Parallelism = sub, par
				own := newFakeOwner()
				rec, err := NewRecords(o, own)
				if err != nil {
					t.Fatal(err)
				}
				if err := rec.Attach(rst, true); err != nil {
					t.Fatal(err)
				}
				if ttl > 0 {
					rec.SetTime(now)
					if err := rec.Expire(func(slot int32) error {
						if err := rec.Removed(slot); err != nil {
							return err
						}
						own.remove(slot)
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
				if rec.Backed() {
					t.Fatalf("checkpoint %d: %s restored backed", c, o.Name)
				}
				n := 0
				for k := range side.m {
					if kg := KeyGroup([]byte(k), maxPar); kg < first || kg > last {
						continue
					}
					want, live := side.m.live(k, now, ttl)
					if !live {
						continue
					}
					n++
					slot, ok := own.index[k]
					if !ok || own.vals[slot] != want {
						t.Fatalf("checkpoint %d, subtask %d of %d: %s key %x: restored %v, want %d", c, sub, par, o.Name, k, ok, want)
					}
				}
				if len(own.index) != n {
					t.Fatalf("checkpoint %d, subtask %d of %d: %s restored %d records, want %d", c, sub, par, o.Name, len(own.index), n)
				}
			}
			if err := rst.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
