package model

import (
	"math"
	"strings"
	"testing"
)

// The tests compare the generator with the reference's rules, computed
// here independently: a sequential walk over the events that counts the
// people and auctions generated so far, as the reference's ids are
// defined (the k-th person generated has id 1000 + k).

const testBase = 1_767_225_600_000 // 2026-01-01 00:00:00 UTC

func testGen(mod func(*Config)) *Generator {
	c := DefaultConfig()
	c.BaseTime = testBase
	if mod != nil {
		mod(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return NewGenerator(c, NewTables(c.Seed))
}

// TestProportions: every window of 50 events (from a multiple of 50) holds
// one person, then three auctions, then 46 bids.
func TestProportions(t *testing.T) {
	g := testGen(nil)
	for w := int64(0); w < 2000; w++ {
		counts := [3]int{}
		for k := int64(0); k < 50; k++ {
			n := w*50 + k
			kind := g.KindOf(n)
			counts[kind]++
			want := KindBid
			switch {
			case k == 0:
				want = KindPerson
			case k <= 3:
				want = KindAuction
			}
			if kind != want {
				t.Fatalf("event %d: kind %v, want %v", n, kind, want)
			}
		}
		if counts != [3]int{1, 3, 46} {
			t.Fatalf("window %d: %v", w, counts)
		}
	}
}

// walk calls f for events 0..n-1 with the number of people and auctions
// generated before each.
func walk(g *Generator, n int64, f func(n int64, e *Event, people, auctions int64)) {
	var e Event
	var people, auctions int64
	for i := range n {
		g.Next(i, &e)
		f(i, &e, people, auctions)
		switch e.Kind {
		case KindPerson:
			people++
		case KindAuction:
			auctions++
		}
	}
}

// TestIDsAndRanges checks every event's ids against the reference's
// rules: new people and auctions get the next id; an auction's seller and
// a bid's bidder are the hot person of the last block of 100 people (the
// first for sellers, the second for bidders) or one of the last
// NumActivePeople people or the 10 ahead; a bid's auction is the hot
// auction (the first of the last block of 100) or one of the last 100 in
// flight or the 10 ahead. It also checks the other fields' ranges and that
// the hot ratios hold within a tolerance.
func TestIDsAndRanges(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		hotAuction, hotBidders int64
		hotSellers             int64
	}{{"defaults", 2, 4, 4}, {"all hot", 1, 1, 1}, {"rarely hot", 1000, 1000, 1000}} {
		t.Run(tc.name, func(t *testing.T) {
			g := testGen(func(c *Config) {
				c.HotAuctionRatio, c.HotBiddersRatio, c.HotSellersRatio = tc.hotAuction, tc.hotBidders, tc.hotSellers
			})
			var bids, hotAuction, hotBidder, sellers, hotSeller int
			var extraLen int64
			walk(g, 300_000, func(n int64, e *Event, people, auctions int64) {
				lastPerson := people - 1 // base 0; every event has one (event 0 is a person)
				if e.Kind == KindPerson {
					lastPerson = people
				}
				active := min(lastPerson+1, 1000)
				personLo, personHi := lastPerson+1-active+FirstPersonID, lastPerson+1+10+FirstPersonID // [lo, hi)
				switch e.Kind {
				case KindPerson:
					p := &e.Person
					if p.ID != FirstPersonID+people {
						t.Fatalf("event %d: person id %d, want %d", n, p.ID, FirstPersonID+people)
					}
					if p.DateTime != e.Time || !strings.Contains(p.EmailAddress, "@") || !strings.HasSuffix(p.EmailAddress, ".com") ||
						len(p.CreditCard) != 19 || p.City == "" || len(p.State) != 2 || !strings.Contains(p.Name, " ") {
						t.Fatalf("event %d: bad person %+v", n, *p)
					}
				case KindAuction:
					a := &e.Auction
					sellers++
					if a.ID != FirstAuctionID+auctions {
						t.Fatalf("event %d: auction id %d, want %d", n, a.ID, FirstAuctionID+auctions)
					}
					hot := (lastPerson/100)*100 + FirstPersonID
					if a.Seller == hot {
						hotSeller++
					} else if a.Seller < personLo || a.Seller >= personHi {
						t.Fatalf("event %d: seller %d outside [%d, %d) and not the hot seller %d", n, a.Seller, personLo, personHi, hot)
					}
					if a.Category < 10 || a.Category > 14 || a.InitialBid < 100 || a.InitialBid > 100_000_000 ||
						a.Reserve <= a.InitialBid || a.Expires <= a.DateTime || a.DateTime != e.Time {
						t.Fatalf("event %d: bad auction %+v", n, *a)
					}
				case KindBid:
					b := &e.Bid
					bids++
					lastAuction := auctions - 1
					hot := (lastAuction/100)*100 + FirstAuctionID
					lo, hi := max(lastAuction-100, 0)+FirstAuctionID, lastAuction+1+10+FirstAuctionID
					if b.Auction == hot {
						hotAuction++
					} else if b.Auction < lo || b.Auction >= hi {
						t.Fatalf("event %d: bid's auction %d outside [%d, %d) and not the hot auction %d", n, b.Auction, lo, hi, hot)
					}
					hotB := (lastPerson/100)*100 + 1 + FirstPersonID
					if b.Bidder == hotB {
						hotBidder++
					} else if b.Bidder < personLo || b.Bidder >= personHi {
						t.Fatalf("event %d: bidder %d outside [%d, %d) and not the hot bidder %d", n, b.Bidder, personLo, personHi, hotB)
					}
					// extra: 100 - 32 bytes on average, 68 ± round(13.6).
					if l := int64(len(b.Extra)); l < 54 || l > 81 {
						t.Fatalf("event %d: extra of %d bytes", n, l)
					}
					extraLen += int64(len(b.Extra))
					if b.Price < 100 || b.Price > 100_000_000 || b.DateTime != e.Time || b.Channel == "" || !strings.HasPrefix(b.URL, "https://www.nexmark.com/") {
						t.Fatalf("event %d: bad bid %+v", n, *b)
					}
				}
			})
			// The hot value is chosen with probability 1 - 1/ratio; the
			// random choice hits it too, rarely (about 1 in 100 for
			// auctions, 1 in 1000 for people).
			checkRatio(t, "hot auctions", hotAuction, bids, 1-1/float64(tc.hotAuction), 0.012)
			checkRatio(t, "hot bidders", hotBidder, bids, 1-1/float64(tc.hotBidders), 0.005)
			checkRatio(t, "hot sellers", hotSeller, sellers, 1-1/float64(tc.hotSellers), 0.02)
			if avg := float64(extraLen) / float64(bids); math.Abs(avg-67.5) > 0.5 {
				t.Errorf("bids' extra: %.2f bytes on average, want about 67.5", avg)
			}
		})
	}
}

// checkRatio checks a fraction against want within 5 standard deviations
// below and 5 plus extra above (the random choice also hits the hot value
// now and then).
func checkRatio(t *testing.T, what string, hits, of int, want, extra float64) {
	t.Helper()
	got := float64(hits) / float64(of)
	sigma := math.Sqrt(max(want*(1-want), 1e-4) / float64(of))
	if got < want-5*sigma || got > want+5*sigma+extra {
		t.Errorf("%s: %.4f of %d, want %.4f (-%.4f, +%.4f)", what, got, of, want, 5*sigma, 5*sigma+extra)
	}
}

// TestDeterminism: an event depends on its number only, not on which
// generator made it or what it made before.
func TestDeterminism(t *testing.T) {
	g1, g2 := testGen(nil), testGen(nil)
	var a, b Event
	for _, n := range []int64{0, 1, 4, 49, 50, 1234567, 99, 3, 1234567, 0} {
		g1.Next(n, &a)
		for m := n + 10; m > n; m-- { // g2 makes other events first
			g2.Next(m, &b)
		}
		g2.Next(n, &b)
		same := a.Kind == b.Kind && a.Time == b.Time
		switch a.Kind {
		case KindPerson:
			same = same && a.Person == b.Person
		case KindAuction:
			same = same && a.Auction == b.Auction
		default:
			same = same && a.Bid == b.Bid
		}
		if !same {
			t.Fatalf("event %d differs:\n%+v\n%+v", n, a, b)
		}
	}
	g3 := testGen(func(c *Config) { c.Seed = 7 })
	g1.Next(10, &a)
	g3.Next(10, &b)
	if a.Bid == b.Bid {
		t.Errorf("another seed made the same bid %+v", a.Bid)
	}
}

// TestTimeline: at a constant rate, event n is at base + floor(n*1000/rate)
// ms; with two rates (SQUARE) each holds for half the period in turn.
func TestTimeline(t *testing.T) {
	c := DefaultConfig()
	c.BaseTime = testBase
	c.FirstEventRate, c.NextEventRate = 3000, 3000
	tl := NewTimeline(&c)
	for n := int64(0); n < 100_000; n += 7 {
		if got, want := tl.Time(n), testBase+n*1000/3000; got != want {
			t.Fatalf("event %d at %d, want %d", n, got, want)
		}
	}
	c.FirstEventRate, c.NextEventRate, c.RatePeriodSec = 1000, 2000, 4
	tl = NewTimeline(&c)
	// Seconds 0-2: 1000/s (events 0..1999); seconds 2-4: 2000/s (events
	// 2000..5999); then again from 4 s at event 6000.
	for _, tc := range []struct{ n, ms int64 }{
		{0, 0}, {1, 1}, {1999, 1999}, {2000, 2000}, {2001, 2000}, {2002, 2001}, {5999, 3999}, {6000, 4000}, {6001, 4001}, {8000, 6000}, {12000, 8000},
	} {
		if got := tl.Time(tc.n) - testBase; got != tc.ms {
			t.Errorf("square: event %d at +%d ms, want +%d", tc.n, got, tc.ms)
		}
	}
	c.Shape, c.RatePeriodSec = Sine, 10
	tl = NewTimeline(&c)
	prev := int64(math.MinInt64)
	var perSecond [10]int64
	for n := int64(0); n < 15_000; n++ {
		ts := tl.Time(n)
		if ts < prev {
			t.Fatalf("sine: event %d at %d before event %d at %d", n, ts, n-1, prev)
		}
		prev = ts
		perSecond[(ts-testBase)/1000]++
	}
	// Ten steps of 1 s: rate round(1500 - 500 cos(2 pi i / 10)).
	for i, got := range perSecond {
		want := int64(math.Round(1500 + -500*math.Cos(2*math.Pi*float64(i)/10)))
		if got != want {
			t.Errorf("sine: second %d has %d events, want %d", i, got, want)
		}
	}
}

// TestPrice compares the generator's prices with round(10^(6u) * 100)
// computed with math.Pow from the same u.
func TestPrice(t *testing.T) {
	g := testGen(nil)
	r := rng{s: 42}
	for i := range 1_000_000 {
		peek := r
		u := float64(peek.next()) / (1 << 64)
		want := math.Round(math.Pow(10, u*6) * 100)
		got := g.price(&r)
		if math.Abs(float64(got)-want) > 1 || (want < 1e6 && float64(got) != want) {
			t.Fatalf("draw %d: price %d, want %v", i, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.FirstEventRate = 0 }, "'first-event.rate' must be between 1"},
		{func(c *Config) { c.PersonProportion = 0 }, "auctions need people"},
		{func(c *Config) { c.AuctionProportion, c.PersonProportion = 0, 1 }, "bids need people and auctions"},
		{func(c *Config) { c.HotAuctionRatio = 0 }, "'bid.hot-ratio.auctions' must be between 1"},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// BenchmarkBid is the generator alone: one bid per op.
func BenchmarkBid(b *testing.B) {
	g := testGen(nil)
	var bid Bid
	n := int64(4)
	for b.Loop() {
		g.Bid(n, &bid)
		n++
		if n%50 == 0 {
			n += 4
		}
	}
}

// BenchmarkEvent is the generator alone over the mix of events.
func BenchmarkEvent(b *testing.B) {
	g := testGen(nil)
	var e Event
	n := int64(0)
	for b.Loop() {
		g.Next(n, &e)
		n++
	}
}

// TestDivider compares the divider with Go's division.
func TestDivider(t *testing.T) {
	r := rng{s: 5}
	for _, d := range []int64{1, 2, 3, 7, 50, 1000, 3000, 10_000_000, 1 << 40} {
		v := newDivider(d)
		for i := range 200_000 {
			n := r.int63n(1 << (i % 63))
			if i%5 == 0 {
				n = r.int63n(1 << 52)
			}
			q, m := v.divMod(n)
			if q != n/d || m != n%d {
				t.Fatalf("%d / %d: got %d rem %d, want %d rem %d", n, d, q, m, n/d, n%d)
			}
		}
	}
}

// TestBidPrefix: BidPrefix(upTo) gives the fields up to upTo the values
// Bid gives them, and leaves the later ones alone (and the channel and url
// with BidSkipChannel).
func TestBidPrefix(t *testing.T) {
	g := testGen(nil)
	for n := int64(4); n < 20000; n += 7 {
		if g.KindAt(n%g.CycleLength()) != KindBid {
			continue
		}
		var full Bid
		g.Bid(n, &full)
		for _, upTo := range []int{BidAuction, BidBidder, BidPrice, BidChannel, BidExtra,
			BidChannel | BidSkipChannel, BidExtra | BidSkipChannel} {
			got := Bid{Bidder: -1, Price: -1, Channel: "?", URL: "?", Extra: "?"}
			g.BidPrefix(n, &got, upTo)
			skip := upTo&BidSkipChannel != 0
			upTo &^= BidSkipChannel
			want := Bid{Auction: full.Auction, Bidder: -1, Price: -1, Channel: "?", URL: "?", DateTime: full.DateTime, Extra: "?"}
			if upTo >= BidBidder {
				want.Bidder = full.Bidder
			}
			if upTo >= BidPrice {
				want.Price = full.Price
			}
			if upTo >= BidChannel && !skip {
				want.Channel, want.URL = full.Channel, full.URL
			}
			if upTo >= BidExtra {
				want.Extra = full.Extra
			}
			if got != want {
				t.Fatalf("event %d up to %d:\n%+v\nwant\n%+v", n, upTo, got, want)
			}
		}
	}
}
