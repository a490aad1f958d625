package statestore

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestPutThrough checks that writes that bypass the cache stay coherent
// with the cache, with reads, deletes and snapshots.
func TestPutThrough(t *testing.T) {
	s := openTest(t, Options{CacheBytes: 1 << 20})
	defer s.Close()
	tb := table(t, s, "op", "st")
	put := func(key, val string) {
		if err := tb.PutThrough(3, []byte(key), []byte(val)); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "1")
	put("b", "1")
	// A read sees what was written through (it commits first).
	if v, ok := mustGet(t, tb, 3, "a"); !ok || v != "1" {
		t.Fatalf("a = %q %v, want 1", v, ok)
	}
	// a is now cached (clean); a write-through goes to the cache, so the
	// cache never holds a stale value.
	put("a", "2")
	if v, _ := mustGet(t, tb, 3, "a"); v != "2" {
		t.Fatalf("a = %q after a second write, want 2", v)
	}
	// A delete through the cache after a write-through of the same key wins.
	put("c", "1")
	if err := tb.Delete(3, []byte("c")); err != nil {
		t.Fatal(err)
	}
	put("d", "1")
	if err := s.CommitThrough(); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), "snap")
	if _, err := s.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(snap, filepath.Join(t.TempDir(), "work"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rt := table(t, r, "op", "st")
	want := map[string]string{"a": "2", "b": "1", "d": "1"}
	got := map[string]string{}
	if err := rt.Scan(0, 127, func(_ int, k, v []byte) error {
		got[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("restored %v, want %v", got, want)
		}
	}
}

// TestReplaceAllForgetsDroppedDirty: keys deleted through the cache and
// then dropped by ReplaceAll leave no trace in the cache's list of dirty
// entries, round after round, whether or not another operator's entries
// are dirty at the time; what the stores hold stays right.
func TestReplaceAllForgetsDroppedDirty(t *testing.T) {
	s := openTest(t, Options{CacheBytes: 1 << 20, MaxParallelism: 8})
	sp, err := s.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Space("other")
	if err != nil {
		t.Fatal(err)
	}
	const keys = 200
	for round := range 30 {
		for i := range keys {
			// New keys each round, so that freed cache slots are reused.
			if err := sp.Delete(i%8, []byte(fmt.Sprintf("r%02d-k%03d", round, i))); err != nil {
				t.Fatal(err)
			}
		}
		withOther := round%2 == 1
		if withOther {
			if err := other.Put(round%8, []byte(fmt.Sprintf("o%02d", round)), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := sp.ReplaceAll(); err != nil {
			t.Fatal(err)
		}
		if err := sp.PutThrough(round%8, []byte(fmt.Sprintf("r%02d-k000", round)), []byte("live")); err != nil {
			t.Fatal(err)
		}
		if n, want := len(s.cache.dirtyList), s.cache.dirty; n != want {
			t.Fatalf("round %d: %d slots listed dirty after ReplaceAll, want %d (the dirty entries)", round, n, want)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if n := len(s.cache.dirtyList); n != 0 {
			t.Fatalf("round %d: %d slots listed dirty after a flush", round, n)
		}
	}
	if c := cap(s.cache.dirtyList); c > 2*keys {
		t.Errorf("dirty list capacity %d after 30 rounds of %d deleted keys", c, keys)
	}
	// op holds only the last round's write; other every odd round's key.
	got := map[string]string{}
	for kg := range 8 {
		err := sp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
			got[string(k)] = string(v)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 || got["r29-k000"] != "live" {
		t.Errorf("op holds %v, want r29-k000=live", got)
	}
	for round := 1; round < 30; round += 2 {
		if _, ok, err := other.Get(round%8, []byte(fmt.Sprintf("o%02d", round))); err != nil || !ok {
			t.Errorf("other's key of round %d: found %v (%v)", round, ok, err)
		}
	}
}
