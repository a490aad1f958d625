package statestore

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkPutGet measures a read-modify-write (the grouped aggregate's
// access pattern) through the cache over a working set of 10k keys that fits
// in the cache, and over 1M keys that does not.
func BenchmarkPutGet(b *testing.B) {
	for _, c := range []struct {
		keys  int
		cache int64
	}{{10_000, 64 << 20}, {1_000_000, 8 << 20}} {
		b.Run(fmt.Sprintf("keys=%d/cache=%dMiB", c.keys, c.cache>>20), func(b *testing.B) {
			s := openTest(b, Options{CacheBytes: c.cache})
			tb := table(b, s, "agg", "sum")
			key := make([]byte, 0, 16)
			val := make([]byte, 8)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := (i * 7919) % c.keys
				key = fmt.Appendf(key[:0], "key-%07d", k)
				v, ok, err := tb.Get(k%128, key)
				if err != nil {
					b.Fatal(err)
				}
				if ok {
					copy(val, v)
				}
				val[0]++
				if err := tb.Put(k%128, key, val); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}

// fillMillion builds a store with 1M keys of 16-byte values.
func fillMillion(b *testing.B) *Store {
	s := openTest(b, Options{})
	tb := table(b, s, "agg", "sum")
	val := make([]byte, 16)
	key := make([]byte, 0, 16)
	for i := 0; i < 1_000_000; i++ {
		key = fmt.Appendf(key[:0], "key-%07d", i)
		if err := tb.Put(i%128, key, val); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkSnapshot1M measures Snapshot of a store whose 1M keys are all
// dirty in the cache (the worst case: flush + memtable flush + checkpoint).
func BenchmarkSnapshot1M(b *testing.B) {
	root := b.TempDir()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := fillMillion(b)
		b.StartTimer()
		if _, err := s.Snapshot(filepath.Join(root, fmt.Sprintf("snap%d", i))); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = s.Close()
		b.StartTimer()
	}
}

// BenchmarkRestore1M measures Restore of a 1M-key snapshot.
func BenchmarkRestore1M(b *testing.B) {
	root := b.TempDir()
	s := fillMillion(b)
	snap := filepath.Join(root, "snap")
	if _, err := s.Snapshot(snap); err != nil {
		b.Fatal(err)
	}
	_ = s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Restore(snap, filepath.Join(root, fmt.Sprintf("work%d", i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = r.Close()
		b.StartTimer()
	}
}

// BenchmarkScanAfterPut is a join on spilled state: a put, then a scan of
// one key's entries, with many clean entries in the cache. A scan flushes
// the cache, which must cost what is dirty, not what is cached.
func BenchmarkScanAfterPut(b *testing.B) {
	s, err := Open(b.TempDir(), Options{CacheBytes: 256 << 20, MaxParallelism: 128})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sp, err := s.Space("op")
	if err != nil {
		b.Fatal(err)
	}
	const n = 200000
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%07d", i)) }
	for i := range n {
		if err := sp.Put(i%128, key(i), []byte("v")); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = key(i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % n
		if err := sp.Put(j%128, keys[j], []byte("w")); err != nil {
			b.Fatal(err)
		}
		if err := sp.Scan(j%128, keys[j], nil, false, func(k, v []byte) (bool, error) { return false, nil }); err != nil {
			b.Fatal(err)
		}
	}
}
