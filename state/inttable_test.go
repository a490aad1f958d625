package state

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

// TestIntTableAgainstMap applies random puts and deletes, with keys drawn
// from ranges small and large (many collisions and long probe runs, or
// few), to an IntTable and a map, and checks that they agree.
func TestIntTableAgainstMap(t *testing.T) {
	seed := testseed.Seed(t)
	for _, tc := range []struct {
		name  string
		keys  int64
		steps int
	}{
		{"dense small", 50, 20000},
		{"medium", 5000, 50000},
		{"sparse", 1 << 40, 20000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(tc.keys)))
			tb, ref := NewIntTable(), map[int64]int32{}
			for step := range tc.steps {
				k := r.Int64N(tc.keys) - tc.keys/2
				if _, ok := ref[k]; ok && r.IntN(3) == 0 {
					tb.Del(k)
					delete(ref, k)
				} else if !ok {
					tb.Put(k, int32(step))
					ref[k] = int32(step)
				}
				if step%997 == 0 {
					for k, want := range ref {
						if got, ok := tb.Get(k); !ok || got != want {
							t.Fatalf("step %d: get(%d) = %d, %v; want %d", step, k, got, ok, want)
						}
					}
				}
				if tb.Len() != len(ref) {
					t.Fatalf("step %d: len %d, want %d", step, tb.Len(), len(ref))
				}
			}
			for k := range ref {
				tb.Del(k)
			}
			for i := range tc.keys % 1000 {
				if _, ok := tb.Get(i); ok {
					t.Fatalf("key %d found after deleting all", i)
				}
			}
			if tb.Len() != 0 {
				t.Fatalf("len %d after deleting all", tb.Len())
			}
		})
	}
}

// TestIntTableGetOrPut applies random GetOrPut calls and deletes to an
// IntTable and a map, from key ranges that make long probe runs and that
// make the table grow during the calls, and checks what each call reports
// and, every few steps, every key's slot. Randomized: prints its seed.
func TestIntTableGetOrPut(t *testing.T) {
	seed := testseed.Seed(t)
	for _, keys := range []int64{40, 3000, 1 << 40} {
		r := rand.New(rand.NewPCG(seed, uint64(keys)))
		tb, ref := NewIntTable(), map[int64]int32{}
		for step := range 30000 {
			k := r.Int64N(keys) - keys/2
			want, wok := ref[k]
			got, ok := tb.GetOrPut(k, int32(step))
			switch {
			case ok != wok || (ok && got != want):
				t.Fatalf("keys %d step %d: GetOrPut(%d) = %d, %v; want %d, %v", keys, step, k, got, ok, want, wok)
			case !ok && got != int32(step):
				t.Fatalf("keys %d step %d: GetOrPut(%d) of a new key = %d, want %d", keys, step, k, got, step)
			case !ok:
				ref[k] = int32(step)
			}
			if r.IntN(3) == 0 {
				tb.Del(k)
				delete(ref, k)
			}
			if tb.Len() != len(ref) || 4*tb.Len() > 3*len(tb.slots) {
				t.Fatalf("keys %d step %d: len %d (of %d slots), want %d", keys, step, tb.Len(), len(tb.slots), len(ref))
			}
			if step%997 == 0 {
				for k, want := range ref {
					if got, ok := tb.Get(k); !ok || got != want {
						t.Fatalf("keys %d step %d: Get(%d) = %d, %v; want %d", keys, step, k, got, ok, want)
					}
				}
			}
		}
	}
}

// TestIntTableReset: Reset empties the table; refilled with as many keys
// it keeps its slots (no growth), and after a burst it shrinks back.
func TestIntTableReset(t *testing.T) {
	tb := NewIntTable()
	for k := range int64(1000) {
		tb.Put(k*7, int32(k))
	}
	slots := len(tb.slots)
	tb.Reset()
	if tb.Len() != 0 {
		t.Fatalf("len %d after reset", tb.Len())
	}
	for k := range int64(1000) {
		if _, ok := tb.Get(k * 7); ok {
			t.Fatalf("key %d still there after reset", k*7)
		}
	}
	for k := range int64(1000) {
		tb.Put(k*3, int32(k+1))
	}
	if len(tb.slots) != slots {
		t.Fatalf("%d slots after refilling, want the %d kept", len(tb.slots), slots)
	}
	for k := range int64(1000) {
		if g, ok := tb.Get(k * 3); !ok || g != int32(k+1) {
			t.Fatalf("get(%d) = %d, %v", k*3, g, ok)
		}
	}
	tb.Reset()
	tb.Put(1, 1)
	tb.Reset() // one key in many slots: shrinks
	if len(tb.slots) != intTableMinSlots {
		t.Fatalf("%d slots after a reset with one key, want %d", len(tb.slots), intTableMinSlots)
	}
}

// TestIntTableThreeQuartersFull: the table grows when a put would make it
// more than three quarters full, so 10,000 keys take 16,384 slots (at most
// half full they took 32,768), and every key is still found.
func TestIntTableThreeQuartersFull(t *testing.T) {
	tb := NewIntTable()
	for k := range int64(10000) {
		tb.Put(k*7919, int32(k))
	}
	if n := len(tb.slots); n != 16384 {
		t.Errorf("10,000 keys in %d slots, want 16,384", n)
	}
	for k := range int64(10000) {
		if g, ok := tb.Get(k * 7919); !ok || g != int32(k) {
			t.Fatalf("key %d: %d, %v", k*7919, g, ok)
		}
	}
	tb.Put(-1, 10000) // 12,288 fit; this is the 10,001st
	if n := len(tb.slots); n != 16384 {
		t.Errorf("10,001 keys in %d slots, want 16,384", n)
	}
	for k := int64(10001); k <= 12288; k++ {
		tb.Put(k*7919, int32(k))
	}
	if n := len(tb.slots); n != 32768 {
		t.Errorf("12,289 keys in %d slots, want 32,768", n)
	}
}

// TestCountTableAgainstMap checks CountTable against a Go map over random
// adds and removals of keys from a small and a wide range (growth,
// collisions, deletions that shift entries back).
func TestCountTableAgainstMap(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 4))
	for _, spread := range []uint64{50, 5000, 1 << 63} {
		var tab CountTable
		want := map[uint64]int64{}
		for range 20000 {
			k := r.Uint64N(spread)
			if spread > 5000 && r.IntN(2) == 0 {
				for x := range want { // a present key
					k = x
					break
				}
			}
			if r.IntN(5) < 3 {
				if got, isNew := tab.Add(k, 1), want[k] == 0; got != isNew {
					t.Fatalf("seed %d: add %d: new %v, want %v", seed, k, got, isNew)
				}
				want[k]++
			} else {
				gone := want[k] == 1
				if got := tab.Sub(k); got != gone {
					t.Fatalf("seed %d: sub %d: removed %v, want %v", seed, k, got, gone)
				}
				if want[k] > 0 {
					if want[k]--; want[k] == 0 {
						delete(want, k)
					}
				}
			}
		}
		got := map[uint64]int64{}
		tab.Range(func(k uint64, n int64) { got[k] = n })
		if len(got) != len(want) || tab.Len() != len(want) {
			t.Fatalf("seed %d: %d keys (Len %d), want %d", seed, len(got), tab.Len(), len(want))
		}
		for k, c := range want {
			if got[k] != c {
				t.Fatalf("seed %d: key %d: count %d, want %d", seed, k, got[k], c)
			}
		}
	}
}

// TestPairTableAgainstMap applies random puts and deletes of (group,
// value) pairs, few groups or many, values dense or sparse, to a
// PairTable and a map, and checks that they agree.
func TestPairTableAgainstMap(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 5))
	type pair struct {
		a int32
		b int64
	}
	for _, tc := range []struct {
		groups int32
		vals   int64
	}{{3, 50}, {1000, 20}, {5, 1 << 40}} {
		var tab PairTable
		want := map[pair]int32{}
		for i := range 30000 {
			p := pair{r.Int32N(tc.groups), r.Int64N(tc.vals) - tc.vals/2}
			if _, ok := want[p]; ok || r.IntN(3) == 0 {
				tab.Del(p.a, p.b)
				delete(want, p)
			} else {
				tab.Put(p.a, p.b, int32(i))
				want[p] = int32(i)
			}
			if i%1000 == 0 || i == 29999 {
				if tab.Len() != len(want) {
					t.Fatalf("seed %d: %d keys, want %d", seed, tab.Len(), len(want))
				}
				for p, v := range want {
					if got, ok := tab.Get(p.a, p.b); !ok || got != v {
						t.Fatalf("seed %d: Get(%d, %d) = %d, %v; want %d", seed, p.a, p.b, got, ok, v)
					}
				}
				if _, ok := tab.Get(tc.groups, 7); ok {
					t.Fatalf("seed %d: found a pair never put", seed)
				}
				// Touch reads only: pairs in and out of the table, and
				// the table is unchanged.
				as, bs := []int32{tc.groups, 0}, []int64{7, tc.vals}
				for p := range want {
					as, bs = append(as, p.a), append(bs, p.b)
				}
				tab.Touch(as, bs)
				if tab.Len() != len(want) {
					t.Fatalf("seed %d: Touch changed the table", seed)
				}
			}
		}
	}
}
