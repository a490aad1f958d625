package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/weir-sql/weir/types"
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

// TestRecordsSnapshotBuffersFollowChanges: the buffers a snapshot of
// 20,000 changed records grew are released when the next snapshot writes
// 100 (so they follow the changes between checkpoints, not their peak),
// grow again for the next 20,000, and every snapshot writes the right
// records: the store ends up with the values set here.
func TestRecordsSnapshotBuffersFollowChanges(t *testing.T) {
	const n = 20_000
	key := func(i int) []byte { return Int64{}.Append(nil, int64(i)) }
	st := openStore(t, filepath.Join(t.TempDir(), "s"))
	own := newFakeOwner()
	rec, err := NewRecords(RecordOptions{Name: "groups", OperatorID: "op", Budget: 64 << 20, RecordBytes: 64}, own)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Attach(st, false); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	slots := make([]int32, n)
	for i := range n {
		slots[i] = own.add(key(i))
		rec.AddedKey(slots[i], key(i))
	}
	set := func(i int, v int64) {
		own.vals[slots[i]] = v
		want[string(key(i))] = v
		rec.Changed(slots[i])
	}
	snapshot := func() int64 {
		if err := rec.Snapshot(); err != nil {
			t.Fatal(err)
		}
		return snapshotBufferBytes(rec)
	}
	for i := range n {
		set(i, int64(i))
	}
	peak := snapshot()
	for i := 0; i < n; i += n / 100 {
		set(i, -int64(i))
	}
	after := snapshot()
	t.Logf("buffers: %d bytes after a snapshot of %d records, %d after one of 100", peak, n, after)
	if after > peak/8 {
		t.Errorf("buffers of %d bytes kept after a snapshot of 100 records (%d after one of %d)", after, peak, n)
	}
	for i := range n {
		set(i, int64(3*i))
	}
	if again := snapshot(); again < peak/2 {
		t.Errorf("buffers of %d bytes after a second snapshot of %d records, %d after the first", again, n, peak)
	}
	sp, err := st.Space("op")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	prefix := namePrefix("groups")
	for kg := range types.DefaultMaxParallelism {
		err := sp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
			x, m := binary.Varint(v)
			if m != len(v) || !bytes.HasPrefix(k, prefix) {
				return false, fmt.Errorf("stored %x = %x", k, v)
			}
			got[string(k[len(prefix):])] = x
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the store holds %d records, want %d (or other values)", len(got), len(want))
	}
}

// snapshotBufferBytes is the memory of the buffers Records keeps from one
// snapshot to the next (those trimBuffers releases), a part of
// bufferBytes.
func snapshotBufferBytes(r *Records) int64 {
	const entBytes = int64(unsafe.Sizeof(recEnt{}))
	return int64(cap(r.kbuf)+cap(r.gbuf)) + int64(cap(r.ents)+cap(r.spare))*entBytes +
		int64(cap(r.slots)+cap(r.offs))*4
}
