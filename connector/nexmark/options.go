package nexmark

import (
	"fmt"
	"strings"
	"time"

	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/connector/nexmark/model"
)

// config is a nexmark table's parsed options.
type config struct {
	model model.Config
	// events is 'events.num': the total number of events; 0 unbounded.
	events int64
	// baseTime is 'base-time' in ms; set says whether it was given.
	baseTime    int64
	baseTimeSet bool
	rateLimited bool
	// kind is 'nexmark.event-type': the kind of events the table holds
	// when perKind (a Weir extension).
	kind    model.Kind
	perKind bool
}

// Option keys, as the reference's connector names them, plus Weir's
// 'base-time' and 'nexmark.event-type'.
var optionKeys = []string{
	"first-event.rate", "next-event.rate", "rate.shape", "rate.period", "rate.limited", "events.num",
	"person.proportion", "auction.proportion", "bid.proportion",
	"person.avg-size", "auction.avg-size", "bid.avg-size",
	"bid.hot-ratio.auctions", "bid.hot-ratio.bidders", "auction.hot-ratio.sellers",
	"base-time", "nexmark.event-type",
}

func parseConfig(opts map[string]string) (*config, error) {
	if err := options.CheckKnown("nexmark", opts, optionKeys); err != nil {
		return nil, err
	}
	c := &config{model: model.DefaultConfig()}
	m := &c.model
	ints := []struct {
		key string
		dst *int64
	}{
		{"first-event.rate", &m.FirstEventRate},
		{"next-event.rate", &m.NextEventRate},
		{"person.proportion", &m.PersonProportion},
		{"auction.proportion", &m.AuctionProportion},
		{"bid.proportion", &m.BidProportion},
		{"bid.hot-ratio.auctions", &m.HotAuctionRatio},
		{"bid.hot-ratio.bidders", &m.HotBiddersRatio},
		{"auction.hot-ratio.sellers", &m.HotSellersRatio},
		{"events.num", &c.events},
	}
	for _, o := range ints {
		v, err := options.Int(opts, o.key, *o.dst)
		if err != nil {
			return nil, err
		}
		*o.dst = v
	}
	// The reference takes 'next-event.rate' equal to the first by default.
	if _, ok := opts["next-event.rate"]; !ok {
		m.NextEventRate = m.FirstEventRate
	}
	for _, o := range []struct {
		key string
		dst *int64
	}{{"person.avg-size", &m.AvgPersonSize}, {"auction.avg-size", &m.AvgAuctionSize}, {"bid.avg-size", &m.AvgBidSize}} {
		v, ok := opts[o.key]
		if !ok {
			continue
		}
		n, err := confval.MemorySize(v)
		if err != nil {
			return nil, fmt.Errorf("option '%s': invalid value '%s': %w", o.key, v, err)
		}
		*o.dst = n
	}
	shape, err := options.OneOf(opts, "rate.shape", "SQUARE", "SQUARE", "SINE")
	if err != nil {
		return nil, err
	}
	if shape == "SINE" {
		m.Shape = model.Sine
	}
	if v, ok := opts["rate.period"]; ok {
		d, err := confval.Duration(v)
		if err != nil {
			return nil, fmt.Errorf("option 'rate.period': invalid value '%s': %w", v, err)
		}
		if d < time.Second {
			return nil, fmt.Errorf("option 'rate.period': must be at least 1 s, got '%s'", v)
		}
		m.RatePeriodSec = int64(d / time.Second)
	}
	if c.rateLimited, err = options.Bool(opts, "rate.limited", false); err != nil {
		return nil, err
	}
	if c.events < 0 {
		return nil, fmt.Errorf("option 'events.num': must not be negative, got %d", c.events)
	}
	if v, ok := opts["base-time"]; ok {
		ms, err := options.ParseTimestamp([]byte(strings.TrimSpace(v)))
		if err != nil {
			return nil, fmt.Errorf("option 'base-time': invalid value '%s': expected a timestamp 'yyyy-mm-dd hh:mm:ss[.fff]' (UTC)", v)
		}
		c.baseTime, c.baseTimeSet = ms, true
	}
	if v, ok := opts["nexmark.event-type"]; ok {
		k, ok := kindNamed(strings.TrimSpace(v))
		if !ok {
			return nil, fmt.Errorf("option 'nexmark.event-type': invalid value '%s': expected one of 'person', 'auction', 'bid'", v)
		}
		c.kind, c.perKind = k, true
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("nexmark: %w", err)
	}
	if c.perKind {
		prop := map[model.Kind]int64{model.KindPerson: m.PersonProportion, model.KindAuction: m.AuctionProportion, model.KindBid: m.BidProportion}[c.kind]
		if prop == 0 {
			return nil, fmt.Errorf("option 'nexmark.event-type' = '%s': the table would be empty, '%s.proportion' is 0", c.kind, c.kind)
		}
	}
	return c, nil
}
