package bench

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0..100) of ds by the nearest-rank
// method, or 0 when ds is empty. ds is sorted in place.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(p/100*float64(len(ds)))) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// histogram is a log-linear histogram of non-negative nanosecond values
// with weights: 2^subBits buckets per power of two, so a value is known to
// within 1/2^subBits (about 3%). It never allocates after creation.
type histogram struct {
	counts [64 << subBits]uint64
	total  uint64
}

const subBits = 5

func bucketOf(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	e := bits.Len64(v) - 1 - subBits // shift that leaves subBits+1 significant bits
	return (e+1)<<subBits | int(v>>e)&(1<<subBits-1)
}

// lowerBound returns the smallest value of bucket b.
func lowerBound(b int) uint64 {
	if b < 1<<subBits {
		return uint64(b)
	}
	e := b>>subBits - 1
	return (1<<subBits | uint64(b)&(1<<subBits-1)) << e
}

// add records value v (ns) with weight n.
func (h *histogram) add(v int64, n uint64) {
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(uint64(v))] += n
	h.total += n
}

// quantile returns the value (ns) below which fraction q of the weight lies.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank && c > 0 {
			return time.Duration(lowerBound(b))
		}
	}
	return 0
}

// median returns the median of xs (the mean of the two middle values for
// an even count), or 0 when xs is empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
