package session

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/types"
)

// TestNexmarkROWTableMatchesFlat runs the reference's table and views as
// written in examples/nexmark (ddl_gen.sql, ddl_views.sql) next to the
// flat per-kind tables, at parallelism 2: every view must return the rows
// of its flat table, and the times must be the reference's (event n at
// base + n ms at 1,000 events a second; n mod 50 is 0 for a person, 1-3
// for an auction, else a bid), computed here, and so must the ids (the
// k-th person and auction have id 1000 + k) and every bid's fields
// (model.Generator.Bid).
func TestNexmarkROWTableMatchesFlat(t *testing.T) {
	const events = 20000
	read := func(name string) string {
		b, err := os.ReadFile("../examples/nexmark/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), "'events.num' = '100000'", fmt.Sprintf("'events.num' = '%d'", events))
	}
	gen := read("ddl_gen.sql")
	if !strings.Contains(gen, fmt.Sprintf("'events.num' = '%d'", events)) {
		t.Fatal("ddl_gen.sql no longer sets 'events.num' = '100000'")
	}
	flat := func(name, kind, cols string) string {
		return fmt.Sprintf(`CREATE TABLE %s (%s, WATERMARK FOR `+"`dateTime` AS `dateTime`"+` - INTERVAL '4' SECOND) WITH (
  'connector' = 'nexmark', 'nexmark.event-type' = '%s', 'first-event.rate' = '1000', 'next-event.rate' = '1000',
  'events.num' = '%d', 'base-time' = '2026-01-01 00:00:00');
`, name, cols, kind, events)
	}
	ts := "`dateTime` TIMESTAMP(3)"
	personCols := "id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, " + ts + ", extra VARCHAR"
	auctionCols := "id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, " + ts + ", expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR"
	bidCols := "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, " + ts + ", extra VARCHAR"
	// The reference's ids and bids, computed here: event n (at base + n
	// ms) is the k-th person (id 1000 + k) or auction, or a bid whose
	// fields come from model.Generator.Bid(n).
	cfg := model.DefaultConfig()
	g := model.NewGenerator(cfg, model.NewTables(cfg.Seed))
	wantID := map[string]string{} // tag and time -> id
	wantBid := map[string]bool{}  // a bid's whole row
	var people, auctions int64
	for n := int64(0); n < events; n++ {
		at := types.TimestampValue(1767225600000 + n).String()
		switch n % 50 {
		case 0:
			wantID["p"+at] = fmt.Sprint(1000 + people)
			people++
		case 1, 2, 3:
			wantID["a"+at] = fmt.Sprint(1000 + auctions)
			auctions++
		default:
			var b model.Bid
			g.Bid(n, &b)
			wantBid[fmt.Sprintf("[b, %d, %d, %d, %s, %s, %s, %s]", b.Auction, b.Bidder, b.Price, b.Channel, b.URL, at, b.Extra)] = true
		}
	}
	// One run per kind: one print sink per run, so that its lines never
	// interleave with another sink's.
	times := map[string][]string{}
	for _, k := range []struct{ tag, view, kind, cols string }{
		{"p", "person", "person", personCols}, {"a", "auction", "auction", auctionCols}, {"b", "bid", "bid", bidCols},
	} {
		// The view and the flat table in two jobs: each must give the rows
		// of the other.
		setup := "SET 'parallelism.default' = '2';\n" + gen + read("ddl_views.sql") + flat("flat", k.kind, k.cols) +
			"CREATE TABLE o (src STRING, " + k.cols + ") WITH ('connector' = 'print');\n"
		view := runScript(t, setup+"INSERT INTO o SELECT '"+k.tag+"', * FROM "+k.view+";\n")
		flatOut := runScript(t, setup+"INSERT INTO o SELECT '"+k.tag+"', * FROM flat;\n")
		rows := applyChangelog(t, view+flatOut)
		for row, n := range rows {
			if n != 2 {
				t.Fatalf("row %s came %d times, want twice (the view's and the flat table's)", row, n)
			}
			f := strings.Split(row, ", ")
			at := f[map[string]int{"p": 7, "a": 6, "b": 6}[k.tag]]
			times[k.tag] = append(times[k.tag], at)
			if k.tag == "b" {
				if !wantBid[row] {
					t.Fatalf("bid %s is not the reference's bid at its time", row)
				}
			} else if id, ok := wantID[k.tag+at]; !ok || f[1] != id {
				t.Fatalf("%s: id %s, want %q (an event of this kind at this time: %v)", row, f[1], id, ok)
			}
		}
	}
	want := map[string][]string{}
	for n := int64(0); n < events; n++ {
		k := "b"
		switch off := n % 50; {
		case off == 0:
			k = "p"
		case off <= 3:
			k = "a"
		}
		want[k] = append(want[k], types.TimestampValue(1767225600000+n).String())
	}
	for _, k := range []string{"p", "a", "b"} {
		sort.Strings(times[k])
		if strings.Join(times[k], ",") != strings.Join(want[k], ",") {
			t.Errorf("%s: %d rows with times %v…, want %d with %v…", k, len(times[k]), head(times[k]), len(want[k]), head(want[k]))
		}
	}
}
