package nexmark

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/types"
)

// field is one value of an event that a column can hold.
type field uint8

const (
	fEventType    field = iota
	fEventTypeBig       // event_type declared BIGINT
	fDateTime           // the event's time, whatever its kind

	fPersonID
	fPersonName
	fPersonEmailAddress
	fPersonCreditCard
	fPersonCity
	fPersonState
	fPersonDateTime
	fPersonExtra

	fAuctionID
	fAuctionItemName
	fAuctionDescription
	fAuctionInitialBid
	fAuctionReserve
	fAuctionDateTime
	fAuctionExpires
	fAuctionSeller
	fAuctionCategory
	fAuctionExtra

	fBidAuction
	fBidBidder
	fBidPrice
	fBidChannel
	fBidURL
	fBidDateTime
	fBidExtra

	fRow // a ROW of fields of one kind (column.sub)
)

// fieldDef names a field of an event kind and its type, in the order of
// the ROW types of the reference's ddl_gen.sql.
type fieldDef struct {
	name string
	kind types.Kind
	f    field
}

var kindFields = [3][]fieldDef{
	model.KindPerson: {
		{"id", types.KindBigInt, fPersonID},
		{"name", types.KindVarchar, fPersonName},
		{"emailAddress", types.KindVarchar, fPersonEmailAddress},
		{"creditCard", types.KindVarchar, fPersonCreditCard},
		{"city", types.KindVarchar, fPersonCity},
		{"state", types.KindVarchar, fPersonState},
		{"dateTime", types.KindTimestamp, fPersonDateTime},
		{"extra", types.KindVarchar, fPersonExtra},
	},
	model.KindAuction: {
		{"id", types.KindBigInt, fAuctionID},
		{"itemName", types.KindVarchar, fAuctionItemName},
		{"description", types.KindVarchar, fAuctionDescription},
		{"initialBid", types.KindBigInt, fAuctionInitialBid},
		{"reserve", types.KindBigInt, fAuctionReserve},
		{"dateTime", types.KindTimestamp, fAuctionDateTime},
		{"expires", types.KindTimestamp, fAuctionExpires},
		{"seller", types.KindBigInt, fAuctionSeller},
		{"category", types.KindBigInt, fAuctionCategory},
		{"extra", types.KindVarchar, fAuctionExtra},
	},
	model.KindBid: {
		{"auction", types.KindBigInt, fBidAuction},
		{"bidder", types.KindBigInt, fBidBidder},
		{"price", types.KindBigInt, fBidPrice},
		{"channel", types.KindVarchar, fBidChannel},
		{"url", types.KindVarchar, fBidURL},
		{"dateTime", types.KindTimestamp, fBidDateTime},
		{"extra", types.KindVarchar, fBidExtra},
	},
}

// column is how one declared column is filled: chosen when the source is
// built, so that filling a row is a switch per column, with no lookups.
type column struct {
	f field
	// sub are the fields of a ROW column (f == fRow), in the ROW's order.
	sub []field
	// only: the column holds a value for events of this kind and is NULL
	// for the others (anyKind: every event).
	only model.Kind
}

const anyKind = model.Kind(255)

// fieldNames lists the fields of kind k, for messages.
func fieldNames(k model.Kind) string {
	var names []string
	for _, d := range kindFields[k] {
		names = append(names, d.name)
	}
	return strings.Join(names, ", ")
}

// lookupField finds a field of kind k by name (exactly, else ignoring case).
func lookupField(k model.Kind, name string) (fieldDef, bool) {
	for _, d := range kindFields[k] {
		if d.name == name {
			return d, true
		}
	}
	for _, d := range kindFields[k] {
		if strings.EqualFold(d.name, name) {
			return d, true
		}
	}
	return fieldDef{}, false
}

// kindNamed returns the kind named s ("person", "auction", "bid").
func kindNamed(s string) (model.Kind, bool) {
	for _, k := range []model.Kind{model.KindPerson, model.KindAuction, model.KindBid} {
		if strings.EqualFold(s, k.String()) {
			return k, true
		}
	}
	return 0, false
}

// resolveColumns maps the declared columns to fields. With kind set (the
// table option 'nexmark.event-type'), the columns are fields of that kind
// by name. Without, the table is the reference's: event_type, the
// event's dateTime, and the ROW columns person, auction and bid, NULL
// unless the event is of that kind (a ROW may declare its fields in any
// order, and fewer of them); also, flat, the fields of those ROWs as
// columns named `person.id`, `bid.price`, ....
func resolveColumns(schema types.Schema, kind model.Kind, perKind bool) ([]column, error) {
	cols := make([]column, len(schema.Columns))
	for i, c := range schema.Columns {
		var def fieldDef
		only := anyKind
		switch {
		case perKind:
			d, ok := lookupField(kind, c.Name)
			if !ok {
				return nil, fmt.Errorf("column %s: a %s has no field '%s' (its fields: %s)", c.Name, kind, c.Name, fieldNames(kind))
			}
			def = d
		case strings.EqualFold(c.Name, "event_type"):
			def = fieldDef{"event_type", types.KindInt, fEventType}
		case strings.EqualFold(c.Name, "dateTime"):
			def = fieldDef{"dateTime", types.KindTimestamp, fDateTime}
		default:
			prefix, name, dotted := strings.Cut(c.Name, ".")
			k, isKind := kindNamed(prefix)
			if !isKind {
				return nil, fmt.Errorf("column %s: the nexmark table has the columns event_type, person, auction, bid and dateTime "+
					"(person, auction and bid fields as `person.id`, `bid.price`, ...; or set 'nexmark.event-type' to read one kind of event with its fields as columns)", c.Name)
			}
			if !dotted {
				col, err := rowColumn(c, k)
				if err != nil {
					return nil, err
				}
				cols[i] = col
				continue
			}
			d, ok := lookupField(k, name)
			if !ok {
				return nil, fmt.Errorf("column %s: a %s has no field '%s' (its fields: %s)", c.Name, k, name, fieldNames(k))
			}
			if c.Type.NotNull {
				return nil, fmt.Errorf("column %s: cannot be NOT NULL: it is NULL for events that are not a %s", c.Name, k)
			}
			def, only = d, k
		}
		if !typeFits(c.Type.Kind, def.kind) {
			return nil, fmt.Errorf("column %s: the field %s is %s, declared %s", c.Name, def.name, def.kind.SQL(), c.Type.Kind.SQL())
		}
		if def.f == fEventType && c.Type.Kind == types.KindBigInt {
			def.f = fEventTypeBig
		}
		cols[i] = column{f: def.f, only: only}
	}
	return cols, nil
}

// rowColumn resolves the ROW column c holding the fields of events of kind k.
func rowColumn(c types.Column, k model.Kind) (column, error) {
	if c.Type.Kind != types.KindRow {
		return column{}, fmt.Errorf("column %s: the %s column is a ROW<%s>, declared %s", c.Name, k, fieldNames(k), c.Type.SQL())
	}
	if c.Type.NotNull {
		return column{}, fmt.Errorf("column %s: cannot be NOT NULL: it is NULL for events that are not a %s", c.Name, k)
	}
	col := column{f: fRow, only: k}
	for _, sf := range c.Type.Fields() {
		d, ok := lookupField(k, sf.Name)
		if !ok {
			return column{}, fmt.Errorf("column %s: a %s has no field '%s' (its fields: %s)", c.Name, k, sf.Name, fieldNames(k))
		}
		if !typeFits(sf.Type.Kind, d.kind) {
			return column{}, fmt.Errorf("column %s: the field %s is %s, declared %s", c.Name, d.name, d.kind.SQL(), sf.Type.SQL())
		}
		col.sub = append(col.sub, d.f)
	}
	return col, nil
}

// typeFits reports whether a column of kind declared can hold a field of
// kind k: the same kind, or event_type declared BIGINT.
func typeFits(declared, k types.Kind) bool {
	return declared == k || (k == types.KindInt && declared == types.KindBigInt)
}

// fill writes event e into row, one value per column; b builds the ROW
// values.
func fill(row []types.Value, cols []column, e *model.Event, b *types.RowBuilder) {
	for i := range cols {
		c := &cols[i]
		if c.only != anyKind && c.only != e.Kind {
			row[i] = types.Value{}
			continue
		}
		switch c.f {
		case fBidAuction:
			row[i] = types.BigIntValue(e.Bid.Auction)
		case fBidBidder:
			row[i] = types.BigIntValue(e.Bid.Bidder)
		case fBidPrice:
			row[i] = types.BigIntValue(e.Bid.Price)
		case fBidChannel:
			row[i] = types.StringValue(e.Bid.Channel)
		case fBidURL:
			row[i] = types.StringValue(e.Bid.URL)
		case fBidDateTime:
			row[i] = types.TimestampValue(e.Bid.DateTime)
		case fBidExtra:
			row[i] = types.StringValue(e.Bid.Extra)
		case fRow:
			b.Begin()
			for _, f := range c.sub {
				b.Add(value(f, e))
			}
			row[i] = b.Finish(types.KindRow)
		default:
			row[i] = value(c.f, e)
		}
	}
}

// value returns field f of e.
func value(f field, e *model.Event) types.Value {
	switch f {
	case fEventType:
		return types.IntValue(int64(e.Kind))
	case fEventTypeBig:
		return types.BigIntValue(int64(e.Kind))
	case fDateTime:
		return types.TimestampValue(e.Time)
	case fPersonID:
		return types.BigIntValue(e.Person.ID)
	case fPersonName:
		return types.StringValue(e.Person.Name)
	case fPersonEmailAddress:
		return types.StringValue(e.Person.EmailAddress)
	case fPersonCreditCard:
		return types.StringValue(e.Person.CreditCard)
	case fPersonCity:
		return types.StringValue(e.Person.City)
	case fPersonState:
		return types.StringValue(e.Person.State)
	case fPersonDateTime:
		return types.TimestampValue(e.Person.DateTime)
	case fPersonExtra:
		return types.StringValue(e.Person.Extra)
	case fAuctionID:
		return types.BigIntValue(e.Auction.ID)
	case fAuctionItemName:
		return types.StringValue(e.Auction.ItemName)
	case fAuctionDescription:
		return types.StringValue(e.Auction.Description)
	case fAuctionInitialBid:
		return types.BigIntValue(e.Auction.InitialBid)
	case fAuctionReserve:
		return types.BigIntValue(e.Auction.Reserve)
	case fAuctionDateTime:
		return types.TimestampValue(e.Auction.DateTime)
	case fAuctionExpires:
		return types.TimestampValue(e.Auction.Expires)
	case fAuctionSeller:
		return types.BigIntValue(e.Auction.Seller)
	case fAuctionCategory:
		return types.BigIntValue(e.Auction.Category)
	case fAuctionExtra:
		return types.StringValue(e.Auction.Extra)
	case fBidAuction:
		return types.BigIntValue(e.Bid.Auction)
	case fBidBidder:
		return types.BigIntValue(e.Bid.Bidder)
	case fBidPrice:
		return types.BigIntValue(e.Bid.Price)
	case fBidChannel:
		return types.StringValue(e.Bid.Channel)
	case fBidURL:
		return types.StringValue(e.Bid.URL)
	case fBidDateTime:
		return types.TimestampValue(e.Bid.DateTime)
	case fBidExtra:
		return types.StringValue(e.Bid.Extra)
	}
	return types.Value{}
}

// bidFieldsRead returns the last of a bid's random fields, in the order
// the generator draws them (model.BidAuction ... model.BidExtra), that
// cols read; 0 if they read none (the time is not drawn). With the extra
// and neither channel nor url read, model.BidSkipChannel is or'ed in.
func bidFieldsRead(cols []column) int {
	rank := func(f field) int {
		switch f {
		case fBidAuction:
			return model.BidAuction
		case fBidBidder:
			return model.BidBidder
		case fBidPrice:
			return model.BidPrice
		case fBidChannel, fBidURL:
			return model.BidChannel
		case fBidExtra:
			return model.BidExtra
		}
		return 0
	}
	last, channel := 0, false
	for _, c := range cols {
		last = max(last, rank(c.f))
		channel = channel || rank(c.f) == model.BidChannel
		for _, f := range c.sub {
			last = max(last, rank(f))
			channel = channel || rank(f) == model.BidChannel
		}
	}
	if last == model.BidExtra && !channel {
		last |= model.BidSkipChannel
	}
	return last
}

// bidPlan is where each field of a bid goes in a row (-1: not read), for
// a reader of bids only whose columns are all plain bid fields (the
// benchmarks' views): filling a row is a test per field, not a loop with
// a kind check and a switch per column.
type bidPlan struct {
	auction, bidder, price, channel, url, dateTime, extra int
	time                                                  int // fDateTime: the event's time
}

// bidPlanOf returns the plan of cols for a reader of only's events, or
// nil when fill must do (other kinds, ROW columns, a field read twice).
func bidPlanOf(cols []column, only model.Kind) *bidPlan {
	if only != model.KindBid {
		return nil
	}
	p := &bidPlan{-1, -1, -1, -1, -1, -1, -1, -1}
	for i, c := range cols {
		if c.only != anyKind && c.only != model.KindBid {
			return nil
		}
		var at *int
		switch c.f {
		case fBidAuction:
			at = &p.auction
		case fBidBidder:
			at = &p.bidder
		case fBidPrice:
			at = &p.price
		case fBidChannel:
			at = &p.channel
		case fBidURL:
			at = &p.url
		case fBidDateTime:
			at = &p.dateTime
		case fBidExtra:
			at = &p.extra
		case fDateTime:
			at = &p.time
		default:
			return nil
		}
		if *at >= 0 {
			return nil
		}
		*at = i
	}
	return p
}

// fillBid writes bid e into row by plan p: what fill writes.
func fillBid(row []types.Value, p *bidPlan, e *model.Event) {
	b := &e.Bid
	if p.auction >= 0 {
		row[p.auction] = types.BigIntValue(b.Auction)
	}
	if p.bidder >= 0 {
		row[p.bidder] = types.BigIntValue(b.Bidder)
	}
	if p.price >= 0 {
		row[p.price] = types.BigIntValue(b.Price)
	}
	if p.channel >= 0 {
		row[p.channel] = types.StringValue(b.Channel)
	}
	if p.url >= 0 {
		row[p.url] = types.StringValue(b.URL)
	}
	if p.dateTime >= 0 {
		row[p.dateTime] = types.TimestampValue(b.DateTime)
	}
	if p.extra >= 0 {
		row[p.extra] = types.StringValue(b.Extra)
	}
	if p.time >= 0 {
		row[p.time] = types.TimestampValue(e.Time)
	}
}
