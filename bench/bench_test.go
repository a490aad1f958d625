package bench

import (
	"context"
	"flag"
	"testing"
	"time"
)

// benchDuration is how long each workload runs under go test -bench.
var benchDuration = flag.Duration("workload.duration", 3*time.Second, "how long each workload runs in go test -bench")

// benchmarkWorkload runs one workload (once: a streaming run is timed by
// its duration, not by b.N) and reports its figures as metrics.
func benchmarkWorkload(b *testing.B, name string) {
	for range b.N {
		results, err := Run(context.Background(), Config{Workloads: []string{name}, Duration: *benchDuration, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		r := results[len(results)-1]
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		if r.RowsPerSec > 0 {
			b.ReportMetric(r.RowsPerSec, "rows/s")
			b.ReportMetric(r.CPUNsPerRow, "cpu-ns/row")
		}
		if r.Checkpoints > 0 {
			b.ReportMetric(ms(r.CkptP50), "ckpt-p50-ms")
			b.ReportMetric(ms(r.CkptP99), "ckpt-p99-ms")
			b.ReportMetric(ms(r.AlignP99), "align-p99-ms")
			b.ReportMetric(ms(r.SyncP99), "sync-p99-ms")
		}
		if r.Restore > 0 {
			b.ReportMetric(ms(r.Restore), "restore-ms")
		}
		if r.LatP99 > 0 {
			b.ReportMetric(ms(r.LatP50), "lat-p50-ms")
			b.ReportMetric(ms(r.LatP99), "lat-p99-ms")
			b.ReportMetric(ms(r.LatP999), "lat-p99.9-ms")
		}
		if r.PeakRSS > 0 {
			b.ReportMetric(float64(r.PeakRSS)/(1<<20), "peak-rss-MiB")
		}
		b.ReportMetric(float64(r.PeakGo)/(1<<20), "peak-go-MiB")
		if r.PeakRSS30s > 0 {
			b.ReportMetric(float64(r.PeakRSS30s)/(1<<20), "peak-rss-30s-MiB")
		}
	}
}

func BenchmarkReference(b *testing.B) { benchmarkWorkload(b, "REF") }

// BenchmarkW1 is SUM GROUP BY over 1,000 keys with checkpoints every second.
func BenchmarkW1(b *testing.B) { benchmarkWorkload(b, "W1") }

// BenchmarkW2 is SUM GROUP BY over 1,000,000 random keys with checkpoints.
func BenchmarkW2(b *testing.B) { benchmarkWorkload(b, "W2") }

// BenchmarkW3 is W1 with checkpoints off.
func BenchmarkW3(b *testing.B) { benchmarkWorkload(b, "W3") }

// BenchmarkN0 is the nexmark generator's bids into a blackhole sink.
func BenchmarkN0(b *testing.B) { benchmarkWorkload(b, "N0") }

// BenchmarkW4 restores a 1,000,000-key checkpoint (written by W2 first).
func BenchmarkW4(b *testing.B) { benchmarkWorkload(b, "W4") }

// BenchmarkW5 is W1 at half its peak rate, measuring latency.
func BenchmarkW5(b *testing.B) { benchmarkWorkload(b, "W5") }

// BenchmarkW6 is a 1 s TUMBLE COUNT, SUM by 10,000 keys in event time.
func BenchmarkW6(b *testing.B) { benchmarkWorkload(b, "W6") }

// BenchmarkW7 is a 10 s / 1 s HOP COUNT, SUM by 10,000 keys in event time.
func BenchmarkW7(b *testing.B) { benchmarkWorkload(b, "W7") }

// BenchmarkW8 is a 1 s SESSION COUNT, SUM by 100,000 keys in event time.
func BenchmarkW8(b *testing.B) { benchmarkWorkload(b, "W8") }

// BenchmarkW11 is topic → SUM GROUP BY → exactly-once upsert-kafka against
// an in-process broker: input rate, then latency at half of it.
func BenchmarkW11(b *testing.B) { benchmarkWorkload(b, "W11") }

// BenchmarkW12 is a Top-10 per key over 10,000 keys (append-only input).
func BenchmarkW12(b *testing.B) { benchmarkWorkload(b, "W12") }

// BenchmarkW13 is a keep-last deduplication over 1,000,000 keys.
func BenchmarkW13(b *testing.B) { benchmarkWorkload(b, "W13") }

// TestW11Measures runs W11 briefly: the job reads the producer's records,
// completes checkpoints, and the probes come back through the
// exactly-once sink, read-committed, within the checkpoint interval and
// its commit (a probe is visible only once its checkpoint committed).
func TestW11Measures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs W11 for a few seconds")
	}
	results, err := Run(context.Background(), Config{Workloads: []string{"W11"}, Duration: 3 * time.Second, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	t.Logf("W11: %.0f rows/s, latency p50 %s p99 %s; %s", r.RowsPerSec, r.LatP50, r.LatP99, r.Note)
	if r.Rows == 0 || r.Checkpoints == 0 {
		t.Fatalf("W11 read %d rows, completed %d checkpoints", r.Rows, r.Checkpoints)
	}
	if r.LatP50 == 0 || r.LatP99 > time.Minute {
		t.Fatalf("W11 latency p50 %s p99 %s: no probe came back", r.LatP50, r.LatP99)
	}
}
