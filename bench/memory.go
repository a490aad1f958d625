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
type memSampler struct {
	stop chan struct{}
	done chan struct{}

	mu             sync.Mutex
	peakGo, peakRS uint64
}

func startMemSampler(interval time.Duration) *memSampler {
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{})}
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
		m.peakGo = max(m.peakGo, g)
		m.peakRS = max(m.peakRS, rss)
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

// finish stops sampling and returns the peaks (Go runtime, RSS) in bytes.
func (m *memSampler) finish() (goBytes, rssBytes uint64) {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peakGo, m.peakRS
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
