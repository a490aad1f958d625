package statestore

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestSpace: a Space's keys are read through the cache (also after they
// were evicted), scanned in order within bounds in both directions, kept
// apart from another operator's and from other key groups, and copied by
// key group when restoring at another parallelism.
func TestSpace(t *testing.T) {
	s := openTest(t, Options{CacheBytes: 2 << 10, MaxParallelism: 8})
	sp, err := s.Space("op-a")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Space("op-ab") // an id with op-a as a prefix
	if err != nil {
		t.Fatal(err)
	}
	for kg := range 8 {
		for i := range 50 {
			if err := sp.Put(kg, []byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprint(kg*1000+i))); err != nil {
				t.Fatal(err)
			}
			if err := other.Put(kg, []byte(fmt.Sprintf("k%03d", i)), []byte("other")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sp.Delete(3, []byte("k010")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := sp.Get(3, []byte("k011")); err != nil || !ok || string(v) != "3011" {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	if _, ok, err := sp.Get(3, []byte("k010")); err != nil || ok {
		t.Fatalf("deleted key found (%v)", err)
	}
	scan := func(sp *Space, kg int, lo, hi string, reverse bool) []string {
		var lower, upper []byte
		lower = []byte(lo)
		if hi != "" {
			upper = []byte(hi)
		}
		var got []string
		err := sp.Scan(kg, lower, upper, reverse, func(k, v []byte) (bool, error) {
			got = append(got, string(k)+"="+string(v))
			return len(got) < 4, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got, want := scan(sp, 3, "k008", "k012", false), []string{"k008=3008", "k009=3009", "k011=3011"}; !slices.Equal(got, want) {
		t.Errorf("scan %v, want %v", got, want)
	}
	if got, want := scan(sp, 3, "k008", "k012", true), []string{"k011=3011", "k009=3009", "k008=3008"}; !slices.Equal(got, want) {
		t.Errorf("reverse scan %v, want %v", got, want)
	}
	if got, want := scan(sp, 7, "k048", "", false), []string{"k048=7048", "k049=7049"}; !slices.Equal(got, want) {
		t.Errorf("scan to the end of the key group: %v, want %v", got, want)
	}
	if got, want := scan(sp, 5, "", "", true), []string{"k049=5049", "k048=5048", "k047=5047", "k046=5046"}; !slices.Equal(got, want) {
		t.Errorf("reverse scan of a key group %v, want %v", got, want)
	}
	if err := sp.Scan(8, nil, nil, false, nil); err == nil {
		t.Error("scan of key group 8 of 8 accepted")
	}

	dir := filepath.Join(t.TempDir(), "snap")
	if _, err := s.Snapshot(dir); err != nil {
		t.Fatal(err)
	}
	r, err := RestoreKeyGroups([]string{dir}, filepath.Join(t.TempDir(), "r"), 2, 4, Options{MaxParallelism: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rsp, err := r.Space("op-a")
	if err != nil {
		t.Fatal(err)
	}
	for kg := range 8 {
		got := scan(rsp, kg, "", "", false)
		if (kg >= 2 && kg <= 4) != (len(got) == 4) || kg < 2 && len(got) != 0 {
			t.Errorf("restored key group %d holds %v", kg, got)
		}
	}
}

// TestOnSnapshot: a hook registered with OnSnapshot runs at the start of
// every Snapshot, what it writes is in that snapshot, and its error fails
// the snapshot.
func TestOnSnapshot(t *testing.T) {
	s := openTest(t, Options{MaxParallelism: 4})
	sp, err := s.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var fail error
	sp.OnSnapshot(func() error {
		n++
		if fail != nil {
			return fail
		}
		return sp.PutThrough(1, []byte("k"), []byte(fmt.Sprint(n)))
	})
	dir := t.TempDir()
	if _, err := s.Snapshot(filepath.Join(dir, "1")); err != nil {
		t.Fatal(err)
	}
	fail = fmt.Errorf("boom")
	if _, err := s.Snapshot(filepath.Join(dir, "2")); err == nil || n != 2 {
		t.Fatalf("snapshot with a failing hook: %v after %d calls", err, n)
	}
	r, err := Restore(filepath.Join(dir, "1"), filepath.Join(dir, "work"), Options{MaxParallelism: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rsp, err := r.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := rsp.Get(1, []byte("k")); err != nil || !ok || string(v) != "1" {
		t.Fatalf("restored: %q %v %v", v, ok, err)
	}
}
