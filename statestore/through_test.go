package statestore

import (
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
