package exec

import (
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// splitWatermarks is the watermark of a source subtask whose reader reads
// several splits (connector.SplitReader): each split has a generator of
// its own, and the subtask's watermark is the minimum over the splits that
// are active. A split without rows for the idle timeout is left out until
// it sends rows again (then it counts at once, with its old watermark); a
// finished split is left out for good, its watermark kept in finished so
// that, while no split is active, the subtask's watermark is the largest
// of the finished ones (what a reader of one split would have reached).
//
// When the reader is a connector.SplitLister, a split counts from its
// assignment: until its first row its watermark is NoWatermark, which holds
// the subtask's back (unless the split stays idle for the idle timeout).
type splitWatermarks struct {
	reader   connector.SplitReader
	lister   connector.SplitLister // nil if the reader does not list its splits
	listed   int                   // SplitCount at the last look
	ids      []string              // scratch for AssignedSplits
	done     map[string]bool       // finished splits (never counted again)
	spec     *WatermarkSpec
	width    int
	splits   map[string]*splitWM
	finished int64
}

type splitWM struct {
	gen      *watermarkGen
	lastData time.Time
}

func newSplitWatermarks(r connector.SplitReader, spec *WatermarkSpec, width int) *splitWatermarks {
	s := &splitWatermarks{reader: r, spec: spec, width: width, splits: map[string]*splitWM{}, finished: NoWatermark, done: map[string]bool{}}
	s.lister, _ = r.(connector.SplitLister)
	return s
}

// assign starts counting the splits assigned since the last look, as of
// time now (their idle timeout runs from there).
func (s *splitWatermarks) assign(now time.Time) {
	if s.lister == nil {
		return
	}
	n := s.lister.SplitCount()
	if n == s.listed {
		return
	}
	s.listed = n
	s.ids = s.lister.AssignedSplits(s.ids[:0])
	for _, id := range s.ids {
		if s.splits[id] == nil && !s.done[id] {
			s.splits[id] = &splitWM{gen: newWatermarkGen(s.spec, s.width), lastData: now}
		}
	}
}

// observe takes the rows of b, just read at time now, into account under
// the split the reader says they came from, and drops the splits that
// finished.
func (s *splitWatermarks) observe(b *types.Batch, now time.Time) error {
	s.assign(now)
	id, finished := s.reader.LastSplit()
	if b.Len() > 0 {
		sp := s.splits[id]
		if sp == nil {
			sp = &splitWM{gen: newWatermarkGen(s.spec, s.width)}
			s.splits[id] = sp
		}
		sp.lastData = now
		if err := sp.gen.observe(b); err != nil {
			return err
		}
	}
	for _, f := range finished {
		sp := s.splits[f]
		if s.lister != nil {
			s.done[f] = true
		}
		if sp == nil {
			continue
		}
		wm, err := sp.gen.current()
		if err != nil {
			return err
		}
		s.finished = max(s.finished, wm)
		delete(s.splits, f)
	}
	return nil
}

// current returns the subtask's watermark at time now: the minimum over
// the splits with rows within idleTimeout (all splits when it is 0), or,
// when none is, the largest watermark of a finished split; ok is false
// when there is none either.
func (s *splitWatermarks) current(now time.Time, idleTimeout time.Duration) (wm int64, ok bool, err error) {
	wm = MaxWatermark
	for _, sp := range s.splits {
		if idleTimeout > 0 && now.Sub(sp.lastData) >= idleTimeout {
			continue
		}
		w, err := sp.gen.current()
		if err != nil {
			return 0, false, err
		}
		wm, ok = min(wm, w), true
	}
	if !ok && s.finished != NoWatermark {
		return s.finished, true, nil
	}
	return wm, ok, nil
}
