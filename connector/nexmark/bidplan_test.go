package nexmark

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/types"
)

// TestFillBidMatchesFill fills rows of random lists of bid columns (any
// order, some kind-tagged, the event's dateTime) with the bid plan and
// with fill, from stale rows, and compares every value; and checks the
// lists the plan must refuse.
func TestFillBidMatchesFill(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	fields := []field{fBidAuction, fBidBidder, fBidPrice, fBidChannel, fBidURL, fBidDateTime, fBidExtra, fDateTime}
	cfg := model.DefaultConfig()
	cfg.BaseTime = 1_767_225_600_000
	g := model.NewGenerator(cfg, model.NewTables(cfg.Seed))
	var e model.Event
	for range 2000 {
		perm := r.Perm(len(fields))[:1+r.IntN(len(fields))]
		cols := make([]column, len(perm))
		for i, j := range perm {
			cols[i] = column{f: fields[j], only: anyKind}
			if fields[j] != fDateTime && r.IntN(2) == 0 {
				cols[i].only = model.KindBid
			}
		}
		p := bidPlanOf(cols, model.KindBid)
		if p == nil {
			t.Fatalf("seed %d: no plan for %+v", seed, cols)
		}
		n := int64(r.IntN(1_000_000))
		for g.KindOf(n) != model.KindBid {
			n++
		}
		e.Kind = model.KindBid
		g.Bid(n, &e.Bid)
		e.Time = e.Bid.DateTime
		want := make([]types.Value, len(cols))
		got := make([]types.Value, len(cols))
		for i := range got {
			got[i] = types.StringValue("stale") // a reused batch row
		}
		fill(want, cols, &e, nil)
		fillBid(got, p, &e)
		for i := range want {
			if !types.Equal(got[i], want[i]) || got[i].Kind() != want[i].Kind() {
				t.Fatalf("seed %d: column %d (%+v): %v, fill gives %v", seed, i, cols[i], got[i], want[i])
			}
		}
	}
	for _, c := range []struct {
		cols []column
		only model.Kind
	}{
		{[]column{{f: fBidPrice, only: anyKind}}, anyKind},
		{[]column{{f: fBidPrice, only: anyKind}}, model.KindAuction},
		{[]column{{f: fBidPrice, only: anyKind}, {f: fBidPrice, only: anyKind}}, model.KindBid},
		{[]column{{f: fBidPrice, only: anyKind}, {f: fEventType, only: anyKind}}, model.KindBid},
		{[]column{{f: fRow, only: model.KindBid, sub: []field{fBidPrice}}}, model.KindBid},
		{[]column{{f: fBidPrice, only: model.KindAuction}}, model.KindBid},
	} {
		if bidPlanOf(c.cols, c.only) != nil {
			t.Errorf("a bid plan for %+v reading %v", c.cols, c.only)
		}
	}
}
