package state

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// aggOwner is a RecordSource laid out as GroupAggregate's SUM over a
// BIGINT key: per slot a 24-byte head (count, the key) and a 16-byte sum
// state, in slot order; slots were made in the keys' order of arrival.
type aggOwner struct {
	heads []struct {
		count, key int64
		kind       types.Kind
		flags      [3]bool
	}
	sums []struct{ sum, n int64 }
}

func (a *aggOwner) AppendRecordKey(dst []byte, slot int32) []byte {
	return AppendInt64(dst, a.heads[slot].key)
}

func (a *aggOwner) AppendRecord(dst []byte, slot int32) []byte {
	dst = append(dst, 3, 0, 0)
	dst = binary.AppendVarint(dst, a.heads[slot].count)
	s := &a.sums[slot]
	return binary.AppendVarint(binary.AppendVarint(dst, s.sum), s.n)
}

func (a *aggOwner) LoadRecord(key, rec []byte) (int32, error) { panic("not used") }
func (a *aggOwner) DropRecords()                              {}

// BenchmarkRecordsSortChunks is the in-memory part of W2's snapshot for
// one subtask: 500,000 records of random BIGINT keys, all changed, encoded
// and sorted chunk by chunk, and read as the store would take them (no
// store). It reports the process's CPU per
// record, less sensitive than the time to other load on the machine.
func BenchmarkRecordsSortChunks(b *testing.B) {
	const n = 500_000
	own := &aggOwner{}
	rec, err := NewRecords(RecordOptions{Name: "groups", OperatorID: "op", Budget: 64 << 20, RecordBytes: 84, Exclusive: true}, own)
	if err != nil {
		b.Fatal(err)
	}
	rec.sp = nil // kept in memory; chunks is called directly
	r := rand.New(rand.NewPCG(1, 2))
	perm := r.Perm(1_000_000)
	own.heads = make([]struct {
		count, key int64
		kind       types.Kind
		flags      [3]bool
	}, n)
	own.sums = make([]struct{ sum, n int64 }, n)
	for i := range n {
		own.heads[i].key, own.heads[i].count = int64(perm[i]), 1+int64(i%7)
		own.sums[i].sum, own.sums[i].n = int64(i%100), own.heads[i].count
		h, _ := HashIntKey(types.KindBigInt, own.heads[i].key)
		rec.setKG(int32(i), KeyGroupOfHash(h, 128))
	}
	// A buffer as large as the L3 cache, read between snapshots, as the
	// operator's row processing evicts the records from the caches.
	evict := make([]int64, 8<<20)
	var sink int64
	count := 0
	var cpu int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range evict {
			evict[i]++
		}
		b.StartTimer()
		c0 := cputime.Process()
		err := rec.chunks(rec.live, false, func(slots []int32, first, end int) error {
			ents, fixed, err := rec.sortedChunk(slots, first, end)
			for i := range ents { // what writeChunk reads
				k, v := rec.entry(ents, i, fixed)
				sink += int64(k[len(k)-1]) + int64(v[0])
			}
			count += len(ents)
			return err
		})
		cpu += int64(cputime.Process() - c0)
		if err != nil {
			b.Fatal(err)
		}
	}
	sink += evict[0]
	b.ReportMetric(float64(cpu)/float64(count), "cpu-ns/record")
	_ = sink
}

// keysOwner is a RecordSource of given keys, each with a 3-byte record.
type keysOwner struct{ keys [][]byte }

func (a *keysOwner) AppendRecordKey(dst []byte, slot int32) []byte {
	return append(dst, a.keys[slot]...)
}

func (a *keysOwner) AppendRecord(dst []byte, slot int32) []byte {
	return append(dst, 1, 4, byte(slot))
}

func (a *keysOwner) LoadRecord(key, rec []byte) (int32, error) { panic("not used") }
func (a *keysOwner) DropRecords()                              {}

// BenchmarkRecordsSortChunksDistinct is BenchmarkRecordsSortChunks for
// keys like a GroupAgg's DISTINCT entries of Nexmark q16: a family byte,
// a value (8 bytes) of 200,000, and a group key of a channel name and a
// day; 500,000 records, all changed. With hot values, a quarter of the
// entries hold one of 50 values (q16's hot bidders and auctions, in many
// channels): runs of entries of a key group that share their first 9
// bytes (sortTies).
func BenchmarkRecordsSortChunksDistinct(b *testing.B) {
	for _, hot := range []bool{false, true} {
		name := "values=uniform"
		if hot {
			name = "values=hot"
		}
		b.Run(name, func(b *testing.B) { benchSortChunksDistinct(b, hot) })
	}
}

func benchSortChunksDistinct(b *testing.B, hotValues bool) {
	const n = 500_000
	own := &keysOwner{}
	rec, err := NewRecords(RecordOptions{Name: "distinct.v1", OperatorID: "op", Budget: 64 << 20, RecordBytes: 57, Exclusive: true}, own)
	if err != nil {
		b.Fatal(err)
	}
	rec.sp = nil // kept in memory; chunks is called directly
	r := rand.New(rand.NewPCG(1, 2))
	hot := []string{"Google", "Facebook", "Baidu", "Apple"}
	for i := range n {
		var ch string
		if r.IntN(2) == 0 {
			ch = hot[r.IntN(4)]
		} else {
			ch = "channel-" + string(rune('0'+r.IntN(10))) + string(rune('0'+r.IntN(10))) + string(rune('0'+r.IntN(10))) + string(rune('0'+r.IntN(10)))
		}
		gk := AppendValue(AppendValue(nil, types.StringValue(ch)), types.StringValue("2026-01-01"))
		v := r.Int64N(200_000)
		if hotValues && r.IntN(4) == 0 {
			v = 1_000_000 + r.Int64N(50)
		}
		k := append([]byte{byte(r.IntN(2))}, binary.BigEndian.AppendUint64(nil, uint64(v)^1<<63)...)
		own.keys = append(own.keys, append(k, gk...))
		rec.setKG(int32(i), KeyGroup(gk, 128))
	}
	evict := make([]int64, 8<<20)
	var sink int64
	count := 0
	var cpu int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range evict {
			evict[i]++
		}
		b.StartTimer()
		c0 := cputime.Process()
		err := rec.chunks(rec.live, false, func(slots []int32, first, end int) error {
			ents, fixed, err := rec.sortedChunk(slots, first, end)
			for i := range ents {
				k, v := rec.entry(ents, i, fixed)
				sink += int64(k[len(k)-1]) + int64(v[0])
			}
			count += len(ents)
			return err
		})
		cpu += int64(cputime.Process() - c0)
		if err != nil {
			b.Fatal(err)
		}
	}
	sink += evict[0]
	b.ReportMetric(float64(cpu)/float64(count), "cpu-ns/record")
	_ = sink
}

// BenchmarkRecordsSnapshotDistinctStore is BenchmarkRecordsSortChunksDistinct
// written into a store, as a checkpoint does: the records sorted, written
// through into an sstable and ingested (a fresh store each time, so that
// no compaction runs). It reports the process's CPU per record.
func BenchmarkRecordsSnapshotDistinctStore(b *testing.B) {
	const n = 500_000
	own := &keysOwner{}
	rec, err := NewRecords(RecordOptions{Name: "distinct.v1", OperatorID: "op", Budget: 64 << 20, RecordBytes: 57, Exclusive: true, MaxParallelism: 128}, own)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	hot := []string{"Google", "Facebook", "Baidu", "Apple"}
	seen := map[string]bool{} // the keys are unique, as the entries' are
	for i := 0; i < n; {
		ch := hot[r.IntN(4)]
		if r.IntN(2) == 0 {
			ch = fmt.Sprintf("channel-%04d", r.IntN(10000))
		}
		gk := AppendValue(AppendValue(nil, types.StringValue(ch)), types.StringValue("2026-01-01"))
		k := append([]byte{byte(r.IntN(2))}, binary.BigEndian.AppendUint64(nil, uint64(r.Int64N(200_000))^1<<63)...)
		k = append(k, gk...)
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		own.keys = append(own.keys, k)
		rec.setKG(int32(i), KeyGroup(gk, 128))
		i++
	}
	var cpu int64
	count := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		store, err := statestore.Open(b.TempDir(), statestore.Options{MaxParallelism: 128})
		if err != nil {
			b.Fatal(err)
		}
		sp, err := store.Space("op")
		if err != nil {
			b.Fatal(err)
		}
		rec.sp = sp
		b.StartTimer()
		c0 := cputime.Process()
		err = rec.chunks(rec.live, false, rec.writeChunk)
		if err == nil {
			err = sp.CommitThrough()
		}
		cpu += int64(cputime.Process() - c0)
		count += n
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := store.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu)/float64(count), "cpu-ns/record")
}
