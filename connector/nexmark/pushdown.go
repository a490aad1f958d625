package nexmark

import (
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/types"
)

// Project returns the source reading only the values at paths (see
// connector.ProjectableSource): whole columns, and single fields of the
// ROW columns person, auction and bid, which it writes as plain values
// without building the ROW. A query over the reference's views reads
// bid.price, say, instead of the whole bid.
func (s *Source) Project(paths [][]int) (connector.Source, bool) {
	cols := make([]column, len(paths))
	for i, p := range paths {
		if len(p) == 0 || p[0] < 0 || p[0] >= len(s.cols) {
			return nil, false
		}
		c := s.cols[p[0]]
		switch {
		case len(p) == 1:
			cols[i] = c
		case len(p) == 2 && c.f == fRow && p[1] >= 0 && p[1] < len(c.sub):
			cols[i] = column{f: c.sub[p[1]], only: c.only}
		default:
			return nil, false
		}
	}
	out := *s
	out.cols = cols
	out.bidUpTo = bidFieldsRead(cols)
	return &out, true
}

// FilterEquals returns the source reading only the events of one kind
// when col is event_type and v is 0 (person), 1 (auction) or 2 (bid):
// it then generates only those events, as a table with
// 'nexmark.event-type' does. Other conditions are left to the planner.
func (s *Source) FilterEquals(col int, v types.Value) (connector.Source, bool) {
	if col < 0 || col >= len(s.cols) || v.IsNull() {
		return nil, false
	}
	c := s.cols[col]
	if (c.f != fEventType && c.f != fEventTypeBig) || c.only != anyKind {
		return nil, false
	}
	k := model.Kind(v.Int())
	switch {
	case v.Int() < 0 || v.Int() > int64(model.KindBid):
		return nil, false
	case s.only != anyKind && s.only != k:
		return nil, false
	}
	out := *s
	out.only = k
	return &out, true
}
