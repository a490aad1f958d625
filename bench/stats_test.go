package bench

import (
	"context"
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	tests := []struct {
		name   string
		values map[int64]uint64 // value (ns) → weight
		q      float64
		want   time.Duration
	}{
		{"single", map[int64]uint64{5000: 1}, 0.5, 4992}, // the bucket's lower bound, within 1/32
		{"weighted median", map[int64]uint64{10: 1, 1000: 3}, 0.5, 992},
		{"tail", map[int64]uint64{10: 99, 1 << 20: 1}, 0.999, 1 << 20},
		{"small exact", map[int64]uint64{3: 1, 7: 1}, 1, 7},
		{"empty", nil, 0.5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h histogram
			for v, n := range tc.values {
				h.add(v, n)
			}
			if got := h.quantile(tc.q); got != tc.want {
				t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestBucketBounds(t *testing.T) {
	for _, v := range []uint64{0, 1, 31, 32, 33, 63, 64, 1000, 123456789, 1 << 40} {
		b := bucketOf(v)
		lo := lowerBound(b)
		if lo > v || (b+1 < len(histogram{}.counts) && lowerBound(b+1) <= v) {
			t.Errorf("value %d: bucket %d [%d, %d)", v, b, lo, lowerBound(b+1))
		}
	}
}

func TestPercentileAndMedian(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	if got := percentile(ds, 50); got != 3 {
		t.Errorf("p50 = %v, want 3", got)
	}
	if got := percentile(ds, 99); got != 5 {
		t.Errorf("p99 = %v, want 5", got)
	}
	if got := median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median = %v, want 2.5", got)
	}
}

// TestRunSmoke runs the cheap workloads briefly to check the plumbing:
// rows flow, checkpoints complete, latencies are recorded.
func TestRunSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs jobs")
	}
	results, err := Run(context.Background(), Config{Workloads: []string{"W1", "W5"}, Duration: 1500 * time.Millisecond, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("got %d results, want 2", len(results))
	}
	w1, w5 := results[0], results[1]
	if w1.Rows == 0 || w1.Checkpoints == 0 {
		t.Errorf("W1: %d rows, %d checkpoints; want some of each", w1.Rows, w1.Checkpoints)
	}
	if w5.Rows == 0 || w5.LatP99 == 0 || w5.LatP50 > w5.LatP99 {
		t.Errorf("W5: %d rows, latency p50 %v p99 %v", w5.Rows, w5.LatP50, w5.LatP99)
	}
}
