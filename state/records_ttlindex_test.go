package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// storeCensus is what a store holds of Records "recs" of operator "op" in
// key groups [first, last]: the record keys, the number of parts >= 1,
// and the index entries' write times.
type storeCensus struct {
	records map[string]bool
	parts   int
	idx     []int64
}

func censusOf(t *testing.T, st *statestore.Store, first, last int) storeCensus {
	t.Helper()
	sp, err := st.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	rp, pp, tp := namePrefix("recs"), namePrefix("recs"+PartSuffix), namePrefix("recs"+ttlIndexSuffix)
	c := storeCensus{records: map[string]bool{}}
	for kg := first; kg <= last; kg++ {
		err := sp.Scan(kg, nil, nil, false, func(k, _ []byte) (bool, error) {
			switch {
			case bytes.HasPrefix(k, rp):
				c.records[string(k[len(rp):])] = true
			case bytes.HasPrefix(k, pp):
				c.parts++
			case bytes.HasPrefix(k, tp):
				c.idx = append(c.idx, int64(binary.BigEndian.Uint64(k[len(tp):])^(1<<63)))
			default:
				return false, fmt.Errorf("unexpected key %x", k)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// ttlListModel is the Go answer for TestRecordsTTLSweepsStore: per key its
// list of values and last write time.
type ttlListModel struct {
	vals map[string][]int64
	last map[string]int64
}

func (m *ttlListModel) clone() *ttlListModel {
	c := &ttlListModel{vals: map[string][]int64{}, last: maps.Clone(m.last)}
	for k, v := range m.vals {
		c.vals[k] = slices.Clone(v)
	}
	return c
}

// TestRecordsTTLSweepsStore checks that records with a TTL that a spill
// left in the store, and whose keys are never touched again, leave the
// store once expired (at the next snapshot), with their parts and index
// entries, while the live records keep every part: among them records
// loaded back and changed in one part only (their unchanged parts stay
// in the store only), and records loaded and only read (they expire in
// memory). Then past every TTL the store holds nothing. The same after a
// restore of a checkpoint at parallelism 1 (all loaded) and 2 and 3 with a
// small budget (partly loaded: the rest is indexed by the restore scan).
// Checked against a Go model of the keys' lists and write times, and by
// counting the store's keys.
func TestRecordsTTLSweepsStore(t *testing.T) {
	const ttl = 1000
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "work"))
	opts := RecordOptions{Name: "recs", OperatorID: "op", Budget: 1, RecordBytes: 100, Exclusive: true, TTL: ttl * time.Millisecond}
	keyOf := func(k int) []byte { return AppendValue(nil, types.BigIntValue(int64(k))) }
	m := &ttlListModel{vals: map[string][]int64{}, last: map[string]int64{}}

	type run struct {
		own *partOwner
		rec *Records
	}
	drop := func(r run) func(int32) error {
		return func(slot int32) error {
			if err := r.rec.Removed(slot); err != nil {
				return err
			}
			r.own.remove(slot)
			return nil
		}
	}
	advance := func(r run, now int64) {
		t.Helper()
		r.rec.SetTime(now)
		must(t, r.rec.Expire(drop(r)))
		must(t, r.rec.Snapshot())
	}
	// write appends v to key's list (loading or adding the record).
	write := func(r run, now int64, k int, v int64) {
		t.Helper()
		key := keyOf(k)
		slot, ok := findOrLoad(t, r.rec, r.own.index, key)
		if !ok {
			slot = r.own.add(key)
			r.rec.AddedKey(slot, key)
		}
		n := len(r.own.vals[slot])
		r.own.vals[slot] = append(r.own.vals[slot], v)
		r.own.dirty[slot][int32(n/partVals)] = true
		r.rec.Changed(slot)
		m.vals[string(key)] = append(m.vals[string(key)], v)
		m.last[string(key)] = now
		if r.rec.OverBudget() {
			must(t, r.rec.Spill())
		}
	}
	// check compares the store and the records with model at now (after
	// advance): the store holds exactly the live keys' records and parts,
	// no due index entry, and each live key reads its list.
	check := func(r run, st *statestore.Store, model *ttlListModel, now int64, first, last int) {
		t.Helper()
		c := censusOf(t, st, first, last)
		want, parts := map[string]bool{}, 0
		for ks, l := range model.last {
			if kg := KeyGroup([]byte(ks), 128); kg < first || kg > last || l+ttl <= now {
				continue
			}
			want[ks] = true
			parts += max(1, (len(model.vals[ks])+partVals-1)/partVals) - 1
		}
		if !maps.Equal(c.records, want) || c.parts != parts {
			t.Fatalf("at %d the store holds %d records and %d parts; want %d and %d", now, len(c.records), c.parts, len(want), parts)
		}
		for _, at := range c.idx {
			if at+ttl <= now {
				t.Fatalf("at %d the store holds an index entry of %d (%d entries)", now, at, len(c.idx))
			}
		}
		for i, lo := range r.rec.tmin {
			if lo <= now-ttl {
				t.Fatalf("key group %d still due at %d", r.rec.first+i, lo)
			}
		}
		for ks := range model.last {
			key := []byte(ks)
			if kg := KeyGroup(key, 128); kg < first || kg > last {
				continue
			}
			slot, ok := findOrLoad(t, r.rec, r.own.index, key)
			if ok != want[ks] || (ok && !slices.Equal(r.own.vals[slot], model.vals[ks])) {
				t.Fatalf("at %d key %x: found %v, want %v", now, key, ok, want[ks])
			}
			if r.rec.OverBudget() {
				must(t, r.rec.Spill()) // indexed again, at their stored times
			}
		}
	}

	own := newPartOwner()
	rec, err := NewRecords(opts, own)
	must(t, err)
	must(t, rec.Attach(st, false))
	w := run{own, rec}
	rec.SetTime(1000)
	for k := range 4000 {
		for v := range 7 { // 3 parts
			write(w, 1000, k, int64(k*10+v))
		}
	}
	rec.SetTime(1500)
	for k := 4000; k < 6000; k++ {
		for v := range 7 {
			write(w, 1500, k, int64(k*10+v))
		}
	}
	must(t, rec.Spill())
	rec.SetTime(1600)
	for k := range 200 {
		write(w, 1600, k, -1) // changes part 2 only
	}
	rec.SetTime(1650)
	for k := 200; k < 300; k++ {
		if _, ok := findOrLoad(t, rec, own.index, keyOf(k)); !ok {
			t.Fatalf("key %d not found", k)
		}
	}
	if rec.Len() != 300 || len(rec.tmin) == 0 {
		t.Fatalf("%d records in memory, index of %d key groups", rec.Len(), len(rec.tmin))
	}
	// A checkpoint, with most records in the store only.
	rec.SetTime(1700)
	must(t, rec.Snapshot())
	snap := filepath.Join(dir, "snap")
	if _, err := st.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	atSnap := m.clone()
	if c := censusOf(t, st, 0, 127); len(c.records) != 6000 || len(c.idx) < 5000 {
		t.Fatalf("before expiry the store holds %d records, %d index entries", len(c.records), len(c.idx))
	}

	// Keys 300..399, loaded and changed in part 2 after the checkpoint:
	// their stored copies (part 1 among them) are due by their index
	// entries at the next snapshot.
	rec.SetTime(1800)
	for k := 300; k < 400; k++ {
		write(w, 1800, k, -2)
	}
	advance(w, 2100) // keys 200..299 and 400..3999 expire: 400.. only stored, 200..299 in memory
	check(w, st, m, 2100, 0, 127)
	advance(w, 2900) // all expire
	if c := censusOf(t, st, 0, 127); len(c.records)+c.parts+len(c.idx) != 0 {
		t.Fatalf("past every TTL the store holds %d records, %d parts, %d index entries", len(c.records), c.parts, len(c.idx))
	}

	for _, par := range []int{1, 2, 3} {
		for sub := range par {
			first, last := KeyGroupRange(sub, par, 128)
			rst, err := statestore.RestoreKeyGroups([]string{snap}, filepath.Join(dir, fmt.Sprintf("r%d-%d", par, sub)), first, last, statestore.Options{CacheBytes: 64 << 10})
			must(t, err)
			o := opts
			o.Subtask, o.Parallelism = sub, par
			if par == 1 {
				o.Budget = 64 << 20
			}
			own2 := newPartOwner()
			rec2, err := NewRecords(o, own2)
			must(t, err)
			must(t, rec2.Attach(rst, true))
			if par > 1 && !rec2.Backed() {
				t.Fatalf("parallelism %d: every record loaded", par)
			}
			if c := censusOf(t, rst, first, last); par == 1 && (rec2.Backed() || len(c.idx) != 0) {
				t.Fatalf("all loaded (backed %v): %d index entries left", rec2.Backed(), len(c.idx))
			}
			r2 := run{own2, rec2}
			advance(r2, 2100)
			check(r2, rst, atSnap, 2100, first, last)
			advance(r2, 2700)
			if c := censusOf(t, rst, first, last); len(c.records)+c.parts+len(c.idx) != 0 {
				t.Fatalf("parallelism %d subtask %d: past every TTL the store holds %d records, %d parts, %d index entries", par, sub, len(c.records), c.parts, len(c.idx))
			}
			must(t, rst.Close())
		}
	}
}
