package statestore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
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

// TestDeleteUncached: a key deleted with DeleteUncached reads as absent
// before and after the flush that writes the deletion, and that flush
// drops it from the cache, so that deleting many keys leaves the cache
// empty (Delete keeps each as a cached miss); a write of the key before
// the flush wins over the deletion and stays cached; a snapshot restores
// what was written.
func TestDeleteUncached(t *testing.T) {
	s := openTest(t, Options{CacheBytes: 1 << 20, MaxParallelism: 8})
	sp, err := s.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) (string, bool) {
		t.Helper()
		v, ok, err := sp.Get(1, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return string(v), ok
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := sp.Put(1, []byte(k), []byte("v"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := sp.DeleteUncached(1, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.Put(1, []byte("b"), []byte("again")); err != nil { // b's write wins
		t.Fatal(err)
	}
	if err := sp.PutThrough(1, []byte("c"), []byte("through")); err != nil { // so does c's
		t.Fatal(err)
	}
	if _, ok := get("a"); ok {
		t.Fatal("a found after its deletion, before the flush")
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.cache.index); n != 2 {
		t.Errorf("%d keys cached after the flush, want 2 (b and c, written again)", n)
	}
	if _, ok := get("a"); ok {
		t.Fatal("a found after its deletion was flushed")
	}
	if v, ok := get("b"); !ok || v != "again" {
		t.Fatalf("b = %q %v, want again", v, ok)
	}
	if v, ok := get("c"); !ok || v != "through" {
		t.Fatalf("c = %q %v, want through", v, ok)
	}
	// Many keys deleted: Delete keeps them cached, DeleteUncached not.
	for i := range 1000 {
		key := []byte(fmt.Sprintf("k%04d", i))
		if err := sp.PutThrough(1+i%7, key, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	before := len(s.cache.index)
	for i := range 1000 {
		key := []byte(fmt.Sprintf("k%04d", i))
		del := sp.DeleteUncached
		if i%2 == 0 {
			del = sp.Delete
		}
		if err := del(1+i%7, key); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.cache.index) - before; n != 500 {
		t.Errorf("%d more keys cached after deleting 500 with Delete and 500 with DeleteUncached, want 500", n)
	}
	snap := filepath.Join(t.TempDir(), "snap")
	if _, err := s.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(snap, filepath.Join(t.TempDir(), "work"), Options{MaxParallelism: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rsp, err := r.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for kg := range 8 {
		err := rsp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
			got[string(k)] = string(v)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got["b"] != "again" || got["c"] != "through" {
		t.Fatalf("restored %v, want b=again c=through", got)
	}
}

// TestReplaceWritesNoFilter: the sstable of a replace run (a whole
// operator's state, kept in memory by its owner) carries no Bloom filter,
// while an ordinary ascending run's ingested sstable keeps the one every
// level of the database has; both read back whole.
func TestReplaceWritesNoFilter(t *testing.T) {
	s := openTest(t, Options{CacheBytes: 1 << 20, MaxParallelism: 8})
	defer s.Close()
	s.through.minIngest = 4
	filters := func() map[string]bool {
		t.Helper()
		tables, err := s.db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{} // smallest user key's operator -> has a filter
		for _, level := range tables {
			for _, tb := range level {
				got[string(tb.Smallest.UserKey)] = tb.Properties.FilterPolicyName != ""
			}
		}
		return got
	}
	write := func(sp *Space, n int) {
		t.Helper()
		for i := range n {
			if err := sp.PutThrough(1, fmt.Appendf(nil, "k%04d", i), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CommitThrough(); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.Space("rep")
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.ReplaceAll(); err != nil {
		t.Fatal(err)
	}
	write(rep, 100)
	plain, err := s.Space("plain")
	if err != nil {
		t.Fatal(err)
	}
	write(plain, 100)
	var withFilter, without int
	for _, has := range filters() {
		if has {
			withFilter++
		} else {
			without++
		}
	}
	if withFilter != 1 || without != 1 {
		t.Fatalf("%d sstables with a filter and %d without, want 1 and 1 (the plain run's and the replace run's)", withFilter, without)
	}
	for _, sp := range []*Space{rep, plain} {
		n := 0
		if err := sp.Scan(1, nil, nil, false, func(k, v []byte) (bool, error) {
			n++
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != 100 {
			t.Fatalf("read back %d keys, want 100", n)
		}
	}
}
