package nexmark

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
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
	benchSource(b, src, len(cols))
}

// benchSource reads b.N events of src (width columns).
func benchSource(b *testing.B, src connector.Source, width int) {
	b.ReportAllocs()
	b.ResetTimer()
	r, err := src.Open(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	batch := types.NewBatch(width, 1024)
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

// BenchmarkReadBidsROWPushed reads the reference's ROW table as the bid
// view does once the planner pushes event_type = 2 and the fields into
// the source: compare with BenchmarkReadBidsFlat.
func BenchmarkReadBidsROWPushed(b *testing.B) {
	src, err := newSource(connectortest.Table("nx", refCols(), opts("events.num", "3000000")), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	f, _ := src.FilterEquals(0, types.IntValue(2))
	p, ok := f.(connector.ProjectableSource).Project([][]int{{3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 5}, {3, 6}})
	if !ok {
		b.Fatal("projection refused")
	}
	benchSource(b, p, 7)
}

// BenchmarkReadBidsTwoFields reads the two fields q11 reads (bidder,
// dateTime) of the flat bid table.
func BenchmarkReadBidsTwoFields(b *testing.B) {
	src, err := newSource(connectortest.Table("nx", bidCols, opts("events.num", "3000000", "nexmark.event-type", "bid")), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	p, _ := src.Project([][]int{{1}, {5}})
	benchSource(b, p, 2)
}
