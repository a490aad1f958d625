package model

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Kind is an event's type, as the reference's event_type column: 0 person,
// 1 auction, 2 bid.
type Kind uint8

// Event kinds.
const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

// String names the kind as the table option 'nexmark.event-type' does.
func (k Kind) String() string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	}
	return "bid"
}

// Person is a new person (the reference's Person).
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     int64 // ms since the epoch
	Extra        string
}

// Auction is a new auction (the reference's Auction).
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    int64
	Expires     int64
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid (the reference's Bid).
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime int64
	Extra    string
}

// Event is one generated event: Kind says which of Person, Auction and Bid
// holds it (the others keep stale values).
type Event struct {
	Kind    Kind
	Time    int64
	Person  Person
	Auction Auction
	Bid     Bid
}

// Lists the reference draws from.
var (
	usStates   = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotNames   = [...]string{"Google", "Facebook", "Baidu", "Apple"}
)

// textLen is the length of the random text that extra fields are cut from.
const textLen = 1 << 20

// Tables are the read-only strings a generator draws from, built once per
// source from the seed and shared by its readers.
type Tables struct {
	text  string // textLen random lowercase letters
	names []string
	// channelText holds the numChannels "channel-<i>", each followed by
	// its url, and channels where each pair is: a bid's random channel
	// reads an 8-byte entry of an 80 KB table and one stretch of text,
	// not two string headers and two strings far apart.
	channelText string
	channels    []channelRef
	hotURLs     [len(hotNames)]string
	creditCard  [10000]string // "%04d"
	// exp2Hi[i] = 2^(i/1024) and exp2Lo[i] = 2^(i/2^20): 2^x for x's
	// fraction in steps of 2^-20, for prices.
	exp2Hi, exp2Lo [1024]float64
}

// NewTables builds the tables of seed.
func NewTables(seed uint64) *Tables {
	t := &Tables{}
	r := rng{s: mix(seed ^ 0x6a09e667f3bcc908)}
	buf := make([]byte, textLen)
	for i := range buf {
		buf[i] = byte('a' + r.intn(26))
	}
	t.text = string(buf)
	for _, f := range firstNames {
		for _, l := range lastNames {
			t.names = append(t.names, f+" "+l)
		}
	}
	for i := range t.hotURLs {
		t.hotURLs[i] = baseURL(&r)
	}
	names := make([]string, numChannels)
	urls := make([]string, numChannels)
	for i := range numChannels {
		url := baseURL(&r)
		if r.intn(10) > 0 {
			// The reference appends the channel's id with its bits reversed
			// (as Java's Math.abs, which leaves MinInt32 negative).
			v := int64(int32(bits.Reverse32(uint32(i))))
			if v < 0 && v != math.MinInt32 {
				v = -v
			}
			url += "&channel_id=" + strconv.FormatInt(v, 10)
		}
		names[i] = "channel-" + strconv.Itoa(i)
		urls[i] = url
	}
	t.channelText, t.channels = packChannels(names, urls)
	for i := range 1024 {
		t.exp2Hi[i] = math.Exp2(float64(i) / 1024)
		t.exp2Lo[i] = math.Exp2(float64(i) / (1 << 20))
	}
	for i := range t.creditCard {
		t.creditCard[i] = string([]byte{byte('0' + i/1000), byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)})
	}
	return t
}

// channelRef is where a channel's name and url are in the channel text:
// the name at off, the url right after it.
type channelRef struct {
	off       uint32
	name, url uint16 // lengths
}

// channel returns the name and url of channel i.
func (t *Tables) channel(i uint32) (name, url string) {
	c := t.channels[i]
	at, mid := int(c.off), int(c.off)+int(c.name)
	return t.channelText[at:mid], t.channelText[mid : mid+int(c.url)]
}

// packChannels returns the text of the names and urls, each name
// followed by its url, and where each pair is in it.
func packChannels(names, urls []string) (string, []channelRef) {
	n := 0
	for i := range names {
		n += len(names[i]) + len(urls[i])
	}
	var b strings.Builder
	b.Grow(n)
	refs := make([]channelRef, len(names))
	for i := range names {
		refs[i] = channelRef{off: uint32(b.Len()), name: uint16(len(names[i])), url: uint16(len(urls[i]))}
		b.WriteString(names[i])
		b.WriteString(urls[i])
	}
	return b.String(), refs
}

func baseURL(r *rng) string {
	var b strings.Builder
	b.WriteString("https://www.nexmark.com/")
	for range 3 {
		b.WriteString(nextString(r, nil, 5, '_'))
		b.WriteByte('/')
	}
	b.WriteString("item.htm?query=1")
	return b.String()
}

// Generator generates events of one configuration. It keeps scratch
// buffers, so each reader needs its own; the Tables may be shared.
type Generator struct {
	cfg   Config
	seed  uint64 // mixed Config.Seed
	total int64
	div   divider // by total
	tl    *Timeline
	tab   *Tables
	// eventsForAuctions is how many events it takes to generate
	// NumInFlightAuctions auctions (an auction's expected length).
	eventsForAuctions int64
	buf               []byte
}

// NewGenerator returns a generator of cfg (valid: see Validate) drawing
// from tab.
func NewGenerator(cfg Config, tab *Tables) *Generator {
	g := &Generator{cfg: cfg, seed: mix(cfg.Seed), total: cfg.total(), div: newDivider(cfg.total()), tl: NewTimeline(&cfg), tab: tab}
	if cfg.AuctionProportion > 0 {
		g.eventsForAuctions = cfg.NumInFlightAuctions * g.total / cfg.AuctionProportion
	}
	return g
}

// Timeline returns the generator's timeline.
func (g *Generator) Timeline() *Timeline { return g.tl }

// KindOf returns the kind of event n.
func (g *Generator) KindOf(n int64) Kind {
	_, r := g.div.divMod(n)
	return g.KindAt(r)
}

// CycleLength is the number of events in one cycle of kinds: the sum of
// the proportions.
func (g *Generator) CycleLength() int64 { return g.total }

// KindAt returns the kind of the events at offset r (in [0, CycleLength))
// of the cycle.
func (g *Generator) KindAt(r int64) Kind {
	switch {
	case r < g.cfg.PersonProportion:
		return KindPerson
	case r < g.cfg.PersonProportion+g.cfg.AuctionProportion:
		return KindAuction
	}
	return KindBid
}

// Next fills e with event n.
func (g *Generator) Next(n int64, e *Event) {
	e.Kind = g.KindOf(n)
	e.Time = g.tl.Time(n)
	switch e.Kind {
	case KindPerson:
		g.person(n, e.Time, &e.Person)
	case KindAuction:
		g.auction(n, e.Time, &e.Auction)
	default:
		g.bid(n, e.Time, &e.Bid)
	}
}

// Person fills p with event n, which must be a person.
func (g *Generator) Person(n int64, p *Person) { g.person(n, g.tl.Time(n), p) }

// Auction fills a with event n, which must be an auction.
func (g *Generator) Auction(n int64, a *Auction) { g.auction(n, g.tl.Time(n), a) }

// Bid fills b with event n, which must be a bid.
func (g *Generator) Bid(n int64, b *Bid) { g.bid(n, g.tl.Time(n), b) }

// The random fields of a bid in the order they are drawn: BidPrefix
// computes those up to one of them.
const (
	BidAuction = iota + 1
	BidBidder
	BidPrice
	BidChannel // and URL
	BidExtra   // all fields
)

// BidSkipChannel, or'ed into BidPrefix's upTo, leaves Channel and URL as
// they were. Their random numbers are still drawn, so the later fields
// get the same values: a reader that needs the extra but not the channel
// saves the look-up in the channel table (a cache miss per bid).
const BidSkipChannel = 1 << 8

// BidPrefix fills b's DateTime and its random fields up to upTo
// (BidAuction, ..., BidExtra, maybe with BidSkipChannel) in draw order, with the values Bid gives
// them; the later fields are left as they were. A reader that needs only
// the first fields saves drawing the others.
func (g *Generator) BidPrefix(n int64, b *Bid, upTo int) { g.bidUpTo(n, g.tl.Time(n), b, upTo) }

// eventRNG returns event n's random stream.
func (g *Generator) eventRNG(n int64) rng {
	return rng{s: mix(g.seed ^ uint64(n))}
}

// LastPerson returns the id (base 0) of the last person generated at or
// before event n: event n's own if it is a person.
func (g *Generator) LastPerson(n int64) int64 {
	epoch, off := g.div.divMod(n)
	return g.lastPerson(epoch, off)
}

// lastPerson is LastPerson of the event at offset off of cycle epoch.
func (g *Generator) lastPerson(epoch, off int64) int64 {
	if off >= g.cfg.PersonProportion {
		off = g.cfg.PersonProportion - 1
	}
	return epoch*g.cfg.PersonProportion + off
}

// LastAuction returns the id (base 0) of the last auction generated at or
// before event n: event n's own if it is an auction; -1 before the first.
func (g *Generator) LastAuction(n int64) int64 {
	epoch, off := g.div.divMod(n)
	return g.lastAuction(epoch, off)
}

// lastAuction is LastAuction of the event at offset off of cycle epoch.
func (g *Generator) lastAuction(epoch, off int64) int64 {
	switch {
	case off < g.cfg.PersonProportion:
		epoch--
		off = g.cfg.AuctionProportion - 1
	case off >= g.cfg.PersonProportion+g.cfg.AuctionProportion:
		off = g.cfg.AuctionProportion - 1
	default:
		off -= g.cfg.PersonProportion
	}
	return epoch*g.cfg.AuctionProportion + off
}

// randomPerson returns a person id (base 0) among the active people and a
// few not generated yet.
func (g *Generator) randomPerson(lastPerson int64, r *rng) int64 {
	people := lastPerson + 1
	active := min(people, g.cfg.NumActivePeople)
	return people - active + r.int63n(active+personIDLead)
}

// randomAuction returns an auction id (base 0) among those likely in
// flight and a few not generated yet.
func (g *Generator) randomAuction(last int64, r *rng) int64 {
	lo := max(last-g.cfg.NumInFlightAuctions, 0)
	return lo + r.int63n(last-lo+1+auctionIDLead)
}

func (g *Generator) person(n, ts int64, p *Person) {
	r := g.eventRNG(n)
	p.ID = g.LastPerson(n) + FirstPersonID
	p.Name = g.tab.names[r.intn(uint32(len(g.tab.names)))]
	g.buf = g.buf[:0]
	g.buf = appendString(&r, g.buf, 7, ' ')
	g.buf = append(g.buf, '@')
	g.buf = appendString(&r, g.buf, 5, ' ')
	g.buf = append(g.buf, ".com"...)
	p.EmailAddress = string(g.buf)
	g.buf = g.buf[:0]
	for i := range 4 {
		if i > 0 {
			g.buf = append(g.buf, ' ')
		}
		g.buf = append(g.buf, g.tab.creditCard[r.intn(10000)]...)
	}
	p.CreditCard = string(g.buf)
	p.City = usCities[r.intn(uint32(len(usCities)))]
	p.State = usStates[r.intn(uint32(len(usStates)))]
	p.DateTime = ts
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = g.extra(&r, int64(size), g.cfg.AvgPersonSize)
}

func (g *Generator) auction(n, ts int64, a *Auction) {
	r := g.eventRNG(n)
	epoch, off := g.div.divMod(n)
	lastPerson := g.lastPerson(epoch, off)
	a.ID = g.lastAuction(epoch, off) + FirstAuctionID
	if r.int63n(g.cfg.HotSellersRatio) > 0 {
		a.Seller = (lastPerson / hotRatio) * hotRatio
	} else {
		a.Seller = g.randomPerson(lastPerson, &r)
	}
	a.Seller += FirstPersonID
	a.Category = FirstCategoryID + int64(r.intn(numCategories))
	a.InitialBid = g.price(&r)
	// The auction lasts on average as long as it takes to generate
	// NumInFlightAuctions more auctions.
	horizon := g.tl.Time(n+g.eventsForAuctions) - ts
	a.Expires = ts + 1 + r.int63n(max(horizon*2, 1))
	a.ItemName = nextString(&r, &g.buf, 20, ' ')
	a.Description = nextString(&r, &g.buf, 100, ' ')
	a.Reserve = a.InitialBid + g.price(&r)
	a.DateTime = ts
	size := 8 + len(a.ItemName) + len(a.Description) + 8 + 8 + 8 + 8 + 8
	a.Extra = g.extra(&r, int64(size), g.cfg.AvgAuctionSize)
}

func (g *Generator) bid(n, ts int64, b *Bid) { g.bidUpTo(n, ts, b, BidExtra) }

func (g *Generator) bidUpTo(n, ts int64, b *Bid, upTo int) {
	skipChannel := upTo&BidSkipChannel != 0
	upTo &^= BidSkipChannel
	b.DateTime = ts
	r := g.eventRNG(n)
	epoch, off := g.div.divMod(n)
	lastAuction, lastPerson := g.lastAuction(epoch, off), g.lastPerson(epoch, off)
	if r.int63n(g.cfg.HotAuctionRatio) > 0 {
		b.Auction = (lastAuction / hotRatio) * hotRatio
	} else {
		b.Auction = g.randomAuction(lastAuction, &r)
	}
	b.Auction += FirstAuctionID
	if upTo < BidBidder {
		return
	}
	if r.int63n(g.cfg.HotBiddersRatio) > 0 {
		b.Bidder = (lastPerson/hotRatio)*hotRatio + 1
	} else {
		b.Bidder = g.randomPerson(lastPerson, &r)
	}
	b.Bidder += FirstPersonID
	if upTo < BidPrice {
		return
	}
	b.Price = g.price(&r)
	if upTo < BidChannel {
		return
	}
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(uint32(len(hotNames)))
		if !skipChannel {
			b.Channel, b.URL = hotNames[i], g.tab.hotURLs[i]
		}
	} else {
		i := r.intn(numChannels)
		if !skipChannel {
			b.Channel, b.URL = g.tab.channel(i)
		}
	}
	if upTo < BidExtra {
		return
	}
	b.Extra = g.extra(&r, 8+8+8+8, g.cfg.AvgBidSize)
}

// extra returns a random string such that size plus its length is avg on
// average (uniform within ±20% of what is missing).
func (g *Generator) extra(r *rng, size, avg int64) string {
	if size > avg {
		return ""
	}
	want := avg - size
	delta := int64(math.Floor(float64(want)*0.2 + 0.5))
	n := want - delta
	if delta > 0 {
		n += r.int63n(2 * delta)
	}
	if n < textLen/2 {
		off := r.int63n(textLen - n)
		return g.tab.text[off : off+n]
	}
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte('a' + r.intn(26))
	}
	return string(buf)
}

// nextString returns a random string of 3 to maxLen-1 characters, each a
// lowercase letter or (one in 13) special, trimmed of spaces at both ends.
// buf is scratch space (nil: allocate).
func nextString(r *rng, buf *[]byte, maxLen int, special byte) string {
	var b []byte
	if buf != nil {
		b = (*buf)[:0]
	}
	b = appendString(r, b, maxLen, special)
	if buf != nil {
		*buf = b
	}
	return string(b)
}

// appendString appends nextString's string to b.
func appendString(r *rng, b []byte, maxLen int, special byte) []byte {
	start := len(b)
	n := minStringLength + int(r.intn(uint32(maxLen-minStringLength)))
	for range n {
		if r.intn(13) == 0 {
			b = append(b, special)
		} else {
			b = append(b, byte('a'+r.intn(26)))
		}
	}
	s := b[start:]
	lo, hi := 0, len(s)
	for lo < hi && s[lo] == ' ' {
		lo++
	}
	for hi > lo && s[hi-1] == ' ' {
		hi--
	}
	copy(s, s[lo:hi])
	return b[:start+hi-lo]
}

// rng is splitmix64: a fast random stream that an event seeds from its
// number.
type rng struct{ s uint64 }

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n), n > 0 (multiply-shift; the bias is
// below n / 2^32).
func (r *rng) intn(n uint32) uint32 {
	return uint32((r.next() >> 32) * uint64(n) >> 32)
}

// int63n returns a number in [0, n), n > 0.
func (r *rng) int63n(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// priceScale is log2(10^6) * 2^40: a price is 100 * 2^x for x = u *
// log2(10^6), and mulhi(R, priceScale) is x in fixed point with 40
// fraction bits for u = R / 2^64.
var priceScale = uint64(6 * math.Log2(10) * (1 << 40))

// price returns round(10^(6u) * 100) for u uniform in [0, 1): a price in
// cents between $1 and $1,000,000, uniform in its number of digits. It
// computes 2^x from x's integer part, two tables for the next 20 bits
// and a first-order term for the rest (relative error below 1e-12), with
// integer arithmetic on x (conversions between floats and integers make a
// slow chain).
func (g *Generator) price(r *rng) int64 {
	x, _ := bits.Mul64(r.next(), priceScale)
	rest := float64(int64(x&(1<<20-1))) * (1.0 / (1 << 40))
	v := g.tab.exp2Hi[(x>>30)&1023] * g.tab.exp2Lo[(x>>20)&1023] * (1 + rest*math.Ln2)
	v *= math.Float64frombits((1023 + x>>40) << 52) // 2^(integer part)
	return int64(v*100 + 0.5)
}
