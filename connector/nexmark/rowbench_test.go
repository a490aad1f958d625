package nexmark

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/types"
)

// refCols is the reference's table with ROW columns (ddl_gen.sql).
func refCols() []types.Column {
	ts := types.Timestamp
	f := func(name string, t types.Type) types.Field { return types.Field{Name: name, Type: t} }
	return []types.Column{
		{Name: "event_type", Type: types.Int},
		{Name: "person", Type: types.RowOf(f("id", types.BigInt), f("name", types.Varchar), f("emailAddress", types.Varchar),
			f("creditCard", types.Varchar), f("city", types.Varchar), f("state", types.Varchar), f("dateTime", ts), f("extra", types.Varchar))},
		{Name: "auction", Type: types.RowOf(f("id", types.BigInt), f("itemName", types.Varchar), f("description", types.Varchar),
			f("initialBid", types.BigInt), f("reserve", types.BigInt), f("dateTime", ts), f("expires", ts),
			f("seller", types.BigInt), f("category", types.BigInt), f("extra", types.Varchar))},
		{Name: "bid", Type: types.RowOf(f("auction", types.BigInt), f("bidder", types.BigInt), f("price", types.BigInt),
			f("channel", types.Varchar), f("url", types.Varchar), f("dateTime", ts), f("extra", types.Varchar))},
	}
}

func benchRead(b *testing.B, cols []types.Column, o map[string]string) {
	src, err := newSource(connectortest.Table("nx", cols, o), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	r, err := src.Open(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	batch := types.NewBatch(len(cols), 1024)
	n := 0
	start, cpu := time.Now(), cputime.Process()
	defer func() {
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
		b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(n), "cpu-ns/event")
	}()
	for n < b.N {
		batch.Reset()
		if err := r.Next(context.Background(), batch, 1024); err == io.EOF {
			break
		} else if err != nil {
			b.Fatal(err)
		}
		n += batch.Len()
	}
}

func BenchmarkReadBidsFlat(b *testing.B) {
	benchRead(b, bidCols, opts("nexmark.event-type", "bid", "events.num", "3000000"))
}

func BenchmarkReadEventsROW(b *testing.B) {
	benchRead(b, refCols(), opts("events.num", "3000000"))
}

func BenchmarkReadEventsDotted(b *testing.B) {
	benchRead(b, mixedCols(), opts("events.num", "3000000"))
}
