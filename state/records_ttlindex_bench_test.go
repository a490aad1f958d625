package state

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

func openStoreB(b *testing.B, dir string) *statestore.Store {
	b.Helper()
	st, err := statestore.Open(dir, statestore.Options{CacheBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkRecordsSpillTTL measures a Spill of 100,000 records (fakeOwner,
// BIGINT keys) onto a statestore, with and without a TTL (the TTL writes an
// index entry per record dropped), and with a TTL the snapshot that then
// deletes them all from the store once expired (sweep), each with the
// flush of its writes. Per record.
func BenchmarkRecordsSpillTTL(b *testing.B) {
	const n = 100_000
	for _, c := range []struct {
		name  string
		ttl   time.Duration
		sweep bool
	}{{"no-ttl/spill", 0, false}, {"ttl/spill", time.Second, false}, {"ttl/sweep", time.Second, true}} {
		b.Run(c.name, func(b *testing.B) {
			var spent time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st := openStoreB(b, filepath.Join(b.TempDir(), "s"))
				own := newFakeOwner()
				rec, err := NewRecords(RecordOptions{Name: "recs", OperatorID: "op", Budget: 1, RecordBytes: 100, TTL: c.ttl}, own)
				if err != nil {
					b.Fatal(err)
				}
				if err := rec.Attach(st, false); err != nil {
					b.Fatal(err)
				}
				rec.SetTime(1000)
				for k := range int64(n) {
					slot := own.add(AppendInt64(nil, k))
					rec.AddedInt(slot, types.KindBigInt, k)
					rec.Changed(slot)
				}
				start := time.Now()
				if !c.sweep {
					b.StartTimer()
				}
				if err := rec.Spill(); err != nil {
					b.Fatal(err)
				}
				if c.sweep {
					rec.SetTime(5000)
					start = time.Now()
					b.StartTimer()
					if err := rec.Snapshot(); err != nil {
						b.Fatal(err)
					}
				}
				if err := st.Flush(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				spent += time.Since(start)
				_ = st.Close()
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}
