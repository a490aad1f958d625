// Package nexmark implements the 'nexmark' source: the events of the
// Nexmark benchmark (people, auctions, bids) from the generator of package
// model, with the options of the reference's Flink connector.
//
// Event numbers are global: subtask s of p generates events s, s+p, s+2p,
// ... (as datagen does with its rows), and an event is a pure function of
// its number, so a restore (at any parallelism) continues with exactly the
// events not read yet. The timeline's base time is 'base-time', else the
// wall clock when the source was first built; it is part of every
// position, so a restored job continues the same timeline.
//
// The table is the reference's (event_type, person, auction, bid, dateTime;
// until Weir has ROW types, the ROWs' fields as columns `person.id`, ...),
// or, with 'nexmark.event-type' (a Weir extension), one kind of event with
// its fields as columns.
package nexmark

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/seqsplit"
	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/types"
)

// NewSource is the nexmark source factory.
func NewSource(t *connector.Table, _ connector.Env) (connector.Source, error) {
	return newSource(t, time.Now())
}

// newSource builds the source as if first started at now.
func newSource(t *connector.Table, now time.Time) (*Source, error) {
	cfg, err := parseConfig(t.Options)
	if err != nil {
		return nil, err
	}
	cols, err := resolveColumns(t.Schema, cfg.kind, cfg.perKind)
	if err != nil {
		return nil, err
	}
	s := &Source{cfg: cfg, cols: cols, wallBase: now.UnixMilli(), only: anyKind, bidUpTo: bidFieldsRead(cols)}
	if cfg.perKind {
		s.only = cfg.kind
	}
	s.cfg.model.BaseTime = s.wallBase
	if cfg.baseTimeSet {
		s.cfg.model.BaseTime = cfg.baseTime
	}
	s.tables = model.NewTables(cfg.model.Seed)
	return s, nil
}

// Source is a nexmark table.
type Source struct {
	cfg    *config
	cols   []column
	tables *model.Tables // shared, read-only
	// wallBase is the wall clock time at which event 0 is due when
	// 'rate.limited' paces the events.
	wallBase int64
	// only is the kind of events the source reads ('nexmark.event-type',
	// or event_type = n pushed down by the planner); anyKind for all.
	only model.Kind
	// bidUpTo is the last of a bid's random fields (in draw order,
	// model.BidAuction ...) that the columns read: a reader of bids only
	// draws none after it.
	bidUpTo int
}

var (
	_ connector.Source            = (*Source)(nil)
	_ connector.ProjectableSource = (*Source)(nil)
	_ connector.FilterableSource  = (*Source)(nil)
)

// Bounded reports whether 'events.num' limits the events.
func (s *Source) Bounded() bool { return s.cfg.events > 0 }

// Open returns the reader of events n with n % parallelism == subtask.
func (s *Source) Open(subtask, parallelism int) (connector.SourceReader, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("nexmark: invalid subtask %d of parallelism %d", subtask, parallelism)
	}
	r := &Reader{
		src:         s,
		gen:         model.NewGenerator(s.cfg.model, s.tables),
		base:        s.cfg.model.BaseTime,
		wallBase:    s.wallBase,
		subtask:     subtask,
		parallelism: parallelism,
		quota:       -1,
		bids:        bidPlanOf(s.cols, s.only),
	}
	if s.cfg.events > 0 {
		r.quota = eventsOf(s.cfg.events, subtask, parallelism)
	}
	return r, nil
}

// Reader generates the events of one subtask.
type Reader struct {
	src         *Source
	gen         *model.Generator
	base        int64 // event 0's time
	wallBase    int64 // when event 0 is due (rate.limited)
	subtask     int
	parallelism int
	count       int64          // cursor: events of this subtask passed so far
	quota       int64          // events of this subtask in all; -1 if unbounded
	skips       seqsplit.Skips // events of earlier runs at other parallelisms
	ev          model.Event
	rows        types.RowBuilder // builds the ROW columns' values
	bids        *bidPlan         // fills rows of plain bid columns; nil: fill
	timer       *time.Timer
}

var _ connector.RescalableReader = (*Reader)(nil)

// maxWait bounds how long Next waits for the next event to be due.
const maxWait = 10 * time.Millisecond

// Next appends up to max events: with 'rate.limited', only those due.
func (r *Reader) Next(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.Width != len(r.src.cols) {
		return fmt.Errorf("nexmark: batch width %d, table has %d columns", b.Width, len(r.src.cols))
	}
	if r.quota >= 0 && r.count >= r.quota {
		return io.EOF
	}
	cfg := r.src.cfg
	dueBy := int64(-1) // offset from base of the last event due; -1: no pacing
	if cfg.rateLimited {
		dueBy = max64(time.Now().UnixMilli()-r.wallBase, 0)
	}
	p := int64(r.parallelism)
	n := int64(r.subtask) + r.count*p
	// A per-kind table skips the other kinds; scanning is bounded so that
	// a subtask whose events are all of other kinds still returns.
	scan := 4*int64(max) + 64
	emitted := 0
	tl := r.gen.Timeline()
	// n's offset in the cycle of event kinds, kept without a division per
	// event.
	total := r.gen.CycleLength()
	off := n % total
	stride := p % total
	notDue := false
	only := r.src.only
	for emitted < max && scan > 0 && (r.quota < 0 || r.count < r.quota) {
		if dueBy >= 0 && tl.Time(n)-r.base > dueBy {
			notDue = true
			break
		}
		if !r.skips.Emitted(n) && (only == anyKind || r.gen.KindAt(off) == only) {
			r.generate(n)
			if r.bids != nil {
				fillBid(appendRow(b), r.bids, &r.ev)
			} else {
				fill(appendRow(b), r.src.cols, &r.ev, &r.rows)
			}
			emitted++
		}
		n += p
		if off += stride; off >= total {
			off -= total
		}
		r.count++
		scan--
	}
	if r.quota >= 0 && r.count >= r.quota {
		return io.EOF
	}
	if emitted == 0 && notDue {
		return r.wait(ctx, tl.Time(n)-r.base-dueBy)
	}
	return nil
}

// generate fills r.ev with event n.
func (r *Reader) generate(n int64) {
	if r.src.only == anyKind {
		r.gen.Next(n, &r.ev)
		return
	}
	e := &r.ev
	e.Kind = r.src.only
	switch e.Kind {
	case model.KindPerson:
		r.gen.Person(n, &e.Person)
		e.Time = e.Person.DateTime
	case model.KindAuction:
		r.gen.Auction(n, &e.Auction)
		e.Time = e.Auction.DateTime
	default:
		r.gen.BidPrefix(n, &e.Bid, r.src.bidUpTo)
		e.Time = e.Bid.DateTime
	}
}

// wait sleeps up to ms milliseconds (at most maxWait), or until ctx ends.
func (r *Reader) wait(ctx context.Context, ms int64) error {
	d := min(max(time.Duration(ms)*time.Millisecond, time.Millisecond), maxWait)
	if r.timer == nil {
		r.timer = time.NewTimer(d)
	} else {
		r.timer.Reset(d)
	}
	select {
	case <-ctx.Done():
		r.timer.Stop()
		return ctx.Err()
	case <-r.timer.C:
		return nil
	}
}

func max64(a, b int64) int64 { return max(a, b) }

// appendRow appends an Insert row to b and returns it for fill, which
// writes every column.
func appendRow(b *types.Batch) []types.Value {
	n, w := len(b.Vals), b.Width
	if cap(b.Vals)-n < w || cap(b.Kinds) == len(b.Kinds) {
		return b.AppendEmpty(types.Insert)
	}
	b.Kinds = append(b.Kinds, types.Insert)
	b.Vals = b.Vals[:n+w]
	return b.Vals[n : n+w : n+w]
}

// Close releases the reader.
func (r *Reader) Close() error {
	if r.timer != nil {
		r.timer.Stop()
	}
	return nil
}

// eventsOf returns how many of the first total events belong to subtask
// out of parallelism (event n belongs to subtask n % parallelism).
func eventsOf(total int64, subtask, parallelism int) int64 {
	if total <= int64(subtask) {
		return 0
	}
	return (total-int64(subtask)-1)/int64(parallelism) + 1
}
