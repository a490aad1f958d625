package exec

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestSweepQueue pushes sweeps at random times ahead of an advancing
// watermark (some behind it, as a loaded record's, and some pushed while
// due hands sweeps out, as a sweep's next row) and checks that due hands
// out exactly the sweeps at or before each watermark (in chunks of at
// most sweepChunk, in no particular order of time),
// against a list kept here. Event time runs on for 2^44 ms in jumps, so
// that sweeps pass through every bucket, while at most a few thousand are
// queued: the blocks the queue made stay within what its peak number of
// sweeps fills (one partly filled block per bucket), where buckets with
// their own slices each kept room for the peak.
func TestSweepQueue(t *testing.T) {
	onOneGoroutine(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 14))
	q := sweepQueue{last: math.MinInt64}
	var want []ijSweep // queued, not yet due
	less := func(x, y ijSweep) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.slot, y.slot), cmp.Compare(x.side, y.side))
	}
	var wm int64 = -1 << 40 // negative times too: bit 63 separates the signs
	slot := int32(0)
	push := func(at int64) {
		e := ijSweep{at: at, slot: slot, side: uint8(slot % 2)}
		slot++
		q.push(e)
		want = append(want, e)
	}
	peak := 0
	for round := range 1000 {
		span := int64(1) << r.IntN(45) // how far ahead the sweeps lie
		for range r.IntN(2000) {
			push(wm + 1 + r.Int64N(span))
		}
		if r.IntN(10) == 0 {
			push(wm - r.Int64N(100)) // behind the watermark: due at once
		}
		peak = max(peak, q.n)
		if q.n != len(want) {
			t.Fatalf("round %d: %d sweeps queued, want %d", round, q.n, len(want))
		}
		wm += r.Int64N(span)
		var got []ijSweep
		err := q.due(wm, func(es []ijSweep) error {
			if len(es) == 0 || len(es) > sweepChunk {
				t.Fatalf("round %d: a chunk of %d sweeps", round, len(es))
			}
			for _, e := range es {
				if e.at > wm {
					t.Fatalf("round %d: sweep at %d handed out at watermark %d", round, e.at, wm)
				}
				got = append(got, e)
				if r.IntN(4) == 0 {
					push(wm + 1 + r.Int64N(span)) // a sweep's next row
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var due []ijSweep
		want = slices.DeleteFunc(want, func(e ijSweep) bool {
			if e.at <= wm {
				due = append(due, e)
				return true
			}
			return false
		})
		slices.SortFunc(got, less)
		slices.SortFunc(due, less)
		if !slices.Equal(got, due) {
			t.Fatalf("round %d (watermark %d): due handed out %d sweeps, want %d", round, wm, len(got), len(due))
		}
	}
	t.Logf("at most %d sweeps queued, %d blocks kept", peak, q.blocks)
	if limit := peak/sweepBlockLen + len(q.b); q.blocks > limit {
		t.Fatalf("the queue keeps %d blocks for at most %d sweeps queued, want at most %d", q.blocks, peak, limit)
	}
	// Due hands sweeps out of the buckets' blocks, not through bucket 0,
	// which holds only the sweeps pushed behind the watermark (one a
	// round at most, taken out in the same round).
	if cap(q.b0) > 16 {
		t.Fatalf("bucket 0 has room for %d sweeps", cap(q.b0))
	}
	// Once the sweeps are all due, the pool gives back what it holds
	// beyond sweepPoolSlack blocks, half the excess at each due.
	wm = math.MaxInt64
	for range 20 {
		if err := q.due(wm, func([]ijSweep) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if q.n != 0 || q.blocks > sweepPoolSlack || len(q.free) != q.blocks {
		t.Fatalf("after every sweep was due: %d sweeps, %d blocks kept (%d free), want at most %d", q.n, q.blocks, len(q.free), sweepPoolSlack)
	}
	q.reset()
	if q.n != 0 || len(q.free) != q.blocks {
		t.Fatalf("after reset: %d sweeps, %d of %d blocks free", q.n, len(q.free), q.blocks)
	}
}
