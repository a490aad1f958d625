package exec

import (
	"sync"
	"time"

	"github.com/weir-sql/weir/connector"
)

// WatermarkAlignment is a source's watermark alignment (Flink's
// 'scan.watermark.alignment.*' options): the source subtasks of a job in
// the same Group pause reading while their watermark is more than MaxDrift
// ahead of the smallest watermark of the group, and go on once it has
// caught up.
type WatermarkAlignment struct {
	// Group names the alignment group.
	Group string
	// MaxDrift is how far (event time) a subtask's watermark may run ahead
	// of the group's smallest before it pauses.
	MaxDrift time.Duration
	// UpdateInterval is how often a paused subtask looks at the group's
	// smallest watermark again when nothing woke it before (it is woken as
	// soon as the smallest watermark advances); <= 0 means
	// connector.DefaultAlignUpdateInterval.
	UpdateInterval time.Duration
}

// alignGroup is an alignment group of a running job: the watermark of each
// member (a source subtask), NoWatermark until its first, MaxWatermark once
// it finished or went idle (it then holds no one back), and a channel closed
// whenever the group's smallest watermark advances, to wake the paused.
//
// A member that has no watermark yet holds the group back at NoWatermark,
// as in Flink: a source without data must go idle
// ('table.exec.source.idle-timeout') for the others to run.
type alignGroup struct {
	mu   sync.Mutex
	wms  []int64
	min  int64
	wake chan struct{}
}

func newAlignGroup() *alignGroup {
	return &alignGroup{min: NoWatermark, wake: make(chan struct{})}
}

// join adds a member and returns its number (before the job starts).
func (g *alignGroup) join() int {
	g.wms = append(g.wms, NoWatermark)
	return len(g.wms) - 1
}

// report sets member m's watermark to wm and returns the group's smallest
// watermark and a channel closed when it next advances.
func (g *alignGroup) report(m int, wm int64) (int64, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.wms[m] != wm {
		old := g.wms[m]
		g.wms[m] = wm
		if old == g.min || wm < g.min {
			mn := int64(MaxWatermark)
			for _, w := range g.wms {
				mn = min(mn, w)
			}
			if mn > g.min {
				close(g.wake)
				g.wake = make(chan struct{})
			}
			g.min = mn
		}
	}
	return g.min, g.wake
}

// aligner is a source task's part in its alignment group.
type aligner struct {
	g      *alignGroup
	member int
	drift  int64 // ms
	every  time.Duration
	timer  *time.Timer
	paused time.Duration // total time paused
	// onPause, if set (tests), is called each time the source pauses.
	onPause func()
}

// ahead reports whether watermark wm is more than the drift ahead of the
// group's smallest watermark min.
func (a *aligner) ahead(wm, min int64) bool {
	if wm == NoWatermark || wm == MaxWatermark {
		return false
	}
	return wm > satAdd(min, a.drift)
}

// alignGroups makes the job's alignment groups and gives each source task
// with a WatermarkAlignment its member.
func alignGroups(tasks []*task) {
	groups := map[string]*alignGroup{}
	for _, t := range tasks {
		if t.v.Source == nil || t.v.Watermark == nil || t.v.Watermark.Align == nil {
			continue
		}
		al := t.v.Watermark.Align
		g := groups[al.Group]
		if g == nil {
			g = newAlignGroup()
			groups[al.Group] = g
		}
		every := al.UpdateInterval
		if every <= 0 {
			every = connector.DefaultAlignUpdateInterval
		}
		t.align = &aligner{g: g, member: g.join(), drift: max(al.MaxDrift.Milliseconds(), 0), every: every}
	}
}

// alignWatermark is the watermark a source task reports to its group: the
// watermark of the rows it read (not only the last emitted one), or
// MaxWatermark while it is idle, has no split assigned, or once it
// finished.
func (t *task) alignWatermark(now time.Time) (int64, error) {
	if t.srcIdle || t.srcWM == MaxWatermark {
		return MaxWatermark, nil
	}
	if sp := t.splits; sp != nil && sp.lister != nil && sp.lister.SplitCount() == 0 {
		// No split assigned (a Kafka source with fewer partitions than
		// subtasks): nothing to wait for, as Flink counts such a reader
		// idle.
		return MaxWatermark, nil
	}
	wm, ok, err := t.sourceWatermark(now)
	if err != nil || !ok {
		return NoWatermark, err
	}
	return wm, nil
}

// alignPause is a source task's step before it reads: it reports its
// watermark to its group and, while that is more than the drift ahead of
// the group's smallest, waits, still taking checkpoint triggers and
// control messages and stopping at a stop or cancellation. stop says that
// the task must return (a stop, or a stop-with-savepoint taken).
func (t *task) alignPause() (stop bool, err error) {
	a := t.align
	now := time.Now()
	wm, err := t.alignWatermark(now)
	if err != nil {
		return false, err
	}
	mn, wake := a.g.report(a.member, wm)
	if !a.ahead(wm, mn) {
		return false, nil
	}
	// Paused: what was computed goes out first.
	if err := t.flushAll(); err != nil {
		return false, err
	}
	if a.onPause != nil {
		a.onPause()
	}
	start := now
	defer func() {
		t.lastData = time.Now() // paused is not idle
		a.paused += t.lastData.Sub(start)
	}()
	for {
		if a.timer == nil {
			a.timer = time.NewTimer(a.every)
		} else {
			a.timer.Reset(a.every)
		}
		stop, err := t.sourceEvents(wake, a.timer.C)
		a.timer.Stop()
		if stop || err != nil {
			return stop, err
		}
		if t.hasKeyed || t.hasTTL {
			if err := t.processingTime(t.clock()); err != nil {
				return false, err
			}
			if err := t.flush(); err != nil {
				return false, err
			}
		}
		mn, wake = a.g.report(a.member, wm)
		if !a.ahead(wm, mn) {
			return false, nil
		}
	}
}

// alignEnd takes a finished source task out of its group.
func (t *task) alignEnd() {
	if t.align != nil {
		t.align.g.report(t.align.member, MaxWatermark)
	}
}
