package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// fakeOwner is an operator's side of Records: records are int64 values by
// encoded key, in slots.
type fakeOwner struct {
	keys  [][]byte
	vals  []int64
	free  []int32
	index map[string]int32
}

func newFakeOwner() *fakeOwner { return &fakeOwner{index: map[string]int32{}} }

func (f *fakeOwner) AppendRecordKey(dst []byte, slot int32) []byte {
	return append(dst, f.keys[slot]...)
}

func (f *fakeOwner) AppendRecord(dst []byte, slot int32) []byte {
	return binary.AppendVarint(dst, f.vals[slot])
}

func (f *fakeOwner) LoadRecord(key, rec []byte) (int32, error) {
	v, n := binary.Varint(rec)
	if n != len(rec) {
		return 0, fmt.Errorf("bad record %x", rec)
	}
	slot := f.add(key)
	f.vals[slot] = v
	return slot, nil
}

func (f *fakeOwner) DropRecords() { *f = *newFakeOwner() }

func (f *fakeOwner) add(key []byte) int32 {
	var slot int32
	if n := len(f.free); n > 0 {
		slot = f.free[n-1]
		f.free = f.free[:n-1]
	} else {
		slot = int32(len(f.keys))
		f.keys = append(f.keys, nil)
		f.vals = append(f.vals, 0)
	}
	f.keys[slot] = append([]byte(nil), key...)
	f.index[string(key)] = slot
	return slot
}

func (f *fakeOwner) remove(slot int32) {
	delete(f.index, string(f.keys[slot]))
	f.keys[slot] = nil
	f.free = append(f.free, slot)
}

func openStore(t *testing.T, dir string) *statestore.Store {
	t.Helper()
	st, err := statestore.Open(dir, statestore.Options{CacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// findOrLoad returns the slot of key: the in-memory one index has, or the
// one rec.Load gives it when it is stored.
func findOrLoad(t *testing.T, rec *Records, index map[string]int32, key []byte) (int32, bool) {
	t.Helper()
	if slot, ok := index[string(key)]; ok {
		return slot, true
	}
	slot, ok, err := rec.Load(key)
	if err != nil {
		t.Fatal(err)
	}
	return slot, ok
}

// TestRecordsWriteOrder checks that Snapshot writes the changed records in
// state-key order (key group, then key: the order Pebble sorts them in),
// each once, with the key group of the layer's hash, for integer keys
// (with NULL, INT and BIGINT, negatives), strings and a two-column key;
// integer keys go through AddedInt, the others through AddedKey.
func TestRecordsWriteOrder(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	cases := []struct {
		name string
		key  func(i int) []types.Value
	}{
		{"bigint", func(int) []types.Value { return []types.Value{types.BigIntValue(r.Int64N(1<<40) - 1<<39)} }},
		{"int, bigint and null", func(i int) []types.Value {
			switch i % 3 {
			case 0:
				if i%999 == 0 {
					return []types.Value{types.NullValue()}
				}
				return []types.Value{types.IntValue(r.Int64N(1<<31) - 1<<30)}
			}
			return []types.Value{types.BigIntValue(r.Int64() - 1<<62)}
		}},
		// Few records per key group: sorted by comparisons.
		{"few bigints", func(int) []types.Value { return []types.Value{types.BigIntValue(r.Int64N(8000))} }},
		{"timestamp", func(int) []types.Value { return []types.Value{types.TimestampValue(r.Int64N(1 << 45))} }},
		{"varchar", func(int) []types.Value {
			return []types.Value{types.StringValue(strings.Repeat("x", r.IntN(20)) + fmt.Sprint(r.Int64N(1<<30)))}
		}},
		{"varchar with long shared prefixes and short keys", func(int) []types.Value {
			// Many keys share their first 9 bytes (the radix sort's head),
			// some are shorter than that.
			return []types.Value{types.StringValue(strings.Repeat("channel-", r.IntN(3)) + fmt.Sprint(r.IntN(9)) + fmt.Sprintf("%06d", r.Int64N(1000000))[:1+r.IntN(6)] + strings.Repeat("-", r.IntN(2)))}
		}},
		{"two columns", func(int) []types.Value {
			return []types.Value{types.StringValue(fmt.Sprint(r.Int64N(100))), types.BigIntValue(r.Int64N(1000))}
		}},
		// Keys of one length under 9 bytes (fixed, without a high byte).
		{"short varchar", func(int) []types.Value {
			return []types.Value{types.StringValue(string([]byte{byte('a' + r.IntN(26)), byte('a' + r.IntN(26)), byte(1 + r.IntN(255))}))}
		}},
		// Keys of at most 9 bytes but of different lengths.
		{"varchar up to 9 bytes", func(int) []types.Value {
			return []types.Value{types.StringValue(strings.Repeat("y", r.IntN(3)) + fmt.Sprint(r.Int64N(10000)))}
		}},
		// Long keys whose first 8 bytes are the same.
		{"long common prefix", func(int) []types.Value {
			return []types.Value{types.StringValue("a-long-common-prefix-" + fmt.Sprint(r.Int64N(1<<20)))}
		}},
		// An integer (a tag and 8 bytes: the first 9 bytes) of a few
		// values, then a string: many keys of a key group share their
		// first 9 bytes (a DISTINCT entry's value, then its group).
		{"9-byte lead shared", func(int) []types.Value {
			return []types.Value{types.BigIntValue(r.Int64N(40) - 20), types.StringValue(strings.Repeat("c", r.IntN(12)) + fmt.Sprint(r.Int64N(1000)))}
		}},
		// A few integers (the first 9 bytes), then strings that share
		// long prefixes and differ in their last bytes, zero bytes among
		// them, and a second string: long runs of keys that share their
		// first 9 bytes and then 8, 16 or more (sortRun's levels), keys
		// equal but for trailing zeros (padding ties).
		{"9-byte lead shared, deep ties", func(int) []types.Value {
			tail := []string{"", "\x00", "\x00\x00", "a", "\x00a"}[r.IntN(5)]
			if r.IntN(2) == 0 {
				// Differences at any offset after a shared prefix.
				b := make([]byte, r.IntN(30))
				for i := range b {
					b[i] = "ab\x00"[r.IntN(3)]
				}
				// After the 9 bytes and the string's tag, 7 or 15 shared
				// bytes: sortRun's second or third level reads the first
				// byte that differs.
				p := []string{"prefix-", "prefix-prefix-p"}[r.IntN(2)]
				second := types.StringValue(p + string(b))
				switch r.IntN(8) {
				case 0: // another tag at the run's first byte of difference
					second = types.BigIntValue(r.Int64N(1000))
				case 1:
					second = types.NullValue()
				}
				return []types.Value{types.BigIntValue(r.Int64N(2)), second}
			}
			return []types.Value{
				types.BigIntValue(r.Int64N(3)),
				types.StringValue(strings.Repeat("channel-", r.IntN(4)) + strings.Repeat("x", r.IntN(9)) + fmt.Sprint(r.Int64N(300)) + tail),
				types.StringValue(strings.Repeat("\x00", r.IntN(3)) + fmt.Sprint(r.IntN(3))),
			}
		}},
		// Strings of 0 to 12 bytes over three letters: keys shorter and
		// longer than 9 bytes, many prefixes of others.
		{"mixed lengths around 9", func(int) []types.Value {
			b := make([]byte, r.IntN(13))
			for i := range b {
				b[i] = "abc"[r.IntN(3)]
			}
			return []types.Value{types.StringValue(string(b))}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t, filepath.Join(t.TempDir(), "work"))
			own := newFakeOwner()
			rec, err := NewRecords(RecordOptions{Name: "groups", OperatorID: "op", Budget: 64 << 20, RecordBytes: 64, Exclusive: true}, own)
			if err != nil {
				t.Fatal(err)
			}
			if err := rec.Attach(st, false); err != nil {
				t.Fatal(err)
			}
			rec.chunk = 5000 // many chunks, key groups of more than radixMin records
			for i := range 60000 {
				vals := tc.key(i)
				key := AppendValue(nil, vals[0])
				for _, v := range vals[1:] {
					key = AppendValue(key, v)
				}
				if _, ok := own.index[string(key)]; ok {
					continue
				}
				slot := own.add(key)
				own.vals[slot] = int64(i)
				if k := vals[0].Kind(); len(vals) == 1 && k != types.KindNull && k != types.KindVarchar {
					rec.AddedInt(slot, k, vals[0].Int())
				} else {
					rec.AddedKey(slot, key)
				}
				if i%5 != 0 {
					rec.Changed(slot)
				}
			}
			want := rec.changedCount()
			if want < 4000 {
				t.Fatalf("only %d changed records", want)
			}
			// The reference: every changed record's (key group, key),
			// sorted by sort.Slice.
			var ref [][]byte
			for slot, key := range own.keys {
				if key != nil && rec.changed[slot>>6]&(1<<(slot&63)) != 0 {
					ref = append(ref, append(binary.BigEndian.AppendUint16(nil, uint16(KeyGroup(key, 128))), key...))
				}
			}
			sort.Slice(ref, func(i, j int) bool { return bytes.Compare(ref[i], ref[j]) < 0 })
			n := 0
			err = rec.chunks(rec.changed, false, func(slots []int32, first, end int) error {
				for i, slot := range slots {
					if kg := int(rec.kgs[slot]); kg < first || kg >= end || (i > 0 && slots[i-1] >= slot) {
						return fmt.Errorf("chunk [%d, %d): slot %d of key group %d at %d, after slot %d", first, end, slot, kg, i, slots[max(i-1, 0)])
					}
				}
				ents, fixed, err := rec.sortedChunk(slots, first, end)
				if err != nil {
					return err
				}
				for i, e := range ents {
					pkey, val := rec.entry(ents, i, fixed)
					if !bytes.HasPrefix(pkey, rec.prefix) {
						return fmt.Errorf("key %x without the prefix %x", pkey, rec.prefix)
					}
					key := pkey[len(rec.prefix):]
					if kg := KeyGroup(key, 128); int(e.kg) != kg {
						return fmt.Errorf("key %x in key group %d, want %d", key, e.kg, kg)
					}
					full := append(binary.BigEndian.AppendUint16(nil, e.kg), key...)
					if n >= len(ref) || !bytes.Equal(full, ref[n]) {
						return fmt.Errorf("record %d of %d is %x, want the reference's %x", n, want, full, ref[min(n, len(ref)-1)])
					}
					if v, _ := binary.Varint(val); v != own.vals[own.index[string(key)]] {
						return fmt.Errorf("key %x: record %d, want %d", key, v, own.vals[own.index[string(key)]])
					}
					n++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Fatalf("%d records written, want %d", n, want)
			}
		})
	}
}

// TestRecordsModel drives Records over a store with a model (a map): random
// upserts and deletions of keys, snapshots, spills past a small budget; then
// the last snapshot is restored at parallelism 1 and 3 (rescale by key
// group) with a budget that holds everything and one that does not, and
// every subtask must find exactly the model's records of its key groups,
// in memory or by Load, and read them through a ValueState too.
func TestRecordsModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "work"))
	own := newFakeOwner()
	opts := RecordOptions{Name: "recs", OperatorID: "op", Budget: 1, RecordBytes: 100, Exclusive: true}
	rec, err := NewRecords(opts, own)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Attach(st, false); err != nil {
		t.Fatal(err)
	}
	rec.chunk = 300 // snapshots in many chunks
	model := map[string]int64{}
	keyOf := func(k int64) []byte {
		if k%7 == 0 {
			return AppendString(nil, fmt.Sprint("s", k))
		}
		return AppendInt64(nil, k)
	}
	// find returns the slot of key, loading it when backed.
	find := func(key []byte) (int32, bool) { return findOrLoad(t, rec, own.index, key) }
	snaps, spills := 0, 0
	var snapDir string
	for step := range 30000 {
		k := r.Int64N(3000)
		key := keyOf(k)
		if r.IntN(4) == 0 {
			if slot, ok := find(key); ok {
				if err := rec.Removed(slot); err != nil {
					t.Fatal(err)
				}
				own.remove(slot)
			}
			delete(model, string(key))
		} else {
			slot, ok := find(key)
			if !ok {
				slot = own.add(key)
				if k%7 == 0 {
					rec.AddedKey(slot, key)
				} else {
					rec.AddedInt(slot, types.KindBigInt, k)
				}
			}
			v := r.Int64N(1000)
			own.vals[slot] = v
			rec.Changed(slot)
			model[string(key)] = v
		}
		if rec.OverBudget() {
			if err := rec.Spill(); err != nil {
				t.Fatal(err)
			}
			spills++
		}
		if step%5000 == 4999 {
			if err := rec.Snapshot(); err != nil {
				t.Fatal(err)
			}
			snapDir = filepath.Join(dir, fmt.Sprint("snap", step))
			if _, err := st.Snapshot(snapDir); err != nil {
				t.Fatal(err)
			}
			snaps++
		}
	}
	if spills == 0 || !rec.Backed() {
		t.Fatalf("%d spills, backed %v: the test needs state over the budget", spills, rec.Backed())
	}
	for _, par := range []int{1, 3} {
		for _, budget := range []int64{1, 64 << 20} {
			found := 0
			for sub := range par {
				first, last := KeyGroupRange(sub, par, 128)
				work := filepath.Join(dir, fmt.Sprintf("r-%d-%d-%d", par, budget, sub))
				rst, err := statestore.RestoreKeyGroups([]string{snapDir}, work, first, last, statestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				o := opts
				o.Budget, o.Subtask, o.Parallelism = budget, sub, par
				own2 := newFakeOwner()
				rec2, err := NewRecords(o, own2)
				if err != nil {
					t.Fatal(err)
				}
				if err := rec2.Attach(rst, true); err != nil {
					t.Fatal(err)
				}
				inRange := 0
				for ks := range model {
					if kg := KeyGroup([]byte(ks), 128); kg >= first && kg <= last {
						inRange++
					}
				}
				if rec2.Backed() != (budget == 1 && inRange > MinRecords) {
					t.Fatalf("parallelism %d, budget %d: backed %v with %d records in memory", par, budget, rec2.Backed(), rec2.Len())
				}
				kd, err := Open(rst, Options{OperatorID: "op", Subtask: sub, Parallelism: par})
				if err != nil {
					t.Fatal(err)
				}
				vs, err := NewValueState(kd, "recs", Bytes{})
				if err != nil {
					t.Fatal(err)
				}
				for ks, v := range model {
					key := []byte(ks)
					if kg := KeyGroup(key, 128); kg < first || kg > last {
						continue
					}
					found++
					slot, ok := own2.index[ks]
					if !ok {
						if slot, ok, err = rec2.Load(key); err != nil || !ok {
							t.Fatalf("parallelism %d subtask %d: key %x missing (%v)", par, sub, key, err)
						}
					}
					if own2.vals[slot] != v {
						t.Fatalf("key %x: %d, want %d", key, own2.vals[slot], v)
					}
					if err := kd.SetCurrentKey(key); err != nil {
						t.Fatal(err)
					}
					b, ok, err := vs.Value()
					if err != nil || !ok || !bytes.Equal(b, binary.AppendVarint(nil, v)) {
						t.Fatalf("key %x through a ValueState: %x %v %v", key, b, ok, err)
					}
				}
				if n := len(own2.index); n > len(model) {
					t.Fatalf("%d records loaded, the model has %d", n, len(model))
				}
				for ks := range own2.index {
					if _, ok := model[ks]; !ok {
						t.Fatalf("deleted key %x came back", ks)
					}
				}
				if err := rst.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if found != len(model) {
				t.Fatalf("parallelism %d: %d keys found, model has %d", par, found, len(model))
			}
		}
	}
	t.Logf("%d snapshots, %d spills, %d keys", snaps, spills, len(model))
}

// TestRecordsForget checks that a record forgotten before any snapshot
// wrote it is gone from the records (not counted, not written by the next
// snapshot) without a deletion in the store, while a record Removed after
// a snapshot is deleted from the store.
func TestRecordsForget(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "work"))
	own := newFakeOwner()
	rec, err := NewRecords(RecordOptions{Name: "rows", OperatorID: "op", Budget: 64 << 20, RecordBytes: 64, Exclusive: true}, own)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Attach(st, false); err != nil {
		t.Fatal(err)
	}
	add := func(k int64) int32 {
		key := AppendValue(nil, types.BigIntValue(k))
		slot := own.add(key)
		own.vals[slot] = k
		rec.AddedKey(slot, key)
		rec.Changed(slot)
		return slot
	}
	kept := add(1)
	if err := rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	gone := add(2)
	rec.Forget(gone)
	own.remove(gone)
	if rec.Len() != 1 || rec.changedCount() != 0 {
		t.Fatalf("after Forget: %d records, %d changed; want 1 and 0", rec.Len(), rec.changedCount())
	}
	if err := rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	sp, err := st.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		n := 0
		for kg := range 128 {
			if err := sp.Scan(kg, nil, nil, false, func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("%d stored records, want 1 (the forgotten one never written)", n)
	}
	if err := rec.Removed(kept); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d stored records after Removed, want 0", n)
	}
}
