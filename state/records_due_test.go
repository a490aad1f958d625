package state

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/statestore"
)

// dueOwner is fakeOwner with two due times a record: its value (tag 0),
// and its value + 1000 when the value is even (tag 1).
type dueOwner struct{ *fakeOwner }

func recDues(v int64, dues []int64) {
	dues[0], dues[1] = v, math.MaxInt64
	if v%2 == 0 {
		dues[1] = v + 1000
	}
}

func (d dueOwner) RecordDues(slot int32, dues []int64) { recDues(d.vals[slot], dues) }

func (d dueOwner) StoredDues(_, rec []byte, dues []int64) error {
	v, n := binary.Varint(rec)
	if n != len(rec) {
		return fmt.Errorf("bad record %x", rec)
	}
	recDues(v, dues)
	return nil
}

func (d dueOwner) FindRecord(key []byte) (int32, bool) {
	s, ok := d.index[string(key)]
	return s, ok
}

// dueKey is a due time of a key: key and tag.
type dueKey struct {
	key string
	tag int
}

// expectDues returns the due times at or before wm of the model's keys
// that are not in owner's memory.
func expectDues(model map[string]int64, own *fakeOwner, wm int64) map[dueKey]bool {
	want := map[dueKey]bool{}
	dues := make([]int64, 2)
	for k, v := range model {
		if _, in := own.index[k]; in {
			continue
		}
		recDues(v, dues)
		for tag, at := range dues {
			if at != math.MaxInt64 && at <= wm {
				want[dueKey{k, tag}] = true
			}
		}
	}
	return want
}

// takeDues runs Due up to wm and checks that it hands out, in due order,
// exactly the due times in want, each record loaded into memory.
func takeDues(t *testing.T, d *RecordDues, own *fakeOwner, wm int64, want map[dueKey]bool) {
	t.Helper()
	got := map[dueKey]bool{}
	last := int64(math.MinInt64)
	dues := make([]int64, 2)
	err := d.Due(wm, func(slot int32, tag int) error {
		key := string(own.keys[slot])
		if own.index[key] != slot {
			return fmt.Errorf("slot %d is not key %x's", slot, key)
		}
		recDues(own.vals[slot], dues)
		at := dues[tag]
		if at > wm || at < last {
			return fmt.Errorf("due %d of key %x out of order (last %d, watermark %d)", at, key, last, wm)
		}
		last = at
		got[dueKey{key, tag}] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Due(%d) handed out %d due times, want %d", wm, len(got), len(want))
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("Due(%d) missed key %x tag %d", wm, k.key, k.tag)
		}
	}
}

// TestRecordDues keeps due times of records over spills (taken from the
// owner's records as they leave memory) and over a restore whose records
// do not all fit in the budget (read from the stored records), at
// parallelism 1 and 3: Due hands out exactly the due times of the records
// out of memory up to the watermark, in order, each record loaded; the
// model is computed here.
func TestRecordDues(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "work"))
	own := newFakeOwner()
	opts := RecordOptions{Name: "dues", OperatorID: "op", MaxParallelism: 128, Budget: 1, RecordBytes: 64, Exclusive: true}
	rec, err := NewRecords(opts, dueOwner{own})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewRecordDues(rec, dueOwner{own}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Attach(st, false); err != nil {
		t.Fatal(err)
	}
	model := map[string]int64{}
	spills := 0
	for i := range 5000 {
		key := binary.AppendVarint(nil, int64(i))
		slot := own.add(key)
		rec.AddedKey(slot, key)
		v := r.Int64N(10_000)
		own.vals[slot] = v
		rec.Changed(slot)
		model[string(key)] = v
		if rec.OverBudget() {
			if err := d.Spill(); err != nil {
				t.Fatal(err)
			}
			spills++
		}
	}
	if spills == 0 {
		t.Fatal("no spill")
	}
	takeDues(t, d, own, 3000, expectDues(model, own, 3000))
	takeDues(t, d, own, 3000, nil) // nothing twice
	if err := rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snapDir := filepath.Join(dir, "snap")
	if _, err := st.Snapshot(snapDir); err != nil {
		t.Fatal(err)
	}
	for _, par := range []int{1, 3} {
		for sub := range par {
			first, last := KeyGroupRange(sub, par, 128)
			rst, err := statestore.RestoreKeyGroups([]string{snapDir}, filepath.Join(dir, fmt.Sprintf("r%d-%d", par, sub)), first, last, statestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			o := opts
			o.Subtask, o.Parallelism = sub, par
			own2 := newFakeOwner()
			rec2, err := NewRecords(o, dueOwner{own2})
			if err != nil {
				t.Fatal(err)
			}
			d2, err := NewRecordDues(rec2, dueOwner{own2}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := d2.Attach(rst, true); err != nil {
				t.Fatal(err)
			}
			if !rec2.Backed() {
				t.Fatalf("parallelism %d: restore fit in memory; the test needs it not to", par)
			}
			sub := map[string]int64{}
			for k, v := range model {
				if kg := KeyGroup([]byte(k), 128); kg >= first && kg <= last {
					sub[k] = v
				}
			}
			// The due times out of memory after the restore: those up to
			// 5000 first, then the rest (of records loaded since too).
			early, late := expectDues(sub, own2, 5000), expectDues(sub, own2, math.MaxInt64)
			for k := range early {
				delete(late, k)
			}
			takeDues(t, d2, own2, 5000, early)
			takeDues(t, d2, own2, math.MaxInt64, late)
			if d2.Len() != 0 {
				t.Fatalf("%d due times left", d2.Len())
			}
			_ = rst.Close()
		}
	}
}
