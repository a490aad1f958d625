package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPeakTrackerMark: the peaks at the mark are those of the samples
// before it, the overall peaks those of all samples; a run that ends
// before the mark has no early peaks.
func TestPeakTrackerMark(t *testing.T) {
	p := peakTracker{mark: 30 * time.Second}
	samples := []struct {
		at      time.Duration
		goB, rs uint64
	}{
		{0, 10, 100}, {10 * time.Second, 30, 120}, {29 * time.Second, 20, 150},
		{30 * time.Second, 50, 140}, {5 * time.Minute, 40, 400},
	}
	for i, s := range samples {
		p.observe(s.at, s.goB, s.rs)
		if i == 2 {
			if g, r := p.atMark(); g != 0 || r != 0 {
				t.Fatalf("before the mark: (%d, %d), want zeros", g, r)
			}
		}
	}
	if g, r := p.atMark(); g != 30 || r != 150 {
		t.Fatalf("peaks at the mark (%d, %d), want (30, 150)", g, r)
	}
	if p.peakGo != 50 || p.peakRS != 400 {
		t.Fatalf("overall peaks (%d, %d), want (50, 400)", p.peakGo, p.peakRS)
	}
}

// TestPeakTrackerLast: the peaks over the last 30 s are those of the
// samples of the last 30 seconds of a run of a minute or more (a spike
// before them is in the overall peak only), zeros for a shorter run.
func TestPeakTrackerLast(t *testing.T) {
	p := peakTracker{mark: 30 * time.Second}
	p.observe(0, 10, 100)
	p.observe(40*time.Second, 90, 900) // a spike, before the last 30 s
	p.observe(50*time.Second, 20, 200)
	if g, r := p.last(); g != 0 || r != 0 {
		t.Fatalf("a run of 50 s: last 30 s (%d, %d), want zeros", g, r)
	}
	for sec := 51; sec <= 100; sec++ {
		p.observe(time.Duration(sec)*time.Second+time.Duration(sec)*time.Millisecond, uint64(sec), uint64(10*sec))
	}
	p.observe(70*time.Second+500*time.Millisecond, 95, 0) // a late sample in an earlier second
	if g, r := p.last(); g != 100 || r != 1000 {
		t.Fatalf("last 30 s (%d, %d), want (100, 1000)", g, r)
	}
	p.observe(130*time.Second, 5, 50) // 30 s later: only this second is recent
	if g, r := p.last(); g != 5 || r != 50 {
		t.Fatalf("last 30 s (%d, %d), want (5, 50)", g, r)
	}
	if p.peakGo != 100 || p.peakRS != 1000 {
		t.Fatalf("overall peaks (%d, %d), want (100, 1000)", p.peakGo, p.peakRS)
	}
}

// TestTableShowsMemoryGrowth: a result with early peaks shows them and
// the growth to the end in its note.
func TestTableShowsMemoryGrowth(t *testing.T) {
	var b bytes.Buffer
	err := WriteTable(&b, []Result{{Workload: "W6", RowsPerSec: 1e6, PeakGo: 110 << 20, PeakRSS: 220 << 20,
		PeakGo30s: 100 << 20, PeakRSS30s: 200 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	want := "peak at 30 s: Go 100 MiB (end +10.0%), RSS 200 MiB (end +10.0%)"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("table\n%s\nhas no %q", b.String(), want)
	}
	b.Reset()
	err = WriteTable(&b, []Result{{Workload: "W10", RowsPerSec: 1e6, PeakGo: 110 << 20, PeakRSS: 220 << 20,
		PeakGo30s: 100 << 20, PeakRSS30s: 200 << 20, PeakGoLast30s: 102 << 20, PeakRSSLast30s: 190 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	want = "peak at 30 s: Go 100 MiB (end +10.0%, last 30 s +2.0%), RSS 200 MiB (end +10.0%, last 30 s -5.0%)"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("table\n%s\nhas no %q", b.String(), want)
	}
}
