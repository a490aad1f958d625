package statestore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// sstFilters returns, per sstable of s, whether it has a Bloom filter.
func sstFilters(t *testing.T, s *Store) (with, without int) {
	t.Helper()
	tables, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range tables {
		for _, tb := range level {
			if tb.Properties.FilterPolicyName != "" {
				with++
			} else {
				without++
			}
		}
	}
	return with, without
}

// TestPutThroughUnfiltered checks which ingested sstables get a Bloom
// filter: none for a run of PutThroughUnfiltered keys, one when a key
// before the sstable opened asked for it; a filtered key that comes while
// the run's sstable has no filter goes to the batch (memtable), and every
// key reads back.
func TestPutThroughUnfiltered(t *testing.T) {
	cases := []struct {
		name string
		// filtered reports whether key i of 100 is written with PutThrough.
		filtered      func(i int) bool
		with, without int // sstables after the run and a flush of the memtable
	}{
		{"all unfiltered", func(int) bool { return false }, 0, 1},
		{"all filtered", func(int) bool { return true }, 1, 0},
		{"filtered before the sstable", func(i int) bool { return i == 2 }, 1, 0},
		// Keys 50 and 70 go to the batch, flushed with a filter.
		{"filtered after the sstable", func(i int) bool { return i == 50 || i == 70 }, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, sp := openThroughTest(t, 4)
			for i := range 100 {
				k, v := fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%d", i)
				put := sp.PutThroughUnfiltered
				if c.filtered(i) {
					put = sp.PutThrough
				}
				if err := put(1, k, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := s.db.Flush(); err != nil { // the batch's keys into an sstable
				t.Fatal(err)
			}
			if with, without := sstFilters(t, s); with != c.with || without != c.without {
				t.Fatalf("%d sstables with a filter and %d without, want %d and %d", with, without, c.with, c.without)
			}
			for i := range 100 {
				v, ok, err := sp.Get(1, fmt.Appendf(nil, "k%04d", i))
				if err != nil || !ok || string(v) != fmt.Sprintf("v%d", i) {
					t.Fatalf("key %d: %q, %v, %v", i, v, ok, err)
				}
			}
		})
	}
}

// TestPutThroughMixedModel writes random runs of filtered and unfiltered
// keys, in order and out of order, with overwrites and deletions, and
// compares what the store reads back with a Go map of the writes.
func TestPutThroughMixedModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	s, sp := openThroughTest(t, 8)
	model := map[string]string{}
	const keys = 2000
	for run := range 40 {
		ascending := rng.IntN(3) > 0
		k := rng.IntN(keys)
		for w := range rng.IntN(300) {
			if ascending {
				k += 1 + rng.IntN(5)
				if k >= keys {
					break
				}
			} else {
				k = rng.IntN(keys)
			}
			key := fmt.Sprintf("k%05d", k)
			switch r := rng.IntN(20); {
			case r == 0:
				if err := sp.Delete(1, []byte(key)); err != nil {
					t.Fatal(err)
				}
				delete(model, key)
			default:
				val := fmt.Sprintf("v%d.%d", run, w)
				put := sp.PutThroughUnfiltered
				if r < 4 {
					put = sp.PutThrough
				}
				if err := put(1, []byte(key), []byte(val)); err != nil {
					t.Fatal(err)
				}
				model[key] = val
			}
		}
		var err error
		switch rng.IntN(3) {
		case 0:
			err = s.CommitThrough()
		case 1:
			err = s.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for k := range keys {
		key := fmt.Sprintf("k%05d", k)
		v, ok, err := sp.Get(1, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		want, wantOK := model[key]
		if ok != wantOK || string(v) != want {
			t.Fatalf("seed %d: %s = %q (%v), want %q (%v)", seed, key, v, ok, want, wantOK)
		}
	}
}

// TestPutThroughMixedSameKey writes one key both ways while the run's
// sstable is open without a filter: a filtered put goes to the batch, which
// commits after the sstable is ingested, so the later write must win in
// either order (a later unfiltered put of the key must not go into the
// sstable).
func TestPutThroughMixedSameKey(t *testing.T) {
	for _, filteredFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("filtered first %v", filteredFirst), func(t *testing.T) {
			s, sp := openThroughTest(t, 4)
			for i := range 10 { // ascending, unfiltered: the sstable opens without a filter
				if err := sp.PutThroughUnfiltered(1, fmt.Appendf(nil, "k%04d", i), []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			if s.through.sst == nil || s.through.filtered {
				t.Fatalf("setup: sstable open %v, filtered %v", s.through.sst != nil, s.through.filtered)
			}
			key := []byte("k9999")
			first, second := sp.PutThrough, sp.PutThroughUnfiltered
			if !filteredFirst {
				first, second = second, first
			}
			if err := first(1, key, []byte("old")); err != nil {
				t.Fatal(err)
			}
			if err := second(1, key, []byte("new")); err != nil {
				t.Fatal(err)
			}
			if err := s.CommitThrough(); err != nil {
				t.Fatal(err)
			}
			if v, ok, err := sp.Get(1, key); err != nil || !ok || string(v) != "new" {
				t.Fatalf("%s = %q (%v, %v), want \"new\" (the later write)", key, v, ok, err)
			}
		})
	}
}

// openThroughTest opens a store whose write-through runs go into an
// sstable after minIngest keys, and its space "op"; the store closes with
// the test.
func openThroughTest(t *testing.T, minIngest int) (*Store, *Space) {
	t.Helper()
	s := openTest(t, Options{CacheBytes: 1 << 20, MaxParallelism: 8})
	s.through.minIngest = minIngest
	sp, err := s.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	return s, sp
}
