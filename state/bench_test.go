package state

import (
	"testing"

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
