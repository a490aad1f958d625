package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// partOwner is a PartedSource: each record is a list of int64 values,
// stored partVals values a part; part 0 leads with the list's length. It
// counts the parts it encodes and decodes.
type partOwner struct {
	keys    [][]byte
	vals    [][]int64
	dirty   []map[int32]bool
	want    []int // per slot: values still to load
	free    []int32
	index   map[string]int32
	encoded int // parts encoded (AppendRecord and AppendRecordPart)
	decoded int // parts decoded
}

const partVals = 3

func newPartOwner() *partOwner { return &partOwner{index: map[string]int32{}} }

func (f *partOwner) nParts(slot int32) int32 {
	return int32(max(1, (len(f.vals[slot])+partVals-1)/partVals))
}

func (f *partOwner) appendVals(dst []byte, slot int32, p int32) []byte {
	v := f.vals[slot]
	for _, x := range v[min(len(v), int(p)*partVals):min(len(v), int(p+1)*partVals)] {
		dst = binary.AppendVarint(dst, x)
	}
	return dst
}

func (f *partOwner) AppendRecordKey(dst []byte, slot int32) []byte {
	return append(dst, f.keys[slot]...)
}

func (f *partOwner) AppendRecord(dst []byte, slot int32) []byte {
	f.encoded++
	return f.appendVals(binary.AppendUvarint(dst, uint64(len(f.vals[slot]))), slot, 0)
}

func (f *partOwner) AppendRecordPart(dst []byte, slot int32, p int32) []byte {
	f.encoded++
	return f.appendVals(dst, slot, p)
}

func (f *partOwner) ChangedParts(dst []int32, slot int32, all bool) (int32, []int32) {
	n := f.nParts(slot)
	for p := int32(1); p < n; p++ {
		if all || f.dirty[slot][p] {
			dst = append(dst, p)
		}
	}
	clear(f.dirty[slot])
	return n, dst
}

func (f *partOwner) decodeVals(slot int32, rec []byte, n int) error {
	for range n {
		x, k := binary.Varint(rec)
		if k <= 0 {
			return fmt.Errorf("bad value in %x", rec)
		}
		f.vals[slot] = append(f.vals[slot], x)
		rec = rec[k:]
	}
	if len(rec) != 0 {
		return fmt.Errorf("%d bytes left", len(rec))
	}
	f.want[slot] -= n
	return nil
}

func (f *partOwner) LoadRecord(key, rec []byte) (int32, error) {
	n, k := binary.Uvarint(rec)
	if k <= 0 {
		return 0, fmt.Errorf("bad record %x", rec)
	}
	f.decoded++
	slot := f.add(key)
	f.want[slot] = int(n)
	return slot, f.decodeVals(slot, rec[k:], min(int(n), partVals))
}

func (f *partOwner) PendingParts(slot int32) int32 {
	return int32((f.want[slot] + partVals - 1) / partVals)
}

func (f *partOwner) LoadRecordPart(slot int32, p int32, rec []byte) error {
	f.decoded++
	if len(f.vals[slot]) != int(p)*partVals {
		return fmt.Errorf("part %d after %d values", p, len(f.vals[slot]))
	}
	return f.decodeVals(slot, rec, min(f.want[slot], partVals))
}

func (f *partOwner) DropRecords() {
	enc, dec := f.encoded, f.decoded
	*f = *newPartOwner()
	f.encoded, f.decoded = enc, dec
}

func (f *partOwner) add(key []byte) int32 {
	var slot int32
	if n := len(f.free); n > 0 {
		slot = f.free[n-1]
		f.free = f.free[:n-1]
	} else {
		slot = int32(len(f.keys))
		f.keys = append(f.keys, nil)
		f.vals = append(f.vals, nil)
		f.dirty = append(f.dirty, nil)
		f.want = append(f.want, 0)
	}
	f.keys[slot] = append([]byte(nil), key...)
	f.vals[slot] = f.vals[slot][:0]
	f.dirty[slot] = map[int32]bool{}
	f.index[string(key)] = slot
	return slot
}

func (f *partOwner) remove(slot int32) {
	delete(f.index, string(f.keys[slot]))
	f.keys[slot] = nil
	f.free = append(f.free, slot)
}

// countParts returns the entries of the parts name (parts >= 1) in st.
func countParts(t *testing.T, st *statestore.Store, name string) int {
	t.Helper()
	sp, err := st.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	pre := namePrefix(name + PartSuffix)
	n := 0
	for kg := range types.DefaultMaxParallelism {
		err := sp.Scan(kg, pre, prefixEnd(nil, pre), false, func(_, _ []byte) (bool, error) {
			n++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestRecordsPartsModel drives Records over a PartedSource with a model:
// random appends, changes and truncations of long records, removals,
// snapshots and spills; each snapshot must encode part 0 and the changed
// parts of the changed records only, the store must hold no part a record
// no longer has, and a restore (one scan) and Loads after a spill must
// give back every record whole, each part decoded once.
func TestRecordsPartsModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "work"))
	own := newPartOwner()
	opts := RecordOptions{Name: "lists", OperatorID: "op", Budget: 64 << 20, RecordBytes: 100, Exclusive: true, TTL: time.Hour}
	rec, err := NewRecords(opts, own)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Attach(st, false); err != nil {
		t.Fatal(err)
	}
	rec.SetTime(1000)
	model := map[string][]int64{}
	keyOf := func(i int) []byte { return AppendValue(nil, types.BigIntValue(int64(i))) }
	slotOf := func(key []byte) (int32, bool) { return findOrLoad(t, rec, own.index, key) }
	const keys = 40
	for round := range 30 {
		wantEnc := 0
		changedParts := map[int32]map[int32]bool{}
		for range 60 {
			k := r.IntN(keys)
			key := keyOf(k)
			slot, ok := slotOf(key)
			if !ok {
				slot = own.add(key)
				rec.AddedKey(slot, key)
			}
			if changedParts[slot] == nil {
				changedParts[slot] = map[int32]bool{}
			}
			v := own.vals[slot]
			switch op := r.IntN(10); {
			case op < 5 || len(v) == 0: // append a few
				for range 1 + r.IntN(5) {
					changedParts[slot][int32(len(own.vals[slot])/partVals)] = true
					own.vals[slot] = append(own.vals[slot], r.Int64N(1000))
				}
			case op < 8: // change one
				j := r.IntN(len(v))
				v[j] = r.Int64N(1000)
				changedParts[slot][int32(j/partVals)] = true
			case op < 9: // truncate
				own.vals[slot] = v[:r.IntN(len(v))]
				changedParts[slot][int32(len(own.vals[slot])/partVals)] = true // cut short
			default: // remove
				if err := rec.Removed(slot); err != nil {
					t.Fatal(err)
				}
				own.remove(slot)
				delete(model, string(key))
				delete(changedParts, slot)
				continue
			}
			for p := range changedParts[slot] {
				own.dirty[slot][p] = true
			}
			if len(own.vals[slot]) == 0 {
				if err := rec.Removed(slot); err != nil {
					t.Fatal(err)
				}
				own.remove(slot)
				delete(model, string(key))
				delete(changedParts, slot)
				continue
			}
			rec.Changed(slot)
			model[string(key)] = slices.Clone(own.vals[slot])
		}
		all := rec.opts.Exclusive && !rec.backed && 2*rec.changedCount() >= rec.nLive
		for slot, ps := range changedParts {
			wantEnc++ // part 0
			for p := range ps {
				if p >= 1 && p < own.nParts(slot) {
					wantEnc++
				}
			}
		}
		enc0 := own.encoded
		if err := rec.Snapshot(); err != nil {
			t.Fatal(err)
		}
		if got := own.encoded - enc0; !all && got != wantEnc {
			t.Fatalf("round %d: snapshot encoded %d parts, want %d (part 0 and the changed parts)", round, got, wantEnc)
		}
		storedParts := 0
		for _, v := range model {
			storedParts += max(1, (len(v)+partVals-1)/partVals) - 1
		}
		if n := countParts(t, st, opts.Name); n != storedParts {
			t.Fatalf("round %d: the store holds %d parts >= 1, want %d", round, n, storedParts)
		}
		if round%7 == 6 {
			if err := rec.Spill(); err != nil {
				t.Fatal(err)
			}
			dec0 := own.decoded
			for k := range keys {
				key := keyOf(k)
				slot, ok := slotOf(key)
				want, wok := model[string(key)]
				if ok != wok || (ok && !slices.Equal(own.vals[slot], want)) {
					t.Fatalf("round %d: key %d loaded %v %v, want %v %v", round, k, ok, own.vals[slot], wok, want)
				}
			}
			if got, want := own.decoded-dec0, storedParts+len(model); got != want {
				t.Fatalf("round %d: the loads decoded %d parts, want %d (each once)", round, got, want)
			}
		}
	}
	snapDir := filepath.Join(dir, "snap")
	if err := rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Snapshot(snapDir); err != nil {
		t.Fatal(err)
	}
	for _, par := range []int{1, 3} {
		got := map[string][]int64{}
		for sub := range par {
			first, last := KeyGroupRange(sub, par, types.DefaultMaxParallelism)
			rst, err := statestore.RestoreKeyGroups([]string{snapDir}, filepath.Join(dir, fmt.Sprint("r", par, sub)), first, last, statestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			o2 := newPartOwner()
			o := opts
			o.Subtask, o.Parallelism = sub, par
			r2, err := NewRecords(o, o2)
			if err != nil {
				t.Fatal(err)
			}
			if err := r2.Attach(rst, true); err != nil {
				t.Fatal(err)
			}
			for key, slot := range o2.index {
				got[key] = o2.vals[slot]
			}
			_ = rst.Close()
		}
		if len(got) != len(model) {
			t.Fatalf("restored at parallelism %d: %d records, want %d", par, len(got), len(model))
		}
		for k, v := range model {
			if !slices.Equal(got[k], v) {
				t.Fatalf("restored at parallelism %d: key %x: %v, want %v", par, k, got[k], v)
			}
		}
	}
}

// TestRecordsPartsMissing checks that a record whose stored parts are not
// all there is a clear error, not a short record.
func TestRecordsPartsMissing(t *testing.T) {
	// 7 values: parts 1 and 2 read by key; 16: parts 1 to 5 by a scan.
	for _, n := range []int{7, 16} {
		st := openStore(t, t.TempDir())
		own := newPartOwner()
		rec, err := NewRecords(RecordOptions{Name: "lists", OperatorID: "op", Budget: 1, RecordBytes: 100}, own)
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Attach(st, false); err != nil {
			t.Fatal(err)
		}
		key := AppendValue(nil, types.BigIntValue(7))
		slot := own.add(key)
		rec.AddedKey(slot, key)
		for i := range n {
			own.vals[slot] = append(own.vals[slot], int64(i))
			own.dirty[slot][int32(i/partVals)] = true
		}
		rec.Changed(slot)
		if err := rec.Spill(); err != nil {
			t.Fatal(err)
		}
		sp, err := st.Space("op")
		if err != nil {
			t.Fatal(err)
		}
		kg := KeyGroup(key, types.DefaultMaxParallelism)
		if err := sp.Delete(kg, rec.partKey(nil, key, 2)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := rec.Load(key); err == nil {
			t.Fatalf("a record of %d values missing its part 2 loaded", n)
		} else {
			t.Log(err)
		}
	}
}

// TestRecordsPartsWriteOrder checks the order of a PartedSource's snapshot
// entries against sort.Slice of their state keys (key group, then the
// prefixed key): records of 9-byte keys of two tags (BIGINT and TIMESTAMP,
// which differ in the first byte), some with parts under the second name,
// in small chunks.
func TestRecordsPartsWriteOrder(t *testing.T) {
	for _, withParts := range []bool{false, true} {
		own := newPartOwner()
		rec, err := NewRecords(RecordOptions{Name: "lists", OperatorID: "op", Budget: 64 << 20, RecordBytes: 100, Exclusive: true}, own)
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Attach(openStore(t, filepath.Join(t.TempDir(), "work")), false); err != nil {
			t.Fatal(err)
		}
		rec.chunk = 500
		var want [][]byte
		for i := range 3000 {
			v := types.BigIntValue(int64(i * 7919 % 3001))
			if i%2 == 1 {
				v = types.TimestampValue(int64(i))
			}
			key := AppendValue(nil, v)
			slot := own.add(key)
			rec.AddedKey(slot, key)
			n := 1
			if withParts && i%5 == 0 {
				n = 2*partVals + 1 // parts 0, 1 and 2
			}
			for j := range n {
				own.vals[slot] = append(own.vals[slot], int64(j))
			}
			kg := binary.BigEndian.AppendUint16(nil, uint16(KeyGroup(key, 128)))
			want = append(want, append(append(kg, rec.prefix...), key...))
			for p := 1; p < int(own.nParts(slot)); p++ {
				want = append(want, binary.BigEndian.AppendUint32(append(append(kg, rec.pprefix...), key...), uint32(p)))
			}
		}
		sort.Slice(want, func(i, j int) bool { return bytes.Compare(want[i], want[j]) < 0 })
		rec.all = true // every part of every record
		var got [][]byte
		err = rec.chunks(rec.live, false, func(slots []int32, first, end int) error {
			ents, fixed, err := rec.sortedChunk(slots, first, end)
			for i, e := range ents {
				key, _ := rec.entry(ents, i, fixed)
				got = append(got, append(binary.BigEndian.AppendUint16(nil, e.kg), key...))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("parts %v: %d entries, want %d", withParts, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("parts %v: entry %d is %x, want %x", withParts, i, got[i], want[i])
			}
		}
	}
}
