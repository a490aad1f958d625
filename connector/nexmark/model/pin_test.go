package model

import (
	"encoding/binary"
	"hash"
	"hash/fnv"
	"testing"
)

// TestEventsPinned pins the generator's output: a hash of every field of
// the first 100,000 events (all kinds), of 100,000 bids from event
// 10,000,000 on, and of BidPrefix's fields at each cut. A change to the
// generator's speed must not change a single value; a change of the
// model must update the hashes on purpose.
func TestEventsPinned(t *testing.T) {
	g := testGen(nil)
	pin := func(name string, want uint64, each func(h *hasher)) {
		h := &hasher{h: fnv.New64a()}
		each(h)
		if got := h.h.Sum64(); got != want {
			t.Errorf("%s: hash %#x, want %#x", name, got, want)
		}
	}
	var e Event
	pin("events 0..99999", 0x5d2afca034797b5e, func(h *hasher) {
		for n := int64(0); n < 100_000; n++ {
			g.Next(n, &e)
			h.event(&e)
		}
	})
	pin("events 10M..10.1M", 0x62a62f8a73b4f971, func(h *hasher) {
		for n := int64(10_000_000); n < 10_100_000; n++ {
			g.Next(n, &e)
			h.event(&e)
		}
	})
	pin("bid prefixes", 0xc51ffd93c089800e, func(h *hasher) {
		var b Bid
		for n := int64(0); n < 100_000; n++ {
			if g.KindOf(n) != KindBid {
				continue
			}
			upTo := BidAuction + int(n%BidExtra)
			b = Bid{}
			g.BidPrefix(n, &b, upTo)
			h.ints(int64(upTo))
			h.bid(&b)
		}
	})
}

type hasher struct {
	h   hash.Hash64
	buf [8]byte
}

func (h *hasher) ints(vs ...int64) {
	for _, v := range vs {
		binary.LittleEndian.PutUint64(h.buf[:], uint64(v))
		h.h.Write(h.buf[:])
	}
}

func (h *hasher) strs(ss ...string) {
	for _, s := range ss {
		h.ints(int64(len(s)))
		h.h.Write([]byte(s))
	}
}

func (h *hasher) bid(b *Bid) {
	h.ints(b.Auction, b.Bidder, b.Price, b.DateTime)
	h.strs(b.Channel, b.URL, b.Extra)
}

func (h *hasher) event(e *Event) {
	h.ints(int64(e.Kind), e.Time)
	switch e.Kind {
	case KindPerson:
		p := &e.Person
		h.ints(p.ID, p.DateTime)
		h.strs(p.Name, p.EmailAddress, p.CreditCard, p.City, p.State, p.Extra)
	case KindAuction:
		a := &e.Auction
		h.ints(a.ID, a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category)
		h.strs(a.ItemName, a.Description, a.Extra)
	default:
		h.bid(&e.Bid)
	}
}

// BenchmarkBidChannelText is a bid and a read of its channel's and url's
// text, as q21 and q22 do (the text of the 10,000 channels spans more
// than the L1 and L2 caches).
func BenchmarkBidChannelText(b *testing.B) {
	g := testGen(nil)
	var bid Bid
	n := int64(4)
	sum := 0
	for b.Loop() {
		g.BidPrefix(n, &bid, BidChannel)
		sum += int(bid.Channel[len(bid.Channel)-1]) + int(bid.URL[30])
		n++
		if n%50 == 0 {
			n += 4
		}
	}
	if sum == 0 {
		b.Fatal("no text read")
	}
}
