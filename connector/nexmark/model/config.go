// Package model is the Nexmark event generator: people, auctions and bids
// as the reference generator of the nexmark/nexmark repository models them
// (GeneratorConfig, NexmarkGenerator and the model generators), written for
// Weir so that an event is a pure function of its event number.
//
// Event n (0-based, global over all source subtasks) is a person, an
// auction or a bid by n mod (person + auction + bid proportion); its ids
// follow from n as in the reference (the n-th person has id 1000 + the
// number of people before it, and so on); its random fields come from a
// random stream seeded by n; its time is the base time plus n events at the
// configured rate. So the same event number always yields the same event,
// whichever subtask generates it and however often.
package model

import (
	"errors"
	"fmt"
	"math"
)

// Ids and categories start at these values, as in the reference, so that
// small event counts still find matches.
const (
	FirstAuctionID  = 1000
	FirstPersonID   = 1000
	FirstCategoryID = 10
)

// Constants of the reference's model that its connector does not expose.
const (
	// personIDLead and auctionIDLead: random person and auction ids may lie
	// this far beyond the last one generated.
	personIDLead  = 10
	auctionIDLead = 10
	// hotRatio: the hot seller, bidder and auction is the first (bidder:
	// the second) of each block of this many ids.
	hotRatio = 100
	// numCategories: categories are FirstCategoryID + [0, numCategories).
	numCategories = 5
	// minStringLength is the shortest random name or description before
	// trimming.
	minStringLength = 3
	// hotChannelsRatio: a bid comes from one of the hot channels with
	// probability 1 - 1/hotChannelsRatio, else from one of numChannels.
	hotChannelsRatio = 2
	numChannels      = 10_000
	// sineSteps approximates a sine rate shape by this many steps.
	sineSteps = 10
)

// Shape is how the event rate moves between first-event.rate and
// next-event.rate over rate.period.
type Shape uint8

// Rate shapes, as the reference's RateShape.
const (
	// Square alternates the two rates, each for half the period.
	Square Shape = iota
	// Sine moves from the first rate to the next and back along a cosine,
	// in sineSteps steps.
	Sine
)

// Config is the generator's model: the reference's NexmarkConfiguration
// as far as it shapes events.
type Config struct {
	// FirstEventRate and NextEventRate are events per second over all
	// subtasks; equal rates make a constant rate.
	FirstEventRate, NextEventRate int64
	// Shape and RatePeriodSec say how the rate moves between the two.
	Shape         Shape
	RatePeriodSec int64
	// Proportions of people, auctions and bids.
	PersonProportion, AuctionProportion, BidProportion int64
	// Average sizes in bytes; the extra field pads events to them.
	AvgPersonSize, AvgAuctionSize, AvgBidSize int64
	// Hot ratios: a bid is for a hot auction with probability
	// 1 - 1/HotAuctionRatio, by a hot bidder with 1 - 1/HotBiddersRatio;
	// an auction is by a hot seller with 1 - 1/HotSellersRatio.
	HotAuctionRatio, HotBiddersRatio, HotSellersRatio int64
	// NumInFlightAuctions and NumActivePeople bound the random auction and
	// person ids that bids and auctions refer to.
	NumInFlightAuctions, NumActivePeople int64
	// BaseTime is the time of event 0, in milliseconds since the epoch.
	BaseTime int64
	// Seed seeds the random fields (0 is as good a seed as any).
	Seed uint64
}

// DefaultConfig returns the reference's defaults: 10,000 events/s, 1:3:46,
// sizes 200/500/100 bytes, hot ratios 2/4/4, 100 auctions in flight, 1,000
// active people.
func DefaultConfig() Config {
	return Config{
		FirstEventRate: 10_000, NextEventRate: 10_000, Shape: Square, RatePeriodSec: 600,
		PersonProportion: 1, AuctionProportion: 3, BidProportion: 46,
		AvgPersonSize: 200, AvgAuctionSize: 500, AvgBidSize: 100,
		HotAuctionRatio: 2, HotBiddersRatio: 4, HotSellersRatio: 4,
		NumInFlightAuctions: 100, NumActivePeople: 1000,
	}
}

// maxSize bounds the average sizes, so that an extra field stays a sane
// allocation.
const maxSize = 1 << 20

// Validate reports the first setting that cannot work, naming it as the
// nexmark connector's option does.
func (c *Config) Validate() error {
	checks := []struct {
		name      string
		v, lo, hi int64
	}{
		{"first-event.rate", c.FirstEventRate, 1, 1 << 40},
		{"next-event.rate", c.NextEventRate, 1, 1 << 40},
		{"rate.period (seconds)", c.RatePeriodSec, 1, 1 << 31},
		{"person.proportion", c.PersonProportion, 0, 1 << 20},
		{"auction.proportion", c.AuctionProportion, 0, 1 << 20},
		{"bid.proportion", c.BidProportion, 0, 1 << 20},
		{"person.avg-size", c.AvgPersonSize, 0, maxSize},
		{"auction.avg-size", c.AvgAuctionSize, 0, maxSize},
		{"bid.avg-size", c.AvgBidSize, 0, maxSize},
		{"bid.hot-ratio.auctions", c.HotAuctionRatio, 1, 1 << 31},
		{"bid.hot-ratio.bidders", c.HotBiddersRatio, 1, 1 << 31},
		{"auction.hot-ratio.sellers", c.HotSellersRatio, 1, 1 << 31},
		{"auctions in flight", c.NumInFlightAuctions, 1, 1 << 31},
		{"active people", c.NumActivePeople, 1, 1 << 31},
	}
	for _, ch := range checks {
		if ch.v < ch.lo || ch.v > ch.hi {
			return fmt.Errorf("'%s' must be between %d and %d, got %d", ch.name, ch.lo, ch.hi, ch.v)
		}
	}
	if c.Shape != Square && c.Shape != Sine {
		return errors.New("unknown rate shape")
	}
	if c.PersonProportion+c.AuctionProportion+c.BidProportion == 0 {
		return errors.New("the proportions of people, auctions and bids are all 0")
	}
	// Auctions need someone to sell them and bids something to bid on.
	if c.AuctionProportion > 0 && c.PersonProportion == 0 {
		return errors.New("auctions need people: 'person.proportion' is 0")
	}
	if c.BidProportion > 0 && (c.PersonProportion == 0 || c.AuctionProportion == 0) {
		return errors.New("bids need people and auctions: 'person.proportion' and 'auction.proportion' must not be 0")
	}
	return nil
}

// total is the sum of the proportions: the length of the event cycle.
func (c *Config) total() int64 { return c.PersonProportion + c.AuctionProportion + c.BidProportion }

// Timeline maps event numbers to event times.
type Timeline struct {
	base int64
	// steps of one epoch: each lasts stepMs at rate events per second.
	rates  []int64
	div    divider // by rates[0], for a constant rate
	stepMs int64
	// events of each step and of a whole epoch.
	stepEvents  []int64
	epochEvents int64
}

// NewTimeline returns the timeline of c. With equal rates, event n is at
// BaseTime + floor(n * 1000 / rate) ms. Otherwise the rate changes every
// step of ceil(RatePeriodSec / steps) seconds (2 steps for Square, 10 for
// Sine) and the pattern repeats: within a step at rate r, the k-th event of
// the step is at the step's start + floor(k * 1000 / r) ms.
func NewTimeline(c *Config) *Timeline {
	t := &Timeline{base: c.BaseTime}
	if c.FirstEventRate == c.NextEventRate {
		t.rates = []int64{c.FirstEventRate}
		t.div = newDivider(c.FirstEventRate)
		return t
	}
	switch c.Shape {
	case Sine:
		mid := float64(c.FirstEventRate+c.NextEventRate) / 2
		amp := float64(c.FirstEventRate-c.NextEventRate) / 2
		for i := range sineSteps {
			r := int64(math.Round(mid + amp*math.Cos(2*math.Pi*float64(i)/sineSteps)))
			t.rates = append(t.rates, max(r, 1))
		}
	default:
		t.rates = []int64{c.FirstEventRate, c.NextEventRate}
	}
	n := int64(len(t.rates))
	stepSec := (c.RatePeriodSec + n - 1) / n
	t.stepMs = stepSec * 1000
	for _, r := range t.rates {
		t.stepEvents = append(t.stepEvents, stepSec*r)
		t.epochEvents += stepSec * r
	}
	return t
}

// Base returns the time of event 0.
func (t *Timeline) Base() int64 { return t.base }

// Time returns the time of event n, in milliseconds since the epoch.
func (t *Timeline) Time(n int64) int64 {
	if len(t.rates) == 1 {
		q, r := t.div.divMod(n)
		s, _ := t.div.divMod(r * 1000)
		return t.base + q*1000 + s
	}
	epoch, k := n/t.epochEvents, n%t.epochEvents
	ms := t.base + epoch*int64(len(t.rates))*t.stepMs
	for i, e := range t.stepEvents {
		if k < e {
			return ms + offsetMs(k, t.rates[i])
		}
		k -= e
		ms += t.stepMs
	}
	return ms // not reached: k < epochEvents
}

// offsetMs is floor(n * 1000 / rate) without overflow.
func offsetMs(n, rate int64) int64 {
	return (n/rate)*1000 + (n%rate)*1000/rate
}

// divider divides non-negative numbers by a fixed positive d with a
// multiplication by 1/d and a correction, exact for n below 2^52 (a
// hardware division beyond that): cheaper than a division per event.
type divider struct {
	d   int64
	inv float64
}

func newDivider(d int64) divider { return divider{d: d, inv: 1 / float64(d)} }

// divMod returns n / d and n % d.
func (v divider) divMod(n int64) (int64, int64) {
	if n >= 1<<52 {
		return n / v.d, n % v.d
	}
	q := int64(float64(n) * v.inv)
	r := n - q*v.d
	for r < 0 {
		q--
		r += v.d
	}
	for r >= v.d {
		q++
		r -= v.d
	}
	return q, r
}
