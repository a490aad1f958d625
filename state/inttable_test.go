package state

import (
	"math/rand/v2"
	"testing"
)

// TestIntTableAgainstMap applies random puts and deletes, with keys drawn
// from ranges small and large (many collisions and long probe runs, or
// few), to an IntTable and a map, and checks that they agree.
func TestIntTableAgainstMap(t *testing.T) {
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
			r := rand.New(rand.NewPCG(7, uint64(tc.keys)))
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
