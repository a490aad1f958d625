package state

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
)

// readCounter counts the entries a Keyed reads from its backend: each
// get, and each entry a scan returns.
type readCounter struct {
	backend
	read int
}

func (c *readCounter) get(kg int, key []byte, idx index) ([]byte, bool, error) {
	c.read++
	return c.backend.get(kg, key, idx)
}

func (c *readCounter) scan(kg int, lower, upper []byte, idx index, reverse bool, limit int, ch *chunk) error {
	n := ch.len()
	err := c.backend.scan(kg, lower, upper, idx, reverse, limit, ch)
	c.read += ch.len() - n
	return err
}

// TestTTLExpiresWithoutScan checks that the state TTL costs what expires,
// not what the state holds: 20 keys written at time 0 and 5,000 written at
// 600 ms, with a TTL of 1 s; at 1 s the 20 expire, reading a few hundred
// entries at most where the state holds over 20,000 (4 per key: a value,
// a map entry, the write time and the TTL timer), and an advance with nothing due reads almost nothing. The
// 20 keys' state is gone and the 5,000 keep theirs. In memory and over a
// statestore whose cache is smaller than the state.
func TestTTLExpiresWithoutScan(t *testing.T) {
	const early, late, maxPar = 20, 5000, 128
	for _, onPebble := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "pebble"}[onPebble], func(t *testing.T) {
			opts := Options{OperatorID: "op", MaxParallelism: maxPar, TTL: time.Second}
			var k *Keyed
			var err error
			if onPebble {
				st, serr := statestore.Open(filepath.Join(t.TempDir(), "s"), statestore.Options{CacheBytes: 64 << 10, MaxParallelism: maxPar})
				if serr != nil {
					t.Fatal(serr)
				}
				t.Cleanup(func() { _ = st.Close() })
				k, err = Open(st, opts)
			} else {
				k, err = NewMemory(opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			v, err := NewValueState(k, "v", Int64{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewMapState(k, "m", String{}, Int64{})
			if err != nil {
				t.Fatal(err)
			}
			noTimers := func(Timer) error { return fmt.Errorf("no timer was registered") }
			write := func(from, to int64) {
				for key := from; key < to; key++ {
					must(t, k.SetCurrentKey(Int64{}.Append(nil, key)))
					must(t, v.Update(key))
					must(t, m.Put("a", key))
				}
			}
			must(t, k.AdvanceProcessingTime(0, noTimers))
			write(0, early)
			must(t, k.AdvanceProcessingTime(600, noTimers))
			write(early, early+late)

			// Each key holds a value, a map entry, its write time and its
			// TTL timer.
			entries := 4 * (early + late)

			cb := &readCounter{backend: k.be}
			k.be = cb
			must(t, k.AdvanceProcessingTime(1000, noTimers))
			expiring := cb.read
			if expiring > 40*early || expiring > entries/20 {
				t.Errorf("expiring %d keys read %d entries; the state holds %d: a scan?", early, expiring, entries)
			}
			cb.read = 0
			must(t, k.AdvanceProcessingTime(1500, noTimers))
			if cb.read > maxPar {
				t.Errorf("an advance with nothing due read %d entries", cb.read)
			}
			t.Logf("%d entries in state; expiring %d keys read %d, an advance with nothing due %d", entries, early, expiring, cb.read)
			k.be = cb.backend

			for key := range int64(early + late) {
				must(t, k.SetCurrentKey(Int64{}.Append(nil, key)))
				got, ok, err := v.Value()
				must(t, err)
				mv, mok, err := m.Get("a")
				must(t, err)
				if want := key >= early; ok != want || mok != want || (want && (got != key || mv != key)) {
					t.Fatalf("key %d at 1.5 s: value %d %v, map %d %v; want present %v", key, got, ok, mv, mok, want)
				}
			}
		})
	}
}
