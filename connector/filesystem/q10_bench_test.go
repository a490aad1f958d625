package filesystem

import (
	"math/rand"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// q10BidTable is Nexmark q10's full sink table (bench/nexmark's q10.sql):
// (auction, bidder, price, dateTime, extra, dt, hm) partitioned by dt and hm.
func q10BidTable(dir string) *connector.Table {
	return &connector.Table{Name: "nexmark_q10", PartitionBy: []int{5, 6},
		Options: map[string]string{"connector": "filesystem", "path": dir, "format": "csv",
			"sink.partition-commit.trigger": "partition-time", "sink.partition-commit.delay": "1 min",
			"sink.partition-commit.policy.kind": "success-file", "partition.time-extractor.timestamp-pattern": "$dt $hm:00",
			"sink.rolling-policy.rollover-interval": "1min", "sink.rolling-policy.check-interval": "1min"},
		Schema: types.Schema{Columns: []types.Column{
			{Name: "auction", Type: types.BigInt}, {Name: "bidder", Type: types.BigInt},
			{Name: "price", Type: types.BigInt}, {Name: "dateTime", Type: types.Timestamp},
			{Name: "extra", Type: types.Varchar}, {Name: "dt", Type: types.Varchar}, {Name: "hm", Type: types.Varchar}}}}
}

// q10Gen makes batches like q10's input: bids 2 ms apart on average,
// their extra a random 54 to 81 byte cut of 1 MB of random lowercase text
// (as the Nexmark generator cuts it), dt and hm their day and minute.
// With special, the text holds the bytes that make a CSV field quoted.
type q10Gen struct {
	r        *rand.Rand
	text     string
	ts       int64
	lastMin  int64
	dtS, hmS string
}

func newQ10Gen(seed int64, special bool) *q10Gen {
	r := rand.New(rand.NewSource(seed))
	text := make([]byte, 1<<20)
	for i := range text {
		text[i] = byte('a' + r.Intn(26))
		if special && r.Intn(200) == 0 {
			text[i] = ",\"\n\r"[r.Intn(4)]
		}
	}
	return &q10Gen{r: r, text: string(text), ts: time.Date(2026, 12, 1, 23, 58, 0, 0, time.UTC).UnixMilli(), lastMin: -1}
}

// fill replaces b's rows with size new ones.
func (g *q10Gen) fill(b *types.Batch, size int) {
	b.Reset()
	r := g.r
	for range size {
		g.ts += int64(1 + r.Intn(3))
		if m := g.ts / 60000; m != g.lastMin {
			t := time.UnixMilli(g.ts).UTC()
			g.dtS, g.hmS, g.lastMin = t.Format("2006-01-02"), t.Format("15:04"), m
		}
		l := 54 + r.Intn(28)
		off := r.Intn(len(g.text) - l)
		b.Append(types.Insert, []types.Value{
			types.BigIntValue(1000 + r.Int63n(10000)), types.BigIntValue(1000 + r.Int63n(100000)),
			types.BigIntValue(r.Int63n(100_000_000)), types.TimestampValue(g.ts),
			types.StringValue(g.text[off : off+l]), types.StringValue(g.dtS), types.StringValue(g.hmS)})
	}
}

// q10Ring is the number of batches the benchmarks cycle through: few, so
// that they stay in the cache as an operator's batch does.
const q10Ring = 4

// BenchmarkQ10Sink writes q10's rows through the partitioned CSV sink into
// a temporary folder, pre-committing and committing every 64 batches (the
// kernel's write is part of it). ns/op is per row.
func BenchmarkQ10Sink(b *testing.B) {
	g := newQ10Gen(1, false)
	batches := make([]*types.Batch, q10Ring)
	for k := range batches {
		batches[k] = types.NewBatch(7, 1024)
		g.fill(batches[k], 1024)
	}
	dir := b.TempDir()
	s, err := NewSink(q10BidTable(dir), connector.Env{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := s.Open(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	tw := w.(connector.TransactionalWriter)
	b.ReportAllocs()
	b.SetBytes(100)
	b.ResetTimer()
	ckpt := int64(0)
	for i := 0; i < b.N; i += 1024 {
		n := i / 1024
		k := n % len(batches)
		if n > 0 && k == 0 {
			// Later rows: time goes on.
			b.StopTimer()
			for _, bt := range batches {
				g.fill(bt, 1024)
			}
			b.StartTimer()
		}
		if err := w.Write(batches[k]); err != nil {
			b.Fatal(err)
		}
		if n%64 == 63 {
			ckpt++
			txn, err := tw.PreCommit(ckpt)
			if err != nil {
				b.Fatal(err)
			}
			if err := tw.Commit(txn); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkQ10Encode is the CSV encoding of q10's file columns alone.
// ns/op is per row.
func BenchmarkQ10Encode(b *testing.B) {
	g := newQ10Gen(1, false)
	batches := make([]*types.Batch, q10Ring)
	for k := range batches {
		bt := types.NewBatch(7, 1024)
		g.fill(bt, 1024)
		// Drop the partition columns, as the sink does.
		batches[k] = types.NewBatch(5, 1024)
		for i := range bt.Len() {
			batches[k].Append(types.Insert, bt.Row(i)[:5])
		}
	}
	cols := q10BidTable("").Schema.Columns[:5]
	f, _, err := parseFormat(map[string]string{"format": "csv"}, false)
	if err != nil {
		b.Fatal(err)
	}
	e := newEncoder(f, cols)
	var buf []byte
	b.ReportAllocs()
	b.SetBytes(100)
	b.ResetTimer()
	for i := 0; i < b.N; i += 1024 {
		var err error
		if buf, err = e.encode(buf[:0], batches[(i/1024)%len(batches)]); err != nil {
			b.Fatal(err)
		}
	}
}
