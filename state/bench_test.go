package state

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/statestore"

	"github.com/weir-sql/weir/types"
)

// hotPath is one row's work on a ValueState: set the key, read, write.
func hotPath(tb testing.TB, k *Keyed, v *ValueState[int64], keys [][]byte, i int) {
	if err := k.SetCurrentKey(keys[i%len(keys)]); err != nil {
		tb.Fatal(err)
	}
	n, _, err := v.Value()
	if err != nil {
		tb.Fatal(err)
	}
	if err := v.Update(n + 1); err != nil {
		tb.Fatal(err)
	}
}

func setupHot(tb testing.TB, onPebble bool, nkeys int) (*Keyed, *ValueState[int64], [][]byte) {
	k := newTestKeyedCache(tb, onPebble, Options{}, 64<<20)
	v, err := NewValueState(k, "sum", Int64{})
	if err != nil {
		tb.Fatal(err)
	}
	keys := make([][]byte, nkeys)
	for i := range keys {
		keys[i] = AppendValue(nil, types.BigIntValue(int64(i)))
	}
	for i := range keys { // every key in the cache
		hotPath(tb, k, v, keys, i)
	}
	return k, v, keys
}

// TestValueStateNoAlloc: reading and writing a ValueState allocates nothing
// per row once the key is in memory (in the map, or in the store's cache).
func TestValueStateNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, onPebble := range []bool{false, true} {
		k, v, keys := setupHot(t, onPebble, 1000)
		i := 0
		allocs := testing.AllocsPerRun(5000, func() {
			hotPath(t, k, v, keys, i)
			i++
		})
		if allocs != 0 {
			t.Errorf("pebble=%v: %.2f allocations per row", onPebble, allocs)
		}
	}
}

func BenchmarkValueState(b *testing.B) {
	for _, c := range []struct {
		name     string
		onPebble bool
	}{{"memory", false}, {"pebble-cached", true}} {
		b.Run(c.name, func(b *testing.B) {
			k, v, keys := setupHot(b, c.onPebble, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				hotPath(b, k, v, keys, i)
			}
		})
	}
}

// mapPath is one row's work of a join side on map states: look up an
// absent map key, scan the current key's map, put an entry.
func mapPath(tb testing.TB, k *Keyed, m *MapState[int64, int64], s *SortedMapState[int64, int64], keys [][]byte, i int) {
	if err := k.SetCurrentKey(keys[i%len(keys)]); err != nil {
		tb.Fatal(err)
	}
	if _, ok, err := m.Get(int64(-1 - i)); err != nil || ok {
		tb.Fatalf("absent map key: found %v, %v", ok, err)
	}
	n := 0
	if err := m.All(func(int64, int64) (bool, error) { n++; return true, nil }); err != nil {
		tb.Fatal(err)
	}
	if err := s.Range(int64(i%8), int64(i%8+4), func(int64, int64) (bool, error) { n++; return true, nil }); err != nil {
		tb.Fatal(err)
	}
	if err := m.Put(int64(i%8), int64(n)); err != nil {
		tb.Fatal(err)
	}
}

func setupMap(tb testing.TB, onPebble bool, nkeys int) (*Keyed, *MapState[int64, int64], *SortedMapState[int64, int64], [][]byte) {
	k := newTestKeyedCache(tb, onPebble, Options{}, 64<<20)
	m, err := NewMapState(k, "m", Int64{}, Int64{})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := NewSortedMapState(k, "s", Int64{}, Int64{})
	if err != nil {
		tb.Fatal(err)
	}
	keys := make([][]byte, nkeys)
	for i := range keys {
		keys[i] = AppendValue(nil, types.BigIntValue(int64(i)))
		if err := k.SetCurrentKey(keys[i]); err != nil {
			tb.Fatal(err)
		}
		for j := range int64(8) {
			if err := s.Put(j, j); err != nil {
				tb.Fatal(err)
			}
		}
	}
	for i := range 8 * nkeys { // every map entry exists
		mapPath(tb, k, m, s, keys, i)
	}
	return k, m, s, keys
}

// TestMapStateNoAlloc: on a store, looking up absent map keys, scanning a
// key's map and sorted map and overwriting an entry allocate nothing: the
// state is in memory, so absent keys are not looked up (and cached) and
// scans do not flush the cache and open a Pebble iterator.
func TestMapStateNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, onPebble := range []bool{false, true} {
		k, m, s, keys := setupMap(t, onPebble, 1000)
		i := 1 << 20 // map keys setupMap did not look up
		allocs := testing.AllocsPerRun(5000, func() {
			mapPath(t, k, m, s, keys, i)
			i++
		})
		if allocs != 0 {
			t.Errorf("pebble=%v: %.2f allocations per row", onPebble, allocs)
		}
	}
}

func BenchmarkMapState(b *testing.B) {
	for _, c := range []struct {
		name     string
		onPebble bool
	}{{"memory", false}, {"pebble", true}} {
		b.Run(c.name, func(b *testing.B) {
			k, m, s, keys := setupMap(b, c.onPebble, 10000)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				mapPath(b, k, m, s, keys, i)
			}
		})
	}
}

// TestRestoredStateInMemory: a Keyed opened on a restored store loads its
// state into memory: the entries are there, and absent map keys are not
// looked up in the store (nothing allocated). With a budget smaller than
// the state it reads from the store instead, with the same answers.
func TestRestoredStateInMemory(t *testing.T) {
	dir := t.TempDir()
	sopts := statestore.Options{MaxParallelism: 8}
	st, err := statestore.Open(filepath.Join(dir, "w1"), sopts)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Open(st, Options{OperatorID: "op"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMapState(k, "m", Int64{}, Int64{})
	if err != nil {
		t.Fatal(err)
	}
	const nkeys, per = 200, 5
	key := func(i int) []byte { return AppendValue(nil, types.BigIntValue(int64(i))) }
	for i := range nkeys {
		must(t, k.SetCurrentKey(key(i)))
		for j := range int64(per) {
			must(t, m.Put(j, int64(i)*10+j))
		}
		must(t, m.Remove(0)) // a deletion written back too
	}
	if _, err := st.Snapshot(filepath.Join(dir, "chk")); err != nil {
		t.Fatal(err)
	}
	must(t, st.Close())
	for _, budget := range []int64{64 << 20, 4 << 10} {
		sopts.CacheBytes = budget
		rs, err := statestore.Restore(filepath.Join(dir, "chk"), filepath.Join(dir, fmt.Sprint("w", budget)), sopts)
		if err != nil {
			t.Fatal(err)
		}
		k, err := Open(rs, Options{OperatorID: "op"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMapState(k, "m", Int64{}, Int64{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range nkeys {
			must(t, k.SetCurrentKey(key(i)))
			var got []int64
			must(t, m.All(func(j, v int64) (bool, error) {
				if v != int64(i)*10+j {
					return false, fmt.Errorf("key %d entry %d: %d", i, j, v)
				}
				got = append(got, j)
				return true, nil
			}))
			if len(got) != per-1 || got[0] != 1 {
				t.Fatalf("budget %d: key %d: entries %v", budget, i, got)
			}
		}
		if budget > 1<<20 && !raceEnabled {
			keys := make([][]byte, nkeys)
			for i := range keys {
				keys[i] = key(i)
			}
			i := 0
			allocs := testing.AllocsPerRun(1000, func() {
				must(t, k.SetCurrentKey(keys[i%nkeys]))
				if _, ok, err := m.Get(int64(100 + i)); err != nil || ok {
					t.Fatalf("absent key: %v %v", ok, err)
				}
				i++
			})
			if allocs != 0 {
				t.Errorf("restored in memory: %.2f allocations per absent lookup", allocs)
			}
		}
		must(t, rs.Close())
	}
}
