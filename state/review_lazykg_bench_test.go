package state

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// BenchmarkReviewRecordsNewIntKeys is the cost a lazy key group moves to
// the snapshot: each op adds 64Ki new integer keys (AddedInt, Changed)
// that all outlive the snapshot that follows, as a GroupAgg's new groups
// do. Measure instructions with cachegrind, base against lazy.
func BenchmarkReviewRecordsNewIntKeys(b *testing.B) {
	const perCycle = 1 << 16
	dir := b.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "work"), statestore.Options{CacheBytes: 64 << 20, MaxParallelism: 128})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	own := newFakeOwner()
	rec, err := NewRecords(RecordOptions{Name: "recs", OperatorID: "op", Budget: 8 << 30, RecordBytes: 64, MaxParallelism: 128}, own)
	if err != nil {
		b.Fatal(err)
	}
	if err := rec.Attach(st, false); err != nil {
		b.Fatal(err)
	}
	next := int64(0)
	for i := range b.N {
		for range perCycle {
			key := AppendValue(nil, types.BigIntValue(next))
			slot := own.add(key)
			rec.AddedInt(slot, types.KindBigInt, next)
			own.vals[slot] = next
			rec.Changed(slot)
			next++
		}
		if err := rec.Snapshot(); err != nil {
			b.Fatal(err)
		}
		_ = fmt.Sprint(i)
	}
}
