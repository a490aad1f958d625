package state

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestInt2TableChurnAgainstMap puts and deletes random two-int64 keys
// (a small domain, so runs collide and deletions shift entries back; keys
// differing in one part only; the extremes MinInt64/MaxInt64) through
// growth, checking every Get against a map, and after each step that
// every entry lies in its own probe run (no empty slot between its home
// and it) and that Len matches. The seed is printed.
func TestInt2TableChurnAgainstMap(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 19))
	parts := []int64{0, 1, -1, 2, math.MinInt64, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 - 1, 1 << 32, -(1 << 32)}
	pick := func() int64 {
		if r.IntN(3) == 0 {
			return parts[r.IntN(len(parts))]
		}
		return int64(r.IntN(300)) - 150
	}
	type k2 struct{ a, b int64 }
	var tb Int2Table
	want := map[k2]int32{}
	check := func(step int) {
		t.Helper()
		if tb.Len() != len(want) {
			t.Fatalf("seed %d step %d: Len %d, want %d", seed, step, tb.Len(), len(want))
		}
		mask := len(tb.slots) - 1
		n := 0
		for j, s := range tb.slots {
			if s.val == 0 {
				continue
			}
			n++
			for i := tb.home(s.a, s.b); i != j; i = (i + 1) & mask {
				if tb.slots[i].val == 0 {
					t.Fatalf("seed %d step %d: entry (%d,%d) at %d unreachable: slot %d empty", seed, step, s.a, s.b, j, i)
				}
			}
		}
		if n != len(want) {
			t.Fatalf("seed %d step %d: %d entries, want %d", seed, step, n, len(want))
		}
	}
	next := int32(0)
	for step := range 200_000 {
		k := k2{pick(), pick()}
		if r.IntN(5) == 0 { // keys differing in one part only
			k.b = k.a
		}
		v, ok := tb.Get(k.a, k.b)
		w, wok := want[k]
		if ok != wok || (ok && v != w) {
			t.Fatalf("seed %d step %d: Get(%d,%d) = %d,%v, want %d,%v", seed, step, k.a, k.b, v, ok, w, wok)
		}
		// Grow to about 20,000 keys, then shrink by deleting more than
		// is put, then grow again.
		del := r.IntN(100) < 40
		if step/50_000%2 == 1 {
			del = r.IntN(100) < 60
		}
		switch {
		case ok && del:
			tb.Del(k.a, k.b)
			delete(want, k)
		case !ok && !del:
			tb.Put(k.a, k.b, next)
			want[k] = next
			next++
		}
		if step%5000 == 0 {
			check(step)
		}
	}
	check(-1)
	for k, w := range want {
		if v, ok := tb.Get(k.a, k.b); !ok || v != w {
			t.Fatalf("seed %d: Get(%d,%d) = %d,%v, want %d", seed, k.a, k.b, v, ok, w)
		}
		tb.Del(k.a, k.b)
		delete(want, k)
	}
	check(-2)
	if tb.Len() != 0 {
		t.Fatalf("seed %d: Len %d after deleting all", seed, tb.Len())
	}
}
