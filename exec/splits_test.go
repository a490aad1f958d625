package exec

import (
	"context"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// splitReader is a posReader that says which split the rows of the last
// Next came from (the test sets it) and which finished.
type splitReader struct {
	posReader
	split    string
	finished []string
}

func (r *splitReader) LastSplit() (string, []string) { return r.split, r.finished }

var _ connector.SplitReader = (*splitReader)(nil)

type splitSource struct{ r *splitReader }

func (s splitSource) Bounded() bool                                 { return false }
func (s splitSource) Open(int, int) (connector.SourceReader, error) { return s.r, nil }

// splitHarness runs source S (parallelism 1, WATERMARK ts - 2 ms, a
// SplitReader) → D, the test being the scheduler and S's clock; D's input
// is a queue the test reads.
type splitHarness struct {
	t      *testing.T
	j      *Job
	s      *task
	reader *splitReader
	out    chan message
	now    time.Time
}

func newSplitHarness(t *testing.T) *splitHarness {
	r := &splitReader{}
	h := newSplitHarnessOf(t, splitSource{r})
	h.reader = r
	return h
}

// newSplitHarnessOf is newSplitHarness with another source of the same
// two columns (a BIGINT, the event time).
func newSplitHarnessOf(t *testing.T, src connector.Source) *splitHarness {
	h := &splitHarness{t: t, out: make(chan message, 64)}
	ts := expr.NewColumn(1, types.Timestamp, "ts")
	delay, err := expr.NewArith("-", ts, expr.NewLiteral(types.IntervalValue(2), types.Interval))
	if err != nil {
		t.Fatal(err)
	}
	g := &JobGraph{Name: "splits", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: src, SourceWidth: 2, SourceName: "s",
			Watermark: &WatermarkSpec{Column: 1, Expr: delay}},
		{Name: "D", Parallelism: 1, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Forward}}}, Sink: &sumSink{}, SinkName: "d"},
	}}
	j, tasks, err := newJob(context.Background(), g, Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval, SourceIdleTimeout: wmIdle})
	if err != nil {
		t.Fatal(err)
	}
	h.j = j
	for _, tk := range tasks {
		if tk.vi == 0 {
			h.s = tk
		} else {
			tk.links[0].inbox = h.out
		}
	}
	for _, tk := range tasks {
		if err := tk.open(); err != nil {
			t.Fatal(err)
		}
	}
	h.now = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	h.s.lastWMEmit, h.s.lastData = h.now, h.now
	t.Cleanup(func() {
		for _, tk := range tasks {
			_ = tk.close(nil)
		}
		j.cancel()
	})
	return h
}

// read makes S's reader return rows with event times tss from split (none
// for ""), with the splits finished, then lets the auto-watermark
// interval pass on S's clock.
func (h *splitHarness) read(split string, finished []string, tss ...int64) {
	b := types.NewBatch(2, len(tss))
	for _, ts := range tss {
		b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.TimestampValue(ts)})
	}
	h.reader.split, h.reader.finished = split, finished
	h.now = h.now.Add(wmInterval)
	if err := h.s.sourceRows(b, h.now); err != nil {
		h.t.Fatal(err)
	}
	if err := h.s.sourceTime(h.now, b.Len() > 0); err != nil {
		h.t.Fatal(err)
	}
	if err := h.s.flush(); err != nil {
		h.t.Fatal(err)
	}
}

// output takes and renders what S sent to D since the last call.
func (h *splitHarness) output() string {
	var ms []message
	for len(h.out) > 0 {
		m := <-h.out
		ms = append(ms, m)
		h.s.x.edges[0].dests[0].link.release(h.j, message{})
	}
	return render(ms)
}

// TestSplitWatermarks checks a source subtask's watermark over its splits:
// the minimum over them; a split without rows for the idle timeout leaves
// the minimum and counts again (with its old watermark) when it sends
// rows; a finished split leaves it for good; with every split idle the
// subtask goes idle, and says so when rows come again.
func TestSplitWatermarks(t *testing.T) {
	h := newSplitHarness(t)
	step := stepChecker(t)
	// Times below are S's clock, 200 ms a step; the idle timeout is 1 s.
	h.read("a", nil, 10) // 200 ms
	step("split a alone", h.output(), "data 10 | wm 8")
	h.read("b", nil, 5) // 400
	step("split b joins below a: the minimum does not advance", h.output(), "data 5")
	h.read("a", nil, 20) // 600
	step("b holds a back", h.output(), "data 20")
	h.read("b", nil, 30) // 800
	step("min(a 18, b 28)", h.output(), "data 30 | wm 18")

	// b goes quiet; a goes on. At 1800 ms b had no rows for 1 s: it
	// leaves the minimum.
	h.read("a", nil, 40) // 1000
	step("min(a 38, b 28)", h.output(), "data 40 | wm 28")
	h.read("a", nil, 41) // 1200
	h.read("a", nil, 42) // 1400
	h.read("a", nil, 43) // 1600
	step("b still counts before its timeout", h.output(), "data 41 | data 42 | data 43")
	h.read("a", nil, 44) // 1800
	step("b idle: a alone", h.output(), "data 44 | wm 42")

	// b rejoins with its old watermark (28): the minimum waits for it.
	h.read("b", nil, 35) // 2000
	h.read("a", nil, 50) // 2200
	step("b counts again at 33", h.output(), "data 35 | data 50")
	h.read("b", nil, 60) // 2400
	step("b caught up: min(a 48, b 58)", h.output(), "data 60 | wm 48")

	// a finishes: it leaves the minimum for good, b alone decides.
	h.read("a", []string{"a"}, 70) // 2600
	step("a's last rows, then a gone", h.output(), "data 70 | wm 58")
	h.read("b", nil, 65) // 2800
	step("b alone", h.output(), "data 65 | wm 63")

	// Every split quiet: after 1 s b leaves the minimum, so no split is
	// active and the largest finished watermark (a's 68) goes out, as a
	// valve does when all its inputs are idle; the subtask goes idle, once.
	// Rows of a new split c make it active again (said before the rows).
	for range 5 {
		h.read("", nil)
	}
	step("all splits idle: the subtask is idle", h.output(), "wm 68 | idle")
	h.read("", nil)
	step("idle is said once", h.output(), "")
	h.read("c", nil, 100)
	step("active again, then c's watermark", h.output(), "active | data 100 | wm 98")
}
