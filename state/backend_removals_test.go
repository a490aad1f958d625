package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/statestore"
)

// Review tests of the memory backend's map-state groups (r18-q6): a
// stored map entry that is removed stays in its group, flagged deleted,
// until the next snapshot writes the deletion.

const revMaxPar = 16

// revSub is one subtask of these tests: a store, its Keyed and a
// sorted map state.
type revSub struct {
	st *statestore.Store
	k  *Keyed
	s  *SortedMapState[int64, int64]
}

func revOpen(t *testing.T, dir string, from []string, sub, par int, cache int64) *revSub {
	t.Helper()
	opts := statestore.Options{CacheBytes: cache, MaxParallelism: revMaxPar, MemTableBytes: 1 << 20}
	var st *statestore.Store
	var err error
	switch {
	case from == nil:
		st, err = statestore.Open(dir, opts)
	case len(from) == par:
		st, err = statestore.Restore(from[sub], dir, opts)
	default:
		first, last := KeyGroupRange(sub, par, revMaxPar)
		st, err = statestore.RestoreKeyGroups(from, dir, first, last, opts)
	}
	must(t, err)
	k, err := Open(st, Options{OperatorID: "op", MaxParallelism: revMaxPar, Subtask: sub, Parallelism: par})
	must(t, err)
	s, err := NewSortedMapState(k, "s", Int64{}, Int64{})
	must(t, err)
	return &revSub{st: st, k: k, s: s}
}

// TestStoredMapRemovalsWithScansAndRescale drives a few keys' sorted maps
// through puts, removals (from scans too), gets of removed entries,
// snapshots, restores at another parallelism and a budget small enough
// to spill, checking every step against a Go map.
func TestStoredMapRemovalsWithScansAndRescale(t *testing.T) {
	seed := testseed.Seed(t)
	for _, cache := range []int64{64 << 20, 2400} {
		t.Run(fmt.Sprint("cache=", cache), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(cache)))
			dir := t.TempDir()
			gen := 0
			open := func(from []string, par int) []*revSub {
				gen++
				var subs []*revSub
				for i := range par {
					subs = append(subs, revOpen(t, filepath.Join(dir, fmt.Sprint("w", gen, "-", i)), from, i, par, cache))
				}
				return subs
			}
			subs := open(nil, 1)
			defer func() {
				for _, s := range subs {
					_ = s.st.Close()
				}
			}()
			model := map[int64]map[int64]int64{} // current key -> map
			var ckDirs []string
			var ckModel map[int64]map[int64]int64
			use := func(key int64) *revSub {
				enc := Int64{}.Append(nil, key)
				kg := KeyGroup(enc, revMaxPar)
				for _, s := range subs {
					if first, last := s.k.KeyGroups(); kg >= first && kg <= last {
						must(t, s.k.SetCurrentKey(enc))
						return s
					}
				}
				t.Fatalf("no subtask for key %d", key)
				return nil
			}
			var maxBytes int64
			inMem, spilled := 0, 0 // checks of an in-memory and a spilled subtask
			check := func(step int, key int64) {
				s := use(key)
				if s.k.be.(*hybridBackend).spilled() {
					spilled++
				} else {
					inMem++
					maxBytes = max(maxBytes, s.k.be.(*hybridBackend).mem.bytes)
				}
				want := model[key]
				var gotK []int64
				must(t, s.s.Ascend(func(mk, v int64) (bool, error) {
					if v != want[mk] {
						t.Fatalf("seed %d step %d key %d: %d = %d, want %d", seed, step, key, mk, v, want[mk])
					}
					gotK = append(gotK, mk)
					return true, nil
				}))
				if wantK := slices.Sorted(maps.Keys(want)); !slices.Equal(gotK, wantK) {
					t.Fatalf("seed %d step %d key %d: keys %v, want %v", seed, step, key, gotK, wantK)
				}
				for mk := range int64(24) {
					v, ok, err := s.s.Get(mk)
					must(t, err)
					if wv, wok := want[mk]; ok != wok || v != wv {
						t.Fatalf("seed %d step %d key %d: Get(%d) = %d,%v want %d,%v", seed, step, key, mk, v, ok, wv, wok)
					}
				}
				fk, _, fok, err := s.s.First()
				must(t, err)
				lk, _, lok, err := s.s.Last()
				must(t, err)
				if fok != (len(gotK) > 0) || lok != fok || (fok && (fk != gotK[0] || lk != gotK[len(gotK)-1])) {
					t.Fatalf("seed %d step %d key %d: first %d,%v last %d,%v of %v", seed, step, key, fk, fok, lk, lok, gotK)
				}
			}
			for step := range 1200 {
				key := int64(r.IntN(3))
				s := use(key)
				if model[key] == nil {
					model[key] = map[int64]int64{}
				}
				m := model[key]
				mk := int64(r.IntN(24))
				switch op := r.IntN(100); {
				case op < 35:
					v := r.Int64N(1000)
					must(t, s.s.Put(mk, v))
					m[mk] = v
				case op < 60:
					must(t, s.s.Remove(mk))
					delete(m, mk)
				case op < 70:
					// Remove every other visited entry, re-put a visited
					// one, while scanning.
					i := 0
					must(t, s.s.Ascend(func(k, v int64) (bool, error) {
						i++
						if i%2 == 0 {
							delete(m, k)
							return true, s.s.Remove(k)
						}
						if i == 3 {
							m[k] = v + 1
							return true, s.s.Put(k, v+1)
						}
						return true, nil
					}))
				case op < 73:
					must(t, s.s.Clear())
					clear(m)
				case op < 90:
					check(step, key)
				case op < 94:
					gen++
					ckDirs = nil
					for i, sub := range subs {
						d := filepath.Join(dir, fmt.Sprint("ck", gen, "-", i))
						_, err := sub.st.Snapshot(d)
						must(t, err)
						ckDirs = append(ckDirs, d)
					}
					ckModel = map[int64]map[int64]int64{}
					for k, m := range model {
						ckModel[k] = maps.Clone(m)
					}
				case ckDirs != nil:
					for _, sub := range subs {
						must(t, sub.st.Close())
					}
					subs = open(ckDirs, 1+r.IntN(3))
					model = map[int64]map[int64]int64{}
					for k, m := range ckModel {
						model[k] = maps.Clone(m)
					}
					for k := range int64(3) {
						check(step, k)
					}
				}
			}
			for k := range int64(3) {
				check(-1, k)
			}
			t.Logf("seed %d: %d snapshots and restores; %d checks in memory (up to %d bytes), %d spilled", seed, gen, inMem, maxBytes, spilled)
			if cache < 1<<20 && (inMem == 0 || spilled == 0) {
				t.Errorf("a small cache should be in memory at some checks and spilled at others")
			}
		})
	}
}

// TestStoredMapRemovalsFreedBySnapshot: the deletions a group keeps
// (stored entries removed) are gone from memory once a snapshot wrote
// them: no group, entry or byte is left of a map whose entries were all
// removed, however many there were.
func TestStoredMapRemovalsFreedBySnapshot(t *testing.T) {
	s := revOpen(t, filepath.Join(t.TempDir(), "w"), nil, 0, 1, 64<<20)
	defer func() { _ = s.st.Close() }()
	h := s.k.be.(*hybridBackend)
	base := h.mem.bytes
	for key := range int64(20) {
		must(t, s.k.SetCurrentKey(Int64{}.Append(nil, key)))
		for mk := range int64(300) { // beyond the slice size: a B-tree
			must(t, s.s.Put(mk, mk))
		}
	}
	_, err := s.st.Snapshot(filepath.Join(t.TempDir(), "c1"))
	must(t, err)
	for key := range int64(20) {
		must(t, s.k.SetCurrentKey(Int64{}.Append(nil, key)))
		for mk := range int64(300) {
			must(t, s.s.Remove(mk))
		}
		if empty, err := s.s.IsEmpty(); err != nil || !empty {
			t.Fatalf("key %d: empty %v, %v", key, empty, err)
		}
	}
	_, err = s.st.Snapshot(filepath.Join(t.TempDir(), "c2"))
	must(t, err)
	if h.mem == nil {
		t.Fatal("spilled")
	}
	if n := len(h.mem.groups); n != 0 || len(h.mem.points) != 0 || h.mem.bytes != base {
		t.Fatalf("after the snapshot of the removals: %d groups, %d points, %d bytes (%d before the puts)", n, len(h.mem.points), h.mem.bytes, base)
	}
}

// TestFirstAfterStoredRemovalsCopiesFew: a map used as a queue (remove
// the first entry, add one at the end, read the first) over entries a
// snapshot stored. Each First copies few entries from the backend, as
// without a snapshot (TestShortScanCopiesFewEntries), rather than the
// deletions kept since the snapshot.
func TestFirstAfterStoredRemovalsCopiesFew(t *testing.T) {
	for _, n := range []int64{200, 4000} { // a group's slice, a B-tree
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := revOpen(t, filepath.Join(t.TempDir(), "w"), nil, 0, 1, 64<<20)
			defer func() { _ = s.st.Close() }()
			must(t, s.k.SetCurrentKey([]byte("k")))
			for i := range n {
				must(t, s.s.Put(i, i))
			}
			_, err := s.st.Snapshot(filepath.Join(t.TempDir(), "c"))
			must(t, err)
			cb := &countingBackend{backend: s.k.be}
			s.k.be = cb
			pops := n / 2
			maxCopied := 0
			for i := range pops {
				cb.copied = 0
				first, _, ok, err := s.s.First()
				must(t, err)
				if !ok || first != i {
					t.Fatalf("pop %d: first %d,%v", i, first, ok)
				}
				maxCopied = max(maxCopied, cb.copied)
				must(t, s.s.Remove(first))
				must(t, s.s.Put(n+i, n+i))
			}
			s.k.be = cb.backend
			if maxCopied > firstChunk {
				t.Errorf("a First after up to %d removals of stored entries copied up to %d entries, want at most %d", pops, maxCopied, firstChunk)
			}
		})
	}
}

// BenchmarkPopFrontAfterSnapshot is TestFirstAfterStoredRemovalsCopiesFew
// as a benchmark: an op is a First, a Remove and a Put on a map of 4000
// entries a snapshot stored, 2000 ops between snapshots.
func BenchmarkPopFrontAfterSnapshot(b *testing.B) {
	const n, pops = 4000, 2000
	dir := b.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "w"), statestore.Options{CacheBytes: 256 << 20, MaxParallelism: revMaxPar})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	k, err := Open(st, Options{OperatorID: "op", MaxParallelism: revMaxPar})
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSortedMapState(k, "s", Int64{}, Int64{})
	if err != nil {
		b.Fatal(err)
	}
	if err := k.SetCurrentKey([]byte("k")); err != nil {
		b.Fatal(err)
	}
	for i := range int64(n) {
		if err := s.Put(i, i); err != nil {
			b.Fatal(err)
		}
	}
	next := int64(n)
	ck := 0
	b.ResetTimer()
	for i := range b.N {
		if i%pops == 0 {
			ck++
			if _, err := st.Snapshot(filepath.Join(dir, fmt.Sprint("c", ck))); err != nil {
				b.Fatal(err)
			}
		}
		first, _, ok, err := s.First()
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		if err := s.Remove(first); err != nil {
			b.Fatal(err)
		}
		if err := s.Put(next, next); err != nil {
			b.Fatal(err)
		}
		next++
	}
}

// TestMapRefilledAfterEmptied: a map emptied (its group dropped) and
// filled again keeps its entries after other keys' maps are used, in
// memory and over a store (before and after a snapshot), so the
// backend's last group must not outlive the group it names.
func TestMapRefilledAfterEmptied(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprint("stored=", stored), func(t *testing.T) {
			s := revOpen(t, filepath.Join(t.TempDir(), "w"), nil, 0, 1, 64<<20)
			defer func() { _ = s.st.Close() }()
			k, m := s.k, s.s
			set := func(key string) { must(t, k.SetCurrentKey([]byte(key))) }
			set("a")
			must(t, m.Put(1, 10))
			if stored {
				_, err := s.st.Snapshot(filepath.Join(t.TempDir(), "c1"))
				must(t, err)
			}
			must(t, m.Remove(1))
			if stored {
				// The snapshot writes the deletion and drops the group.
				_, err := s.st.Snapshot(filepath.Join(t.TempDir(), "c2"))
				must(t, err)
			}
			must(t, m.Put(2, 20)) // the group again
			set("b")
			must(t, m.Put(3, 30))
			set("a")
			if v, ok, err := m.Get(2); err != nil || !ok || v != 20 {
				t.Fatalf("a's entry 2 after b's map was used: %d,%v,%v", v, ok, err)
			}
			if empty, err := m.IsEmpty(); err != nil || empty {
				t.Fatalf("a's map empty %v, %v", empty, err)
			}
		})
	}
}
