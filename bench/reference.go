package bench

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// runReference does W1's work with no engine, as the limit to compare
// against: parallelism goroutines each generate rows (k over keys, v),
// hash k to its key group as the engine's exchange does, and add v into a
// map from k to its sum. There is no exchange between goroutines, no
// batching and no changelog: it is the work W1 cannot avoid.
func runReference(ctx context.Context, parallelism int, keys int64, d time.Duration) (rows int64, elapsed time.Duration) {
	var total atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for w := range parallelism {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums := make(map[int64]int64, keys)
			groups := make([]int64, 128)
			i := uint64(w)
			var n int64
			for !stop.Load() {
				for range 1024 {
					h := mix(i)
					k := int64(h % uint64(keys))
					v := int64(h>>32) % 100
					groups[keyGroupOf(uint64(k))&127]++
					sums[k] += v
					i += uint64(parallelism)
				}
				n += 1024
			}
			total.Add(n)
		}()
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	stop.Store(true)
	wg.Wait()
	return total.Load(), time.Since(start)
}

// keyGroupOf is a 64-bit integer hash (a multiply and a fold), standing in
// for the key-group hash.
func keyGroupOf(k uint64) uint64 {
	hi, lo := bits.Mul64(k^0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9)
	return hi ^ lo
}
