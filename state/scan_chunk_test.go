package state

import (
	"testing"
)

// countingBackend counts the entries the backend's scans copy.
type countingBackend struct {
	backend
	copied int
}

func (b *countingBackend) scan(kg int, lower, upper []byte, idx index, reverse bool, limit int, c *chunk) error {
	before := c.len()
	err := b.backend.scan(kg, lower, upper, idx, reverse, limit, c)
	b.copied += c.len() - before
	return err
}

// TestShortScanCopiesFewEntries: a scan that stops after a few entries
// (the ten rows before a position, the first entry) copies few entries
// from the backend, not a whole chunk of 256; a full scan still sees every
// entry, in order, both ways.
func TestShortScanCopiesFewEntries(t *testing.T) {
	be := &countingBackend{backend: newMemBackend()}
	k, err := newKeyed(be, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSortedMapState(k, "s", Int64{}, Int64{})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SetCurrentKey([]byte("k")); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	for i := range int64(n) {
		if err := s.Put(i, -i); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	be.copied = 0
	err = s.DescendBelow(4000, func(key, v int64) (bool, error) {
		got = append(got, key)
		return len(got) < 10, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0] != 3999 || got[9] != 3990 {
		t.Fatalf("the 10 keys below 4000: %v", got)
	}
	if be.copied > 32 {
		t.Errorf("DescendBelow of 10 entries copied %d entries from the backend, want at most %d", be.copied, 32)
	}
	be.copied = 0
	if _, _, ok, err := s.First(); err != nil || !ok {
		t.Fatalf("First: %v %v", ok, err)
	}
	if be.copied > 16 {
		t.Errorf("First copied %d entries, want at most %d", be.copied, 16)
	}
	for _, desc := range []bool{false, true} {
		var keys []int64
		fn := func(key, v int64) (bool, error) {
			if v != -key {
				t.Fatalf("key %d has value %d", key, v)
			}
			keys = append(keys, key)
			return true, nil
		}
		if desc {
			err = s.Descend(fn)
		} else {
			err = s.Ascend(fn)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != n {
			t.Fatalf("descending %v: %d keys, want %d", desc, len(keys), n)
		}
		for i, key := range keys {
			want := int64(i)
			if desc {
				want = n - 1 - int64(i)
			}
			if key != want {
				t.Fatalf("descending %v: key %d at %d, want %d", desc, key, i, want)
			}
		}
	}
}
