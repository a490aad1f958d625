package exec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSessKeyMatchesSlice: a key's sessions (the first in the slot, the
// others in a slice) behave as one plain slice under random adds and
// removes.
func TestSessKeyMatchesSlice(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 13))
	var k sessKey
	var model []openSession
	for step := range 5000 {
		if len(model) > 0 && r.IntN(2) == 0 {
			j := r.IntN(len(model))
			k.remove(j)
			model = slices.Delete(model, j, j+1)
		} else {
			s := openSession{start: int64(step), end: int64(step + r.IntN(10)), acc: int32(step)}
			if got, want := k.add(s), len(model); got != want {
				t.Fatalf("step %d: add returned %d, want %d", step, got, want)
			}
			model = append(model, s)
		}
		if r.IntN(500) == 0 {
			k.reset()
			model = model[:0]
		}
		if int(k.n) != len(model) {
			t.Fatalf("step %d: %d sessions, want %d", step, k.n, len(model))
		}
		for j, s := range model {
			if *k.at(j) != s {
				t.Fatalf("step %d: session %d is %+v, want %+v", step, j, *k.at(j), s)
			}
		}
	}
}

// TestSessQueueOrder: timers pushed as interleaved ascending runs with
// some out of order, and popped now and then up to a rising bound, come
// out in order of end, each once, as a sort of them in Go says.
func TestSessQueueOrder(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 17))
	var q sessQueue
	var pending []sessTimer // the model: every timer pushed, not yet popped
	clocks := make([]int64, 1+r.IntN(6))
	bound := int64(0)
	for step := range 20000 {
		c := r.IntN(len(clocks))
		clocks[c] += r.Int64N(5)
		end := clocks[c]
		if r.IntN(20) == 0 {
			end -= r.Int64N(50) // out of order
		}
		tm := sessTimer{end: end, slot: int32(step)}
		q.push(tm)
		pending = append(pending, tm)
		if r.IntN(100) != 0 {
			continue
		}
		bound += r.Int64N(200)
		slices.SortStableFunc(pending, func(a, b sessTimer) int { return int(a.end - b.end) })
		n := 0
		for n < len(pending) && pending[n].end <= bound {
			n++
		}
		var got []sessTimer
		for {
			tm, from, ok := q.next()
			if !ok || tm.end > bound {
				break
			}
			q.drop(from)
			got = append(got, tm)
		}
		if len(got) != n {
			t.Fatalf("step %d: %d timers up to %d, want %d", step, len(got), bound, n)
		}
		for i := range got {
			if i > 0 && got[i].end < got[i-1].end {
				t.Fatalf("step %d: end %d after %d", step, got[i].end, got[i-1].end)
			}
		}
		slices.SortFunc(got, func(a, b sessTimer) int { return int(a.slot - b.slot) })
		want := slices.Clone(pending[:n])
		slices.SortFunc(want, func(a, b sessTimer) int { return int(a.slot - b.slot) })
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: popped other timers than the model", step)
		}
		pending = slices.Delete(pending, 0, n)
		if q.len() != len(pending) {
			t.Fatalf("step %d: %d timers queued, want %d", step, q.len(), len(pending))
		}
	}
}
