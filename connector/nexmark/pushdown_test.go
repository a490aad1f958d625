package nexmark

import (
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/types"
)

// TestPushdownBids: the reference's table (ROW columns) with event_type =
// 2 pushed down and the fields bid.auction, bid.price and bid.dateTime
// projected reads exactly the bids (event n is a bid when n mod 50 >= 4,
// at base + n/10 ms at 10,000 events a second), with the values the
// dotted columns `bid.auction`, `bid.price` of the whole table hold.
func TestPushdownBids(t *testing.T) {
	const events = 6000
	o := opts("events.num", "6000")
	src := mustSource(t, refCols(), o)
	f, ok := src.FilterEquals(0, types.IntValue(2))
	if !ok {
		t.Fatal("FilterEquals(event_type, 2) refused")
	}
	p, ok := f.(connector.ProjectableSource).Project([][]int{{3, 0}, {3, 2}, {3, 5}})
	if !ok {
		t.Fatal("Project refused the bid's fields")
	}
	for _, par := range []int{1, 3} {
		got := readAll(t, p, 3, par)
		slices.Sort(got)
		// The dotted table: event_type, dateTime, then the fields of the
		// three kinds (person 8, auction 10, bid 7).
		cols := mixedCols()
		var want []string
		for n, r := range readAll(t, mustSource(t, cols, o), len(cols), 1) {
			if n%50 < 4 {
				continue
			}
			v := strings.Split(strings.TrimSuffix(strings.TrimPrefix(r, "+I["), "]"), ", ")
			if v[0] != "2" || v[1] != ts(testBase+int64(n)/10) {
				t.Fatalf("event %d is not a bid at %s: %s", n, ts(testBase+int64(n)/10), r)
			}
			want = append(want, "+I["+v[20]+", "+v[22]+", "+v[1]+"]")
		}
		slices.Sort(want)
		if len(want) != events/50*46 || !slices.Equal(got, want) {
			t.Fatalf("parallelism %d: %d rows (%v...), want %d (%v...)", par, len(got), got[:min(2, len(got))], len(want), want[:2])
		}
	}
}

// TestPushdownProjectAll: projecting a whole column and single fields of
// each kind without a filter reads every event, the fields NULL for events
// of other kinds, as the whole ROW's fields.
func TestPushdownProjectAll(t *testing.T) {
	o := opts("events.num", "500")
	p, ok := mustSource(t, refCols(), o).Project([][]int{{0}, {1, 0}, {2, 7}, {3, 2}})
	if !ok {
		t.Fatal("Project refused")
	}
	got := readAll(t, p, 4, 1)
	cols := mixedCols()
	full := readAll(t, mustSource(t, cols, o), len(cols), 1)
	if len(got) != len(full) {
		t.Fatalf("%d rows, want %d", len(got), len(full))
	}
	for n, r := range full {
		v := strings.Split(strings.TrimSuffix(strings.TrimPrefix(r, "+I["), "]"), ", ")
		// event_type, person.id, auction.seller, bid.price
		if want := "+I[" + strings.Join([]string{v[0], v[2], v[17], v[22]}, ", ") + "]"; got[n] != want {
			t.Fatalf("event %d: %s, want %s", n, got[n], want)
		}
	}
}

// TestPushdownRefused: what the source cannot push down is refused, so
// that the planner keeps it.
func TestPushdownRefused(t *testing.T) {
	src := mustSource(t, refCols(), opts("events.num", "10"))
	for _, c := range []struct {
		col int
		v   types.Value
	}{{1, types.IntValue(0)}, {0, types.IntValue(3)}, {0, types.IntValue(-1)}, {0, types.Value{}}, {9, types.IntValue(1)}} {
		if _, ok := src.FilterEquals(c.col, c.v); ok {
			t.Errorf("FilterEquals(%d, %v) accepted", c.col, c.v)
		}
	}
	bid, _ := src.FilterEquals(0, types.IntValue(2))
	if _, ok := bid.(connector.FilterableSource).FilterEquals(0, types.IntValue(1)); ok {
		t.Error("a bid-only source accepted event_type = 1")
	}
	for _, p := range [][][]int{{{}}, {{4}}, {{3, 7}}, {{0, 0}}, {{3, 0, 0}}} {
		if _, ok := src.Project(p); ok {
			t.Errorf("Project(%v) accepted", p)
		}
	}
	flat := mustSource(t, bidCols, opts("events.num", "10", "nexmark.event-type", "bid"))
	if _, ok := flat.FilterEquals(0, types.BigIntValue(2)); ok {
		t.Error("FilterEquals on the flat bid table's auction column accepted")
	}
}

// TestPushdownBidExtraSkipsChannel: a projection of a bid's extra without
// its channel and url reads the extra (and the fields before it) the
// whole table holds, without the channel look-up
// (model.BidSkipChannel); with the channel it reads both.
func TestPushdownBidExtraSkipsChannel(t *testing.T) {
	o := opts("events.num", "3000")
	src := mustSource(t, refCols(), o)
	f, ok := src.FilterEquals(0, types.IntValue(2))
	if !ok {
		t.Fatal("FilterEquals(event_type, 2) refused")
	}
	cols := mixedCols()
	full := readAll(t, mustSource(t, cols, o), len(cols), 1)
	// The dotted table's bid fields: auction 20, bidder 21, price 22,
	// channel 23, url 24, dateTime 25, extra 26.
	for _, c := range []struct {
		fields []int
		skip   bool
	}{{[]int{0, 2, 6}, true}, {[]int{3, 6}, false}, {[]int{6, 4}, false}, {[]int{3}, false}} {
		proj := make([][]int, len(c.fields))
		for i, fl := range c.fields {
			proj[i] = []int{3, fl}
		}
		p, ok := f.(connector.ProjectableSource).Project(proj)
		if !ok {
			t.Fatalf("Project %v refused", c.fields)
		}
		if skip := p.(*Source).bidUpTo&model.BidSkipChannel != 0; skip != c.skip {
			t.Fatalf("fields %v: skips the channel %v, want %v", c.fields, skip, c.skip)
		}
		got := readAll(t, p, len(c.fields), 1)
		var want []string
		for n, r := range full {
			if n%50 < 4 {
				continue
			}
			v := strings.Split(strings.TrimSuffix(strings.TrimPrefix(r, "+I["), "]"), ", ")
			var fs []string
			for _, fl := range c.fields {
				fs = append(fs, v[20+fl])
			}
			want = append(want, "+I["+strings.Join(fs, ", ")+"]")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("fields %v: %d rows (%v...), want %d (%v...)", c.fields, len(got), got[:min(2, len(got))], len(want), want[:min(2, len(want))])
		}
	}
}
