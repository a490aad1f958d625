package state

import (
	"encoding/binary"
	"path/filepath"
	"testing"
)

// TestRecordsBudgetCountsSnapshotBuffers checks that the budget
// (state.cache.size) covers the buffers a snapshot writes the records
// from, not only the records: after a snapshot of 8,000 records, which
// held their encoded keys and records at once (their size computed here),
// fewer records fit in memory before OverBudget than in a Records that
// never snapshotted, by at least those bytes' worth of records; and the
// records in memory never exceed the budget at RecordBytes each.
func TestRecordsBudgetCountsSnapshotBuffers(t *testing.T) {
	const budget, recBytes = 2 << 20, 64
	key := func(i int) []byte { return Int64{}.Append(nil, int64(i)) }
	// fill adds records from index from on until OverBudget, and returns
	// how many records are in memory then.
	fill := func(rec *Records, own *fakeOwner, from int) int {
		for i := from; ; i++ {
			if rec.OverBudget() {
				return rec.Len()
			}
			if i > budget/recBytes {
				t.Fatalf("%d records in memory, and not over a budget of %d bytes at %d each", rec.Len(), budget, recBytes)
			}
			slot := own.add(key(i))
			own.vals[slot] = int64(i)
			rec.AddedKey(slot, key(i))
			rec.Changed(slot)
		}
	}
	open := func() (*Records, *fakeOwner) {
		own := newFakeOwner()
		rec, err := NewRecords(RecordOptions{Name: "groups", OperatorID: "op", Budget: budget, RecordBytes: recBytes}, own)
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Attach(openStore(t, filepath.Join(t.TempDir(), "s")), false); err != nil {
			t.Fatal(err)
		}
		return rec, own
	}

	fresh, freshOwn := open()
	without := fill(fresh, freshOwn, 0)

	rec, own := open()
	const n = 8000
	buffered := 0
	for i := range n {
		slot := own.add(key(i))
		own.vals[slot] = int64(i)
		rec.AddedKey(slot, key(i))
		rec.Changed(slot)
		buffered += len(namePrefix("groups")) + len(key(i)) + len(binary.AppendVarint(nil, int64(i)))
	}
	if err := rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	with := fill(rec, own, n)
	t.Logf("records that fit in %d bytes at %d each: %d without a snapshot, %d after one of %d records (%d bytes of keys and records)", budget, recBytes, without, with, n, buffered)
	if with > without-buffered/recBytes {
		t.Errorf("after a snapshot %d records fit, without one %d: the snapshot's %d bytes of buffers are not counted", with, without, buffered)
	}
	if without*recBytes > budget || with*recBytes > budget {
		t.Errorf("records in memory exceed the budget: %d and %d at %d bytes, budget %d", without, with, recBytes, budget)
	}
}
