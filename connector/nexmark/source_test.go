package nexmark

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/types"
)

const (
	testBaseTime = "2026-01-01 00:00:00"
	testBase     = 1_767_225_600_000 // testBaseTime in ms
)

// mixedCols is the reference's table with its ROWs' fields as columns.
func mixedCols() []types.Column {
	cols := []types.Column{{Name: "event_type", Type: types.Int}, {Name: "dateTime", Type: types.Timestamp}}
	for k, defs := range kindFields {
		prefix := []string{"person", "auction", "bid"}[k]
		for _, d := range defs {
			cols = append(cols, types.Column{Name: prefix + "." + d.name, Type: types.Type{Kind: d.kind}})
		}
	}
	return cols
}

var bidCols = []types.Column{
	{Name: "auction", Type: types.BigInt}, {Name: "bidder", Type: types.BigInt}, {Name: "price", Type: types.BigInt},
	{Name: "channel", Type: types.Varchar}, {Name: "url", Type: types.Varchar}, {Name: "dateTime", Type: types.Timestamp},
	{Name: "extra", Type: types.Varchar},
}

func opts(kv ...string) map[string]string {
	m := map[string]string{"connector": "nexmark", "base-time": testBaseTime}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func mustSource(t *testing.T, cols []types.Column, o map[string]string) *Source {
	t.Helper()
	s, err := newSource(connectortest.Table("nx", cols, o), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readAll(t *testing.T, s connector.Source, width, par int) []string {
	t.Helper()
	parts, err := connectortest.ReadAll(context.Background(), s, width, par, 97)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat(parts...)
}

func ts(ms int64) string { return types.TimestampValue(ms).String() }

// TestMixedTable reads the reference's table in one subtask and checks
// each event against the reference's rules, computed here: event n's
// type is by n mod 50 (1 person, 3 auctions, 46 bids), its time is
// base + n * 1000 / rate ms, the k-th person and auction have id 1000 + k,
// and the fields of the other kinds are NULL.
func TestMixedTable(t *testing.T) {
	cols := mixedCols()
	rows := readAll(t, mustSource(t, cols, opts("events.num", "5000", "first-event.rate", "3000")), len(cols), 1)
	if len(rows) != 5000 {
		t.Fatalf("%d rows, want 5000", len(rows))
	}
	var people, auctions int64
	for n, row := range rows {
		n := int64(n)
		vals := strings.Split(strings.TrimSuffix(strings.TrimPrefix(row, "+I["), "]"), ", ")
		kind, nulls := "2", 8+10 // bid; the person and auction fields are NULL
		switch off := n % 50; {
		case off == 0:
			kind, nulls = "0", 10+7
			if want := fmt.Sprint(1000 + people); vals[2] != want {
				t.Fatalf("event %d: person.id %s, want %s: %s", n, vals[2], want, row)
			}
			people++
		case off <= 3:
			kind, nulls = "1", 8+7
			if want := fmt.Sprint(1000 + auctions); vals[10] != want {
				t.Fatalf("event %d: auction.id %s, want %s: %s", n, vals[10], want, row)
			}
			auctions++
		}
		if vals[0] != kind || vals[1] != ts(testBase+n*1000/3000) {
			t.Fatalf("event %d: type %s at %s, want %s at %s", n, vals[0], vals[1], kind, ts(testBase+n*1000/3000))
		}
		if got := strings.Count(row, "NULL"); got < nulls {
			t.Fatalf("event %d: %d NULLs, want at least %d: %s", n, got, nulls, row)
		}
	}
}

// TestSplits: the events are the same at parallelism 1, 2 and 4.
func TestSplits(t *testing.T) {
	cols := mixedCols()
	src := mustSource(t, cols, opts("events.num", "3001"))
	whole := readAll(t, src, len(cols), 1)
	slices.Sort(whole)
	for _, p := range []int{2, 4} {
		got := readAll(t, src, len(cols), p)
		slices.Sort(got)
		if !slices.Equal(got, whole) {
			t.Errorf("parallelism %d: %d rows differ from parallelism 1's %d", p, len(got), len(whole))
		}
	}
	// A source built later (another wall clock) with the same base time
	// yields the same events.
	again := readAll(t, mustSource(t, cols, opts("events.num", "3001")), len(cols), 3)
	slices.Sort(again)
	if !slices.Equal(again, whole) {
		t.Errorf("a second source with the same base-time differs")
	}
}

// TestPerKindTables: 'nexmark.event-type' keeps one kind of event, with
// its fields as columns, at the times and with the ids of the reference's
// rules.
func TestPerKindTables(t *testing.T) {
	rows := readAll(t, mustSource(t, bidCols, opts("events.num", "10000", "nexmark.event-type", "bid")), len(bidCols), 3)
	var want []string
	for n := int64(0); n < 10000; n++ {
		if n%50 >= 4 {
			want = append(want, ts(testBase+n/10))
		}
	}
	var got []string
	for _, r := range rows {
		got = append(got, strings.Split(r, ", ")[5])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("bids' dateTime: %d values, want %d (%v...)", len(got), len(want), got[:min(3, len(got))])
	}
	people := readAll(t, mustSource(t, []types.Column{{Name: "ID", Type: types.BigInt}, {Name: "state", Type: types.Varchar}},
		opts("events.num", "10000", "nexmark.event-type", "person")), 2, 2)
	var ids []string
	for _, r := range people {
		ids = append(ids, strings.TrimPrefix(strings.Split(r, ", ")[0], "+I["))
	}
	slices.SortFunc(ids, func(a, b string) int { return len(a)*1000 + strings.Compare(a, b) - len(b)*1000 })
	for k, id := range ids {
		if id != fmt.Sprint(1000+k) {
			t.Fatalf("person %d has id %s, want %d", k, id, 1000+k)
		}
	}
	if len(ids) != 200 {
		t.Errorf("%d people in 10,000 events, want 200", len(ids))
	}
}

// refBidRow is bid event n of the reference's rules as a row of bidCols
// (mixed: of mixedCols, the person and auction fields NULL) at the default
// rate (10,000 events a second from base): its fields from the model's
// generator, its time base + n/10 ms.
func refBidRow(g *model.Generator, n, base int64, mixed bool) string {
	var b model.Bid
	g.Bid(n, &b)
	fields := fmt.Sprintf("%d, %d, %d, %s, %s, %s, %s]", b.Auction, b.Bidder, b.Price, b.Channel, b.URL, ts(base+n/10), b.Extra)
	if !mixed {
		return "+I[" + fields
	}
	return "+I[2, " + ts(base+n/10) + ", " + strings.Repeat("<NULL>, ", 8+10) + fields
}

// refMixedKeys returns, for each of the first events of the mixed table
// (default rate), a key to find it by: a person's and an auction's type,
// time and id (the k-th of its kind has id 1000 + k), a bid's whole row.
func refMixedKeys(events int64) []string {
	cfg := model.DefaultConfig()
	g := model.NewGenerator(cfg, model.NewTables(cfg.Seed))
	var keys []string
	var people, auctions int64
	for n := range events {
		switch n % 50 {
		case 0:
			keys = append(keys, fmt.Sprintf("0|%s|%d", ts(testBase+n/10), 1000+people))
			people++
		case 1, 2, 3:
			keys = append(keys, fmt.Sprintf("1|%s|%d", ts(testBase+n/10), 1000+auctions))
			auctions++
		default:
			keys = append(keys, refBidRow(g, n, testBase, true))
		}
	}
	return keys
}

// mixedKey is refMixedKeys's key of a row of mixedCols.
func mixedKey(row string) string {
	vals := strings.Split(strings.TrimSuffix(strings.TrimPrefix(row, "+I["), "]"), ", ")
	switch vals[0] {
	case "0":
		return "0|" + vals[1] + "|" + vals[2]
	case "1":
		return "1|" + vals[1] + "|" + vals[10]
	}
	return row
}

// TestRestore reads part of the events, restores the positions into new
// readers (same parallelism: Seek; others: SeekAll) and reads the rest:
// together exactly the events of an uninterrupted read, which are those
// of the reference's rules (refMixedKeys), each once.
func TestRestore(t *testing.T) {
	ctx := context.Background()
	cols := mixedCols()
	src := mustSource(t, cols, opts("events.num", "2000"))
	whole := readAll(t, src, len(cols), 1)
	var keys []string
	for _, row := range whole {
		keys = append(keys, mixedKey(row))
	}
	want := refMixedKeys(2000)
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		for i := range min(len(keys), len(want)) {
			if keys[i] != want[i] {
				t.Fatalf("uninterrupted read: %d events, want %d; first difference:\ngot  %s\nwant %s", len(keys), len(want), keys[i], want[i])
			}
		}
		t.Fatalf("uninterrupted read: %d events, want %d", len(keys), len(want))
	}
	slices.Sort(whole)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	for _, stages := range [][]int{{2, 2}, {1, 3}, {4, 2}, {2, 5, 1}, {3, 3, 4, 1}} {
		for round := range 10 {
			cut := func(stage, subtask int) int {
				if stage == len(stages)-1 {
					return -1
				}
				return rng.IntN(2000 / stages[stage])
			}
			got, err := connectortest.ReadRescaled(ctx, src, len(cols), 61, stages, cut)
			if err != nil {
				t.Fatalf("%v round %d: %v", stages, round, err)
			}
			slices.Sort(got)
			if !slices.Equal(got, whole) {
				t.Fatalf("%v round %d (seed %d): %d rows, want the %d of an uninterrupted read", stages, round, seed, len(got), len(whole))
			}
		}
	}
}

// TestRestoreKeepsTimeline: without 'base-time' the timeline starts at
// the wall clock when the source is built; a restored reader continues
// the checkpointed timeline, not the new source's.
func TestRestoreKeepsTimeline(t *testing.T) {
	ctx := context.Background()
	o := map[string]string{"connector": "nexmark", "events.num": "1000", "nexmark.event-type": "bid"}
	first, err := newSource(connectortest.Table("nx", bidCols, o), time.UnixMilli(testBase))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := first.Open(0, 1)
	head, err := connectortest.Drain(ctx, r, len(bidCols), 50, 100)
	if err != nil {
		t.Fatal(err)
	}
	pos, _ := r.Position()
	later, err := newSource(connectortest.Table("nx", bidCols, o), time.UnixMilli(testBase+3_600_000))
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := later.Open(0, 1)
	if err := r2.Seek(pos); err != nil {
		t.Fatal(err)
	}
	tail, err := connectortest.Drain(ctx, r2, len(bidCols), 50, -1)
	if err != nil {
		t.Fatal(err)
	}
	// The bids of the first 1000 events by the reference's rules, on the
	// first source's timeline (base testBase).
	cfg := model.DefaultConfig()
	g := model.NewGenerator(cfg, model.NewTables(cfg.Seed))
	var want []string
	for n := range int64(1000) {
		if n%50 >= 4 {
			want = append(want, refBidRow(g, n, testBase, false))
		}
	}
	if got := slices.Concat(head, tail); !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("restored read: %d rows, want %d; row %d:\ngot  %s\nwant %s", len(got), len(want), i, got[i], want[i])
			}
		}
		t.Fatalf("restored read: %d rows, want %d", len(got), len(want))
	}
}

// TestRateLimited: with 'rate.limited' no event is emitted before it is
// due (its time minus the base time after the start); without it, all
// at once.
func TestRateLimited(t *testing.T) {
	ctx := context.Background()
	src := mustSource(t, bidCols, opts("events.num", "300", "first-event.rate", "2000", "rate.limited", "true", "nexmark.event-type", "bid"))
	r, _ := src.Open(0, 1)
	defer r.Close()
	start := time.UnixMilli(src.wallBase)
	b := types.NewBatch(len(bidCols), 64)
	rows := 0
	for {
		b.Reset()
		err := r.Next(ctx, b, 64)
		elapsed := time.Since(start).Milliseconds()
		for i := range b.Len() {
			due := b.Row(i)[5].Int() - testBase
			if due > elapsed {
				t.Fatalf("bid due at +%d ms emitted at +%d ms", due, elapsed)
			}
			rows++
		}
		if err != nil {
			break
		}
	}
	if rows != 6*46 {
		t.Errorf("%d bids, want %d", rows, 6*46)
	}
	// The last event (299) is due at +149 ms.
	if d := time.Since(start); d < 149*time.Millisecond {
		t.Errorf("300 events at 2000/s took %v", d)
	}
}

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		cols []types.Column
		o    map[string]string
		want string
	}{
		{bidCols, opts("nexmark.event-type", "bid", "events.nmu", "3"), "unsupported option 'events.nmu' (did you mean 'events.num'?)"},
		{bidCols, opts("nexmark.event-type", "bids"), "option 'nexmark.event-type': invalid value 'bids'"},
		{bidCols, opts("nexmark.event-type", "bid", "first-event.rate", "0"), "'first-event.rate' must be between 1"},
		{bidCols, opts("nexmark.event-type", "bid", "base-time", "yesterday"), "option 'base-time': invalid value 'yesterday'"},
		{bidCols, opts("nexmark.event-type", "bid", "bid.avg-size", "lots"), "option 'bid.avg-size': invalid value 'lots'"},
		{bidCols, opts("nexmark.event-type", "bid", "rate.shape", "TRIANGLE"), "option 'rate.shape': invalid value 'TRIANGLE'"},
		{bidCols, opts("nexmark.event-type", "bid", "rate.period", "10 ms"), "option 'rate.period': must be at least 1 s"},
		{bidCols, opts("nexmark.event-type", "bid", "events.num", "-1"), "option 'events.num': must not be negative"},
		{bidCols, opts("nexmark.event-type", "bid", "bid.proportion", "0"), "the table would be empty, 'bid.proportion' is 0"},
		{bidCols, opts("nexmark.event-type", "person"), "column auction: a person has no field 'auction'"},
		{[]types.Column{{Name: "price", Type: types.Int}}, opts("nexmark.event-type", "bid"), "column price: the field price is BIGINT, declared INT"},
		{[]types.Column{{Name: "bid", Type: types.Varchar}}, opts(), "the bid column is a ROW<auction, bidder, price, channel, url, dateTime, extra>, declared STRING"},
		{[]types.Column{{Name: "bid.cost", Type: types.BigInt}}, opts(), "column bid.cost: a bid has no field 'cost'"},
		{[]types.Column{{Name: "price", Type: types.BigInt}}, opts(), "column price: the nexmark table has the columns event_type, person, auction, bid and dateTime"},
		{[]types.Column{{Name: "bid.price", Type: types.Type{Kind: types.KindBigInt, NotNull: true}}}, opts(), "cannot be NOT NULL"},
	} {
		_, err := newSource(connectortest.Table("nx", tc.cols, tc.o), time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options %v: got %v, want %q", tc.o, err, tc.want)
		}
	}
}

func TestDescribePosition(t *testing.T) {
	src := mustSource(t, bidCols, opts("events.num", "1000", "nexmark.event-type", "bid"))
	r, _ := src.Open(1, 2)
	if _, err := connectortest.Drain(context.Background(), r, len(bidCols), 10, 10); err != nil {
		t.Fatal(err)
	}
	pos, _ := r.Position()
	got, err := DescribePosition(pos)
	if err != nil {
		t.Fatal(err)
	}
	// Subtask 1 passes events 1, 3 (auctions), then bids 5, 7, ..., 23:
	// 12 events, the next is 25.
	if want := "subtask 1 of 2: 12 events passed, next event 25; base time 2026-01-01T00:00:00.000Z (event 0's time)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if _, err := DescribePosition([]byte{9}); err == nil {
		t.Error("a bad position was described")
	}
}

// BenchmarkReadBids is the source alone: bids into batches of 1,024 rows,
// one subtask. It reports events per second and the process's CPU time
// per event (steadier on a shared machine).
func BenchmarkReadBids(b *testing.B) {
	src, err := newSource(connectortest.Table("nx", bidCols, opts("nexmark.event-type", "bid")), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	r, _ := src.Open(0, 1)
	batch := types.NewBatch(len(bidCols), 1024)
	ctx := context.Background()
	rows := 0
	start, cpu := time.Now(), cputime.Process()
	for b.Loop() {
		batch.Reset()
		if err := r.Next(ctx, batch, 1024); err != nil {
			b.Fatal(err)
		}
		rows += batch.Len()
	}
	b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "events/s")
	b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(rows), "cpu-ns/event")
}

// TestSubtaskWithoutItsKind: at parallelism 50, subtask 0 of a bid table
// passes only people (events 0, 50, 100, ...); Next still returns (with
// no rows), and the subtasks together still read every bid.
func TestSubtaskWithoutItsKind(t *testing.T) {
	src := mustSource(t, bidCols, opts("nexmark.event-type", "bid"))
	r, _ := src.Open(0, 50)
	b := types.NewBatch(len(bidCols), 100)
	for range 10 {
		if err := r.Next(context.Background(), b, 100); err != nil || b.Len() != 0 {
			t.Fatalf("Next: %v, %d rows", err, b.Len())
		}
	}
	bounded := mustSource(t, bidCols, opts("nexmark.event-type", "bid", "events.num", "5000"))
	one, fifty := readAll(t, bounded, len(bidCols), 1), readAll(t, bounded, len(bidCols), 50)
	slices.Sort(one)
	slices.Sort(fifty)
	if len(one) != 4600 || !slices.Equal(one, fifty) {
		t.Errorf("parallelism 50: %d bids, parallelism 1: %d, want the same 4600", len(fifty), len(one))
	}
}
