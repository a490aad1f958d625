package statestore

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// TestGrowingStateSnapshots checkpoints a store shaped like a q16 subtask's
// over many cycles: each adds new keys as an ascending write-through run
// (an ingested sstable), rewrites and deletes some older keys out of order
// (the write-through batch and the cache), so level 0 grows several files
// deep between compactions (L0CompactionThreshold). The middle and the
// last snapshot must restore to the state after their cycle, computed here
// in a Go map: whole, and (the last) split into key-group ranges as a
// restore at another parallelism takes it.
func TestGrowingStateSnapshots(t *testing.T) {
	const maxPar = 16
	cycles, perCycle := 10, 10_000
	if raceEnabled {
		cycles, perCycle = 4, 9_000
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	root := t.TempDir()
	s := openTest(t, Options{MaxParallelism: maxPar, CacheBytes: 256 << 10})
	tb := table(t, s, "agg", "distinct")
	type kv struct{ kg, i int }
	model := map[int][]byte{} // key index -> value
	var models []map[int][]byte
	var snaps []string
	written := 0 // key indices below it were written at some point
	for c := range cycles {
		// New keys, in state-key order (key group, then key).
		var fresh []kv
		for i := written; i < written+perCycle; i++ {
			fresh = append(fresh, kv{i % maxPar, i})
		}
		written += perCycle
		slices.SortFunc(fresh, func(a, b kv) int {
			if a.kg != b.kg {
				return a.kg - b.kg
			}
			return bytes.Compare(keyOf(a.i), keyOf(b.i))
		})
		for _, k := range fresh {
			v := valOf(k.i, c)
			if err := tb.PutThrough(k.kg, keyOf(k.i), v); err != nil {
				t.Fatal(err)
			}
			model[k.i] = v
		}
		// Older keys rewritten out of order (after the run: the batch),
		// some through the cache, and some deleted.
		for range perCycle / 20 {
			i := rng.IntN(written)
			v := valOf(i, 100+c)
			var err error
			if rng.IntN(2) == 0 {
				err = tb.PutThrough(i%maxPar, keyOf(i), v)
			} else {
				err = tb.Put(i%maxPar, keyOf(i), v)
			}
			if err != nil {
				t.Fatal(err)
			}
			model[i] = v
		}
		for range perCycle / 50 {
			i := rng.IntN(written)
			if err := tb.Delete(i%maxPar, keyOf(i)); err != nil {
				t.Fatal(err)
			}
			delete(model, i)
		}
		dir := filepath.Join(root, fmt.Sprintf("snap%d", c))
		if _, err := s.Snapshot(dir); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, dir)
		models = append(models, maps.Clone(model))
	}
	m := s.db.Metrics()
	t.Logf("level 0: %d files, %d deep; %d compactions", m.Levels[0].TablesCount, m.Levels[0].Sublevels, m.Compact.Count)
	check := func(name string, r *Store, want map[int][]byte, lo, hi int) {
		t.Helper()
		rt := table(t, r, "agg", "distinct")
		for i := range written {
			kg := i % maxPar
			if kg < lo || kg > hi {
				continue
			}
			v, ok, err := rt.Get(kg, keyOf(i))
			if err != nil {
				t.Fatal(err)
			}
			w, wok := want[i]
			if ok != wok || !bytes.Equal(v, w) {
				t.Fatalf("%s: key %d: got %q,%v want %q,%v", name, i, v, ok, w, wok)
			}
		}
		// And a scan of every key group holds exactly the model's keys of
		// the range.
		n := 0
		if err := rt.Scan(0, maxPar-1, func(int, []byte, []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		m := 0
		for i := range want {
			if kg := i % maxPar; kg >= lo && kg <= hi {
				m++
			}
		}
		if n != m {
			t.Fatalf("%s: scan found %d keys, want %d", name, n, m)
		}
	}
	for _, c := range []int{cycles / 2, cycles - 1} {
		r, err := Restore(snaps[c], filepath.Join(root, fmt.Sprintf("restored%d", c)), Options{MaxParallelism: maxPar})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("snapshot %d", c), r, models[c], 0, maxPar-1)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// At parallelism 3: key groups [0,5], [6,10], [11,15].
	for i, rg := range [][2]int{{0, 5}, {6, 10}, {11, 15}} {
		r, err := RestoreKeyGroups(snaps[cycles-1:], filepath.Join(root, fmt.Sprintf("rescaled%d", i)), rg[0], rg[1], Options{MaxParallelism: maxPar})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("key groups %v", rg), r, models[cycles-1], rg[0], rg[1])
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
