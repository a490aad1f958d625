package bench

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// memSampler records the peak memory of the process while a workload runs,
// sampling every interval in its own goroutine:
//   - Go: memory the Go runtime has mapped and not released to the OS
//     (/memory/classes/total minus /memory/classes/heap/released), which
//     covers the Go heap, stacks and runtime metadata;
//   - RSS: the resident set of the process (/proc/self/statm), which also
//     covers Pebble's block cache and memtables (allocated outside the Go
//     heap when cgo is on). 0 where /proc is unavailable.
//
// It also keeps the peaks as they were at memoryMark into the run, so that
// a long run shows whether memory still grows after the first half minute,
// and the peaks over the run's last memoryMark: a peak over the whole run
// takes in every spike of its minutes, the last half minute's tells
// memory that still grows from spikes that come and go.
type memSampler struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	peaks peakTracker
}

// memoryMark is when into a run the early peaks are taken (Result.PeakRSS30s).
const memoryMark = 30 * time.Second

// peakTracker keeps the peaks of memory samples, overall and over the
// samples taken before a mark.
type peakTracker struct {
	mark           time.Duration
	peakGo, peakRS uint64
	// marked is set by the first sample at or after mark; markGo and
	// markRS are then the peaks of the samples before it.
	marked         bool
	markGo, markRS uint64
	// recent holds the peaks of the samples of each of the last seconds
	// of the run, by second (its second since the start, mod len).
	recent [memoryMark / time.Second]secondPeak
	latest int64 // the second of the latest sample
}

// secondPeak is the peaks of the samples of one second of a run.
type secondPeak struct {
	sec     int64
	goB, rs uint64
}

// observe takes a sample taken at elapsed into the run.
func (p *peakTracker) observe(elapsed time.Duration, goBytes, rss uint64) {
	if !p.marked && elapsed >= p.mark {
		p.marked, p.markGo, p.markRS = true, p.peakGo, p.peakRS
	}
	p.peakGo = max(p.peakGo, goBytes)
	p.peakRS = max(p.peakRS, rss)
	sec, n := int64(elapsed/time.Second), int64(len(p.recent))
	if sec <= p.latest-n {
		return // before the last seconds (samples come in order)
	}
	r := &p.recent[sec%n]
	if r.sec != sec {
		*r = secondPeak{sec: sec}
	}
	r.goB, r.rs = max(r.goB, goBytes), max(r.rs, rss)
	p.latest = max(p.latest, sec)
}

// last returns the peaks over the samples of the last len(recent) seconds
// (to the latest sample's), or zeros if the run was shorter than twice
// mark (the window would overlap the first one).
func (p *peakTracker) last() (goBytes, rss uint64) {
	n := int64(len(p.recent))
	if time.Duration(p.latest+1)*time.Second < 2*p.mark {
		return 0, 0
	}
	for _, r := range p.recent {
		if r.sec > p.latest-n {
			goBytes, rss = max(goBytes, r.goB), max(rss, r.rs)
		}
	}
	return goBytes, rss
}

// atMark returns the peaks before the mark, or zeros if no sample reached
// the mark (the run was shorter).
func (p *peakTracker) atMark() (goBytes, rss uint64) {
	if !p.marked {
		return 0, 0
	}
	return p.markGo, p.markRS
}

func startMemSampler(interval time.Duration) *memSampler {
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{}), peaks: peakTracker{mark: memoryMark}}
	start := time.Now()
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	pageSize := uint64(os.Getpagesize())
	buf := make([]byte, 128)
	sample := func() {
		metrics.Read(samples)
		var g uint64
		if samples[0].Value.Kind() == metrics.KindUint64 && samples[1].Value.Kind() == metrics.KindUint64 {
			g = samples[0].Value.Uint64() - samples[1].Value.Uint64()
		}
		rss := readRSS(buf, pageSize)
		m.mu.Lock()
		m.peaks.observe(time.Since(start), g, rss)
		m.mu.Unlock()
	}
	sample()
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				sample()
			case <-m.stop:
				sample()
				return
			}
		}
	}()
	return m
}

// memPeaks are the peaks (Go runtime, RSS) in bytes a memSampler took.
type memPeaks struct {
	goB, rss        uint64 // over the run
	goMark, rssMark uint64 // over its first memoryMark (zeros for a shorter run)
	goLast, rssLast uint64 // over its last memoryMark (zeros for a run under twice that)
}

// finish stops sampling and returns the peaks.
func (m *memSampler) finish() memPeaks {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	var r memPeaks
	r.goB, r.rss = m.peaks.peakGo, m.peaks.peakRS
	r.goMark, r.rssMark = m.peaks.atMark()
	r.goLast, r.rssLast = m.peaks.last()
	return r
}

// readRSS returns the resident set size from /proc/self/statm, or 0.
func readRSS(buf []byte, pageSize uint64) uint64 {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0
	}
	defer f.Close()
	n, _ := f.Read(buf)
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * pageSize
}
