package statestore

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDefaultBlockCache: Pebble's block cache is 64 MiB unless set, large
// enough for the filter and index blocks of a subtask's state at 10M
// Nexmark events (8 MiB made every lookup of a new key read them again).
func TestDefaultBlockCache(t *testing.T) {
	po := Options{}.withDefaults().pebbleOptions(newStoreLogger(t.TempDir()))
	if po.CacheSize != 64<<20 {
		t.Errorf("block cache %d bytes, want %d", po.CacheSize, 64<<20)
	}
	po = Options{BlockCacheBytes: 1 << 20}.withDefaults().pebbleOptions(newStoreLogger(t.TempDir()))
	if po.CacheSize != 1<<20 {
		t.Errorf("block cache %d bytes when set to 1 MiB", po.CacheSize)
	}
}

// TestManifestStaysShort: a store checkpointed 150 times (each a run of
// writes ingested as the operator's whole state, as state.Records
// writes, and a snapshot) starts new MANIFESTs as it goes, so the one a
// snapshot copies stays a few KiB long instead of growing with every
// checkpoint; the last snapshot restores the last state.
func TestManifestStaysShort(t *testing.T) {
	s := openTest(t, Options{MaxParallelism: 8})
	sp, err := s.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	manifest := func(dir string) int64 {
		t.Helper()
		names, err := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
		if err != nil || len(names) == 0 {
			t.Fatalf("no MANIFEST in %s (%v)", dir, err)
		}
		slices.Sort(names) // zero-padded numbers: the last is the newest
		fi, err := os.Stat(names[len(names)-1])
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	snaps := t.TempDir()
	var last string
	largest := int64(0)
	for round := range 150 {
		if err := sp.ReplaceAll(); err != nil {
			t.Fatal(err)
		}
		for k := range 20 {
			if err := sp.PutThrough(k%8, []byte(fmt.Sprintf("k%03d", k)), []byte(fmt.Sprint(round))); err != nil {
				t.Fatal(err)
			}
		}
		if last != "" {
			if err := os.RemoveAll(last); err != nil {
				t.Fatal(err)
			}
		}
		last = filepath.Join(snaps, fmt.Sprint(round))
		if _, err := s.Snapshot(last); err != nil {
			t.Fatal(err)
		}
		largest = max(largest, manifest(s.Dir()), manifest(last))
	}
	t.Logf("largest MANIFEST after 150 checkpoints: %d bytes", largest)
	if largest > 2*maxManifestBytes {
		t.Errorf("a MANIFEST of %d bytes after 150 checkpoints: it grows with them", largest)
	}
	r, err := Restore(last, filepath.Join(t.TempDir(), "work"), Options{MaxParallelism: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rsp, err := r.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for kg := range 8 {
		err := rsp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
			if string(v) != "149" {
				return false, fmt.Errorf("%s = %s after restore, want 149", k, v)
			}
			n++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != 20 {
		t.Fatalf("%d keys restored, want 20", n)
	}
}
