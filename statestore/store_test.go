package statestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func openTest(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "work"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func table(t testing.TB, s *Store, op, name string) *Table {
	t.Helper()
	tb, err := s.Table(op, name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func mustGet(t testing.TB, tb *Table, kg int, key string) (string, bool) {
	t.Helper()
	v, ok, err := tb.Get(kg, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

func TestKeyEncodingRoundTrip(t *testing.T) {
	cases := []struct {
		op, name string
		kg       int
		key      string
	}{
		{"agg", "sum", 0, "k"},
		{"", "", 127, ""},
		{"op-1", "count", 65535, "ab\x00c"},
		{"x", "s", 3, "keyendingins"},
	}
	for _, c := range cases {
		enc := appendStateKey(nil, appendOperatorPrefix(nil, c.op), c.kg, []byte(c.key), c.name)
		d, err := decodeKey(enc)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if string(d.operatorID) != c.op || d.keyGroup != c.kg || string(d.key) != c.key || string(d.stateName) != c.name {
			t.Errorf("%+v: decoded %q %d %q %q", c, d.operatorID, d.keyGroup, d.key, d.stateName)
		}
	}
	// The encoding is unambiguous where plain concatenation is not.
	a := appendStateKey(nil, appendOperatorPrefix(nil, "o"), 1, []byte("ab"), "c")
	b := appendStateKey(nil, appendOperatorPrefix(nil, "o"), 1, []byte("a"), "bc")
	if bytes.Equal(a, b) {
		t.Error("keys (ab,c) and (a,bc) collide")
	}
}

func TestCRUDThroughCache(t *testing.T) {
	s := openTest(t, Options{})
	sum := table(t, s, "agg", "sum")
	cnt := table(t, s, "agg", "count")
	other := table(t, s, "agg2", "sum")

	steps := []struct {
		op       string // put, del, get, flush
		tb       *Table
		kg       int
		key, val string
		found    bool
	}{
		{"get", sum, 1, "a", "", false},
		{"put", sum, 1, "a", "1", true},
		{"get", sum, 1, "a", "1", true},
		{"get", cnt, 1, "a", "", false},
		{"get", other, 1, "a", "", false},
		{"get", sum, 2, "a", "", false},
		{"put", cnt, 1, "a", "7", true},
		{"put", sum, 1, "a", "longer value", true},
		{"get", sum, 1, "a", "longer value", true},
		{"flush", nil, 0, "", "", false},
		{"get", sum, 1, "a", "longer value", true},
		{"del", sum, 1, "a", "", false},
		{"get", sum, 1, "a", "", false},
		{"get", cnt, 1, "a", "7", true},
		{"flush", nil, 0, "", "", false},
		{"get", sum, 1, "a", "", false},
		{"put", sum, 1, "a", "back", true},
		{"get", sum, 1, "a", "back", true},
		{"del", sum, 5, "never", "", false},
		{"get", sum, 5, "never", "", false},
	}
	for i, st := range steps {
		var err error
		switch st.op {
		case "put":
			err = st.tb.Put(st.kg, []byte(st.key), []byte(st.val))
		case "del":
			err = st.tb.Delete(st.kg, []byte(st.key))
		case "flush":
			err = s.Flush()
		case "get":
			v, ok := mustGet(t, st.tb, st.kg, st.key)
			if ok != st.found || v != st.val {
				t.Errorf("step %d: get(%d,%q) = %q,%v; want %q,%v", i, st.kg, st.key, v, ok, st.val, st.found)
			}
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

func TestBadInput(t *testing.T) {
	s := openTest(t, Options{MaxParallelism: 8})
	tb := table(t, s, "op", "st")
	if err := tb.Put(8, []byte("k"), nil); err == nil {
		t.Error("Put with key group 8 of 8: want error")
	}
	if _, _, err := tb.Get(-1, []byte("k")); err == nil {
		t.Error("Get with key group -1: want error")
	}
	if err := tb.Scan(3, 2, func(int, []byte, []byte) error { return nil }); err == nil {
		t.Error("Scan with empty range: want error")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := tb.Put(1, []byte("k"), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Snapshot(filepath.Join(t.TempDir(), "snap")); !errors.Is(err, ErrClosed) {
		t.Errorf("Snapshot after Close: %v, want ErrClosed", err)
	}
	long := string(make([]byte, 256))
	if _, err := s.Table(long, "x"); err == nil {
		t.Error("256-byte operator id: want error")
	}
	if _, err := s.Table("x", long); err == nil {
		t.Error("256-byte state name: want error")
	}
}

func keyOf(i int) []byte { return []byte(fmt.Sprintf("key-%07d", i)) }

func valOf(i, gen int) []byte {
	return binary.BigEndian.AppendUint64([]byte(fmt.Sprintf("v%d-", gen)), uint64(i))
}

// fill writes n keys spread over maxPar key groups with generation gen.
func fill(t testing.TB, tb *Table, n, maxPar, gen int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := tb.Put(i%maxPar, keyOf(i), valOf(i, gen)); err != nil {
			t.Fatal(err)
		}
	}
}

// checkAll reads every key back and compares with generation gen, or
// absent when gen < 0.
func checkAll(t testing.TB, tb *Table, n, maxPar int, gen func(i int) int) {
	t.Helper()
	for i := 0; i < n; i++ {
		v, ok, err := tb.Get(i%maxPar, keyOf(i))
		if err != nil {
			t.Fatal(err)
		}
		g := gen(i)
		if g < 0 {
			if ok {
				t.Fatalf("key %d: found %q, want absent", i, v)
			}
			continue
		}
		if !ok || !bytes.Equal(v, valOf(i, g)) {
			t.Fatalf("key %d: got %q,%v want %q", i, v, ok, valOf(i, g))
		}
	}
}

func TestLargerThanCache(t *testing.T) {
	n := 200_000
	if raceEnabled {
		n = 20_000
	}
	s := openTest(t, Options{CacheBytes: 1 << 20})
	tb := table(t, s, "agg", "sum")
	fill(t, tb, n, 128, 1)
	if s.cache.bytes > s.cache.budget {
		t.Errorf("cache holds %d bytes, budget %d", s.cache.bytes, s.cache.budget)
	}
	// Overwrite every third key, delete every seventh.
	for i := 0; i < n; i += 3 {
		if err := tb.Put(i%128, keyOf(i), valOf(i, 2)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 7 {
		if err := tb.Delete(i%128, keyOf(i)); err != nil {
			t.Fatal(err)
		}
	}
	want := func(i int) int {
		switch {
		case i%7 == 0:
			return -1
		case i%3 == 0:
			return 2
		}
		return 1
	}
	checkAll(t, tb, n, 128, want)
	if s.cache.bytes > s.cache.budget {
		t.Errorf("after reads the cache holds %d bytes, budget %d", s.cache.bytes, s.cache.budget)
	}
	// Scan sees the same content.
	seen := 0
	err := tb.Scan(0, 127, func(kg int, key, value []byte) error {
		var i int
		if _, err := fmt.Sscanf(string(key), "key-%d", &i); err != nil {
			return err
		}
		if kg != i%128 || !bytes.Equal(value, valOf(i, want(i))) {
			return fmt.Errorf("scan: key %d in group %d value %q", i, kg, value)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if wantN := n - (n+6)/7; seen != wantN {
		t.Errorf("scan saw %d keys, want %d", seen, wantN)
	}
}

func TestScanKeyGroupRange(t *testing.T) {
	s := openTest(t, Options{MaxParallelism: 16})
	a := table(t, s, "a", "st")
	b := table(t, s, "a", "other")
	c := table(t, s, "ab", "st")
	for kg := 0; kg < 16; kg++ {
		for _, tb := range []*Table{a, b, c} {
			if err := tb.Put(kg, []byte{byte('k'), byte(kg)}, []byte{byte(kg)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []int
	err := a.Scan(4, 6, func(kg int, key, value []byte) error {
		got = append(got, kg)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[4 5 6]" {
		t.Errorf("scan [4,6] of a/st visited groups %v", got)
	}
}

// checksums returns the SHA-256 of every file under dir, by relative path.
func checksums(t testing.TB, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = sha256.Sum256(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSnapshotRestore(t *testing.T) {
	n := 20_000
	if raceEnabled {
		n = 5_000
	}
	root := t.TempDir()
	s := openTest(t, Options{CacheBytes: 256 << 10})
	tb := table(t, s, "agg", "sum")
	fill(t, tb, n, 128, 1)
	snap := filepath.Join(root, "snap1")
	info, err := s.Snapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	if info.Keys != int64(n) {
		t.Errorf("snapshot reports %d keys, want %d", info.Keys, n)
	}
	var sum int64
	for _, f := range info.Files {
		sum += f.Size
	}
	if sum != info.Bytes || len(info.Files) == 0 {
		t.Errorf("snapshot files %v sum %d, Bytes %d", info.Files, sum, info.Bytes)
	}
	if _, err := s.Snapshot(snap); err == nil {
		t.Error("snapshot into an existing folder: want error")
	}
	before := checksums(t, snap)

	// Later writes to the original are not in the snapshot.
	fill(t, tb, n/2, 128, 2)

	r, err := Restore(snap, filepath.Join(root, "work2"), Options{CacheBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rt := table(t, r, "agg", "sum")
	checkAll(t, rt, n, 128, func(int) int { return 1 })

	// Writes to the restored store and another snapshot leave snap1 intact.
	fill(t, rt, n, 128, 3)
	if err := rt.Delete(0, keyOf(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Snapshot(filepath.Join(root, "snap2")); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	after := checksums(t, snap)
	if len(after) != len(before) {
		t.Fatalf("snapshot had %d files, now %d", len(before), len(after))
	}
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("snapshot file %s changed", name)
		}
	}
	// And snap1 still restores to generation 1.
	r2, err := Restore(snap, filepath.Join(root, "work3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	checkAll(t, table(t, r2, "agg", "sum"), n, 128, func(int) int { return 1 })

	if _, err := Restore(snap, filepath.Join(root, "work3"), Options{}); err == nil {
		t.Error("restore into a non-empty folder: want error")
	}
	// snap2 holds generation 3 without key 0.
	r3, err := Restore(filepath.Join(root, "snap2"), filepath.Join(root, "work4"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	checkAll(t, table(t, r3, "agg", "sum"), n, 128, func(i int) int {
		if i == 0 {
			return -1
		}
		return 3
	})
}

func TestIncrementalSnapshotSharesFiles(t *testing.T) {
	n := 100_000
	if raceEnabled {
		n = 20_000
	}
	root := t.TempDir()
	s := openTest(t, Options{CacheBytes: 1 << 20})
	tb := table(t, s, "agg", "sum")
	fill(t, tb, n, 128, 1)
	info1, err := s.Snapshot(filepath.Join(root, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := tb.Put(i%128, keyOf(i), valOf(i, 2)); err != nil {
			t.Fatal(err)
		}
	}
	info2, err := s.Snapshot(filepath.Join(root, "s2"))
	if err != nil {
		t.Fatal(err)
	}
	var sstBytes, shared int64
	for _, f := range info2.Files {
		if !isImmutable(f.Name) {
			continue
		}
		sstBytes += f.Size
		a, err1 := os.Stat(filepath.Join(root, "s1", f.Name))
		b, err2 := os.Stat(filepath.Join(root, "s2", f.Name))
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			shared += f.Size
		}
	}
	if sstBytes == 0 || shared*10 < sstBytes*9 {
		t.Errorf("second snapshot shares %d of %d sstable bytes; want >= 90%% (s1 %v, s2 %v)",
			shared, sstBytes, info1.Files, info2.Files)
	}
	// Each snapshot restores to what the store held when it was taken:
	// the shared files do not mix the generations.
	for _, c := range []struct {
		snap string
		gen  func(int) int
	}{
		{"s1", func(int) int { return 1 }},
		{"s2", func(i int) int {
			if i < 100 {
				return 2
			}
			return 1
		}},
	} {
		r, err := Restore(filepath.Join(root, c.snap), filepath.Join(root, "work-"+c.snap), Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkAll(t, table(t, r, "agg", "sum"), n, 128, c.gen)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRestoreKeyGroups(t *testing.T) {
	const n, maxPar = 10_000, 16
	root := t.TempDir()
	// Two old subtasks own key groups [0,7] and [8,15].
	var snaps []string
	for sub, rng := range [][2]int{{0, 7}, {8, 15}} {
		s := openTest(t, Options{MaxParallelism: maxPar, CacheBytes: 64 << 10})
		a := table(t, s, "agg", "sum")
		b := table(t, s, "join", "left")
		for i := 0; i < n; i++ {
			kg := i % maxPar
			if kg < rng[0] || kg > rng[1] {
				continue
			}
			if err := a.Put(kg, keyOf(i), valOf(i, 1)); err != nil {
				t.Fatal(err)
			}
			if err := b.Put(kg, keyOf(i), valOf(i, 2)); err != nil {
				t.Fatal(err)
			}
		}
		dir := filepath.Join(root, fmt.Sprintf("snap%d", sub))
		if _, err := s.Snapshot(dir); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, dir)
	}
	// The new subtask owns key groups [5,10], spread over both snapshots.
	r, err := RestoreKeyGroups(snaps, filepath.Join(root, "new"), 5, 10, Options{MaxParallelism: maxPar})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inRange := func(i int) bool { kg := i % maxPar; return kg >= 5 && kg <= 10 }
	for _, c := range []struct {
		op, name string
		gen      int
	}{{"agg", "sum", 1}, {"join", "left", 2}} {
		checkAll(t, table(t, r, c.op, c.name), n, maxPar, func(i int) int {
			if inRange(i) {
				return c.gen
			}
			return -1
		})
	}
}
