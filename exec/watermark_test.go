package exec

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// This file tests event time as a deterministic trace, in the style of the
// worked example: the test is the scheduler and the clock. Two sources S1
// and S2 (rows: source number, event time ts; WATERMARK FOR ts AS
// ts - 2 ms) feed a task W (channel 0 from S1, channel 1 from S2) whose chain
// is a pass-through Calc and a recording operator; W sends to a task D
// whose input channel the test reads, message by message. The sources and
// W are the runtime's real tasks: watermark generation, idle detection,
// the input gate, the valve, the chain and the exchange.

// wmRecorder passes rows on and records the watermarks it sees.
type wmRecorder struct {
	calcOp
	seen *[]string
}

func (r *wmRecorder) ProcessWatermark(wm int64, out Emitter) error {
	*r.seen = append(*r.seen, fmtWM(wm))
	return ForwardWatermark(out, wm)
}

var _ WatermarkOperator = (*wmRecorder)(nil)

// wmPortRecorder passes the rows of both its input ports on and records
// each port's watermark.
type wmPortRecorder struct {
	calcOp
	seen *[]string
}

func (r *wmPortRecorder) ProcessInputWatermark(port int, wm int64) error {
	*r.seen = append(*r.seen, fmt.Sprintf("in%d %s", port, fmtWM(wm)))
	return nil
}

var _ InputWatermarkOperator = (*wmPortRecorder)(nil)

func fmtWM(wm int64) string {
	switch wm {
	case MaxWatermark:
		return "+inf"
	case NoWatermark:
		return "-inf"
	}
	return strconv.FormatInt(wm, 10)
}

type wmHarness struct {
	t      *testing.T
	j      *Job
	src    [2]*task
	w, d   *task
	queues [2]chan message // into W, by channel (= source)
	out    chan message    // from W into D
	seen   []string        // watermarks W's recording operator saw
	now    [2]time.Time    // each source's clock
}

const (
	wmInterval = 200 * time.Millisecond
	wmIdle     = time.Second
)

func newWMHarness(t *testing.T) *wmHarness { return newWMHarnessPorts(t, false) }

// newWMHarnessPorts is newWMHarness; with ports, S1 and S2 feed W's input
// ports 0 and 1 and W's chain starts with a wmPortRecorder, which records
// each port's watermark (InputWatermarkOperator) as "in0 8".
func newWMHarnessPorts(t *testing.T, ports bool) *wmHarness {
	h := &wmHarness{t: t}
	ts := expr.NewColumn(1, types.Timestamp, "ts")
	delay, err := expr.NewArith("-", ts, expr.NewLiteral(types.IntervalValue(2), types.Interval))
	if err != nil {
		t.Fatal(err)
	}
	spec := &WatermarkSpec{Column: 1, Expr: delay}
	src := func(i int) *Vertex {
		return &Vertex{ID: fmt.Sprintf("s%d", i+1), Name: fmt.Sprintf("S%d", i+1), Parallelism: 1,
			Source: posSource{&posReader{}}, SourceWidth: 2, SourceName: fmt.Sprintf("s%d", i+1), Watermark: spec}
	}
	first := OperatorSpec{Name: "Calc", ID: "calc", OutWidth: 2, New: NewCalc(nil, nil)}
	port1 := 0
	if ports {
		first = OperatorSpec{Name: "Ports", ID: "ports", OutWidth: 2, New: func() Operator { return &wmPortRecorder{seen: &h.seen} }}
		port1 = 1
	}
	g := &JobGraph{Name: "wm", Vertices: []*Vertex{
		src(0), src(1),
		{Name: "W", Parallelism: 1,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}, {From: 1, Partition: Partitioning{Kind: Rebalance}, Port: port1}},
			Operators: []OperatorSpec{
				first,
				{Name: "Recorder", ID: "rec", OutWidth: 2, New: func() Operator { return &wmRecorder{seen: &h.seen} }},
			}},
		{Name: "D", Parallelism: 1, Inputs: []Input{{From: 2, Partition: Partitioning{Kind: Forward}}}, Sink: &sumSink{}, SinkName: "d"},
	}}
	dir := t.TempDir()
	opts := Options{BatchSize: 16, ChannelBuffer: 8, AutoWatermarkInterval: wmInterval, SourceIdleTimeout: wmIdle,
		Checkpoint: testCheckpointing(t, dir, "wm", nil, statestore.DefaultCacheBytes)}
	j, tasks, err := newJob(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.j = j
	for _, tk := range tasks {
		switch tk.vi {
		case 0, 1:
			h.src[tk.vi] = tk
		case 2:
			h.w = tk
		case 3:
			h.d = tk
		}
	}
	for ch, l := range h.w.links {
		h.queues[ch] = make(chan message, 64)
		l.inbox = h.queues[ch]
	}
	h.out = make(chan message, 64)
	h.d.links[0].inbox = h.out
	for _, tk := range tasks {
		if err := tk.open(); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range h.src {
		s.lastWMEmit, s.lastData = t0, t0
		h.now[i] = t0
	}
	t.Cleanup(func() {
		for _, tk := range tasks {
			_ = tk.close(nil)
		}
		j.cancel()
	})
	return h
}

// emit makes source src read rows with event times tss, then lets the
// auto-watermark interval pass on its clock: it emits its watermark if it
// advanced (after the rows), or else sends the rows on.
func (h *wmHarness) emit(src int, tss ...int64) {
	s := h.src[src]
	b := types.NewBatch(2, len(tss))
	for _, ts := range tss {
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(src + 1)), types.TimestampValue(ts)})
	}
	h.now[src] = h.now[src].Add(wmInterval)
	if err := s.sourceRows(b, h.now[src]); err != nil {
		h.t.Fatal(err)
	}
	if err := s.sourceTime(h.now[src], true); err != nil {
		h.t.Fatal(err)
	}
	if err := s.flush(); err != nil {
		h.t.Fatal(err)
	}
}

// quiet lets d pass on source src's clock without data.
func (h *wmHarness) quiet(src int, d time.Duration) {
	h.now[src] = h.now[src].Add(d)
	if err := h.src[src].sourceTime(h.now[src], false); err != nil {
		h.t.Fatal(err)
	}
}

// end is the end of source src's input: +∞, then end of input.
func (h *wmHarness) end(src int) {
	s := h.src[src]
	if err := s.endWatermark(); err != nil {
		h.t.Fatal(err)
	}
	if err := s.x.endOfInput(false); err != nil {
		h.t.Fatal(err)
	}
}

// deliver hands the next n messages of channel ch to W, which handles each
// and then what it released, and then flushes, as its run loop does when
// nothing else is in.
func (h *wmHarness) deliver(ch, n int) {
	for range n {
		var m message
		select {
		case m = <-h.queues[ch]:
		default:
			h.t.Fatalf("nothing in flight on channel %d", ch)
		}
		if err := h.w.handle(m); err != nil {
			h.t.Fatal(err)
		}
		for len(h.w.replay) > 0 {
			m := h.w.replay[0]
			h.w.replay = h.w.replay[1:]
			if err := h.w.handle(m); err != nil {
				h.t.Fatal(err)
			}
		}
	}
	if err := h.w.flush(); err != nil {
		h.t.Fatal(err)
	}
}

// inFlight renders what waits on channel ch into W, without taking it.
func (h *wmHarness) inFlight(ch int) string {
	q := h.queues[ch]
	var ms []message
	for len(q) > 0 {
		ms = append(ms, <-q)
	}
	for _, m := range ms {
		q <- m
	}
	return render(ms)
}

// output takes and renders what W sent to D since the last call.
func (h *wmHarness) output() string {
	var ms []message
	for len(h.out) > 0 {
		m := <-h.out
		ms = append(ms, m)
		h.d.links[0].release(h.j, message{}) // the credit only: the batch is rendered below
	}
	return render(ms)
}

// watermarks takes what W's recording operator saw since the last call.
func (h *wmHarness) watermarks() string {
	s := strings.Join(h.seen, " ")
	h.seen = nil
	return s
}

func render(ms []message) string {
	var out []string
	for _, m := range ms {
		switch m.kind {
		case msgData:
			var ts []string
			for i := range m.batch.Len() {
				ts = append(ts, strconv.FormatInt(m.batch.Row(i)[1].Int(), 10))
			}
			out = append(out, "data "+strings.Join(ts, ","))
		case msgWatermark:
			out = append(out, "wm "+fmtWM(m.wm))
		case msgBarrier:
			out = append(out, fmt.Sprintf("barrier %d", m.ckpt))
		case msgIdle:
			out = append(out, "idle")
		case msgActive:
			out = append(out, "active")
		case msgEnd:
			out = append(out, "end")
		}
	}
	return strings.Join(out, " | ")
}

// stepChecker returns the check of a harness step: got must be want, or
// the test fails (and goes on), naming the step.
func stepChecker(t *testing.T) func(name, got, want string) {
	return func(name, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s:\n got  %q\n want %q", name, got, want)
		}
	}
}

func TestWatermarkPropagation(t *testing.T) {
	h := newWMHarness(t)
	const s1, s2 = 0, 1
	step := stepChecker(t)

	// The input watermark is the minimum over the channels: nothing until
	// both have one, then min(8, 18).
	h.emit(s1, 10)
	h.emit(s2, 20)
	step("S1 sends its rows, then its watermark", h.inFlight(s1), "data 10 | wm 8")
	h.deliver(s1, 2)
	step("one channel without a watermark holds W back", h.output(), "data 10")
	h.deliver(s2, 2)
	step("min over both channels", h.output(), "data 20 | wm 8")
	step("the chain's operators see it", h.watermarks(), "8")

	// Forwarded only when it advances: an older row does not lower S1's
	// watermark (S1 sends none), S2 moving ahead does not move the minimum,
	// and S1 moving ahead moves it to S2's.
	h.emit(s1, 9)
	step("a source sends no watermark that does not advance", h.inFlight(s1), "data 9")
	h.deliver(s1, 1)
	h.emit(s2, 25)
	h.deliver(s2, 2)
	step("min unchanged: not forwarded", h.output(), "data 9 | data 25")
	h.emit(s1, 30)
	h.deliver(s1, 2)
	step("min advances to S2's", h.output(), "data 30 | wm 23")

	// An idle channel leaves the minimum: S2 has no data for the idle
	// timeout and says so; W's watermark follows S1 alone.
	h.emit(s1, 40)
	h.deliver(s1, 2)
	step("S2 still counts", h.output(), "data 40")
	h.quiet(s2, wmIdle/2)
	step("not idle before the timeout", h.inFlight(s2), "")
	h.quiet(s2, wmIdle/2)
	step("idle after the timeout", h.inFlight(s2), "idle")
	h.deliver(s2, 1)
	step("S2 left out", h.output(), "wm 38")
	h.emit(s1, 50)
	h.deliver(s1, 2)
	step("S1 alone", h.output(), "data 50 | wm 48")
	h.quiet(s2, wmIdle)
	step("an idle source says it once", h.inFlight(s2), "")
	// When every input is idle, W goes idle downstream too.
	h.quiet(s1, wmIdle)
	h.deliver(s1, 1)
	step("all inputs idle: W is idle", h.output(), "idle")

	// S2 rejoins with data: it counts again at once, with its old
	// watermark (23), so W's watermark waits for it to catch up; it never
	// goes back.
	// Both tell downstream that they are active again, before any row.
	h.emit(s2, 45)
	step("S2 active again: it says so first", h.inFlight(s2), "active | data 45 | wm 43")
	h.deliver(s2, 1)
	step("W active again: it tells D at once", h.output(), "active")
	h.deliver(s2, 1)
	h.emit(s1, 60)
	step("S1 active again too", h.inFlight(s1), "active | data 60 | wm 58")
	h.deliver(s1, 3)
	step("S2's old watermark holds W back", h.output(), "data 45 | data 60")
	h.deliver(s2, 1)
	step("S2 at 43: still below 48", h.output(), "")
	h.emit(s2, 55)
	h.deliver(s2, 2)
	step("S2 caught up", h.output(), "data 55 | wm 53")
	step("the operators saw each advance once", h.watermarks(), "23 38 48 53")

	// Alignment holds watermarks with data. Checkpoint 1 cuts S1 before
	// its row 70 and watermark 68, and S2 after its row 65 and watermark
	// 63. W gets S1's barrier first: S1's 70 and 68 are held, so S2's 63
	// makes the minimum min(58, 63) = 58, not 63. The barrier goes out
	// after 58; the held 70 and 68 follow it: 63.
	trig := h.trigger()
	if err := h.src[s1].sourceCheckpoint(trig); err != nil {
		t.Fatal(err)
	}
	h.emit(s1, 70)
	h.emit(s2, 65)
	if err := h.src[s2].sourceCheckpoint(trig); err != nil {
		t.Fatal(err)
	}
	step("S1's channel", h.inFlight(s1), fmt.Sprintf("barrier %d | data 70 | wm 68", trig))
	step("S2's channel", h.inFlight(s2), fmt.Sprintf("data 65 | wm 63 | barrier %d", trig))
	h.deliver(s1, 3) // barrier, then 70 and 68 are held
	step("held: nothing", h.output(), "")
	h.deliver(s2, 2)
	step("S2's 63 against S1's 58", h.output(), "data 65 | wm 58")
	h.deliver(s2, 1) // barrier: aligned
	step("barrier, then what was held", h.output(), fmt.Sprintf("barrier %d | data 70 | wm 63", trig))

	// End of input: each source sends +∞ before its end; W forwards +∞
	// when both have, then ends.
	h.end(s1)
	h.deliver(s1, 2)
	step("S1 ended: S2 still counts", h.output(), "")
	h.end(s2)
	step("S2 sends +inf, then end", h.inFlight(s2), "wm +inf | end")
	h.deliver(s2, 2)
	if !h.w.gate.AllEnded() {
		t.Fatal("W's inputs did not all end")
	}
	if err := h.w.x.endOfInput(false); err != nil {
		t.Fatal(err)
	}
	step("+inf at the end", h.output(), "wm +inf | end")
	step("the operators saw", h.watermarks(), "58 63 +inf")

	m := h.j.Metrics()
	for i, want := range []int64{MaxWatermark, MaxWatermark, MaxWatermark, NoWatermark} {
		if got := m.Vertices[i].Watermark; got != want {
			t.Errorf("vertex %s: metric watermark %s, want %s", m.Vertices[i].Name, fmtWM(got), fmtWM(want))
		}
	}
}

// TestInputWatermarkPerPort checks what an InputWatermarkOperator sees:
// each input port's own watermark (S1 on port 0, S2 on port 1) as it
// advances, before the combined one; an idle port keeps its last
// watermark; +∞ when a port's input ends.
func TestInputWatermarkPerPort(t *testing.T) {
	h := newWMHarnessPorts(t, true)
	const s1, s2 = 0, 1
	step := stepChecker(t)
	h.emit(s1, 10)
	h.emit(s2, 20)
	h.deliver(s1, 2)
	step("port 0 alone", h.watermarks(), "in0 8")
	h.deliver(s2, 2)
	step("port 1, then the minimum", h.watermarks(), "in1 18 8")
	h.emit(s2, 30)
	h.deliver(s2, 2)
	step("port 1 ahead: the minimum does not move", h.watermarks(), "in1 28")
	h.emit(s1, 9)
	h.deliver(s1, 1)
	step("no watermark, nothing", h.watermarks(), "")
	h.quiet(s2, wmIdle)
	h.deliver(s2, 1)
	step("S2 idle: the minimum follows S1's 8, port 1 keeps 28", h.watermarks(), "")
	h.emit(s1, 50)
	h.deliver(s1, 2)
	step("S1 alone moves the minimum", h.watermarks(), "in0 48 48")
	h.end(s2)
	step("S2 ends", h.inFlight(s2), "wm +inf | end")
	h.deliver(s2, 2)
	step("port 1 ended", h.watermarks(), "in1 +inf")
}

// TestWatermarkEmittedPeriodically checks that a source emits its
// generated watermark once per auto-watermark interval of its clock, not
// per batch: rows read within the interval send no watermark; when the
// interval has passed since the last one, one watermark goes out, the
// largest event time read so far less the WATERMARK's 2 ms (computed here
// from the rows).
func TestWatermarkEmittedPeriodically(t *testing.T) {
	h := newWMHarness(t)
	const s1 = 0
	s := h.src[s1]
	read := func(step time.Duration, tss ...int64) string {
		t.Helper()
		b := types.NewBatch(2, len(tss))
		for _, ts := range tss {
			b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.TimestampValue(ts)})
		}
		h.now[s1] = h.now[s1].Add(step)
		if err := s.sourceRows(b, h.now[s1]); err != nil {
			t.Fatal(err)
		}
		if err := s.sourceTime(h.now[s1], true); err != nil {
			t.Fatal(err)
		}
		if err := s.flush(); err != nil {
			t.Fatal(err)
		}
		out := h.inFlight(s1)
		for len(h.queues[s1]) > 0 {
			h.deliver(s1, 1)
		}
		h.output() // W's rows to D, which gives the credit back
		return out
	}
	var largest int64
	wmAfter := func(tss ...int64) string {
		for _, ts := range tss {
			largest = max(largest, ts)
		}
		return fmt.Sprintf("wm %d", largest-2)
	}
	// Four batches a quarter interval apart: the watermark goes out with
	// the fourth, when a whole interval has passed.
	q := wmInterval / 4
	batches := [][]int64{{10, 14}, {30}, {12, 25}, {40, 7}}
	for i, tss := range batches[:3] {
		wmAfter(tss...)
		if got := read(q, tss...); strings.Contains(got, "wm") {
			t.Fatalf("batch %d, %v into the interval: %q, want no watermark yet", i, time.Duration(i+1)*q, got)
		}
	}
	want := "data 40,7 | " + wmAfter(batches[3]...)
	if got := read(q, batches[3]...); got != want {
		t.Fatalf("at the interval: got %q, want %q", got, want)
	}
	// The next interval starts there: a later row waits for it.
	if got := read(wmInterval-time.Millisecond, 50); got != "data 50" {
		t.Fatalf("1 ms before the next interval: got %q, want the rows only", got)
	}
	if got := read(time.Millisecond, 45); got != "data 45 | "+wmAfter(50, 45) {
		t.Fatalf("at the next interval: got %q, want the watermark of 50", got)
	}
	if d := (Options{}).withDefaults().AutoWatermarkInterval; d != 200*time.Millisecond {
		t.Errorf("default auto-watermark interval %v, want 200ms (pipeline.auto-watermark-interval)", d)
	}
}

// trigger starts the coordinator's next checkpoint and drains the sources'
// triggers (the test takes them itself).
func (h *wmHarness) trigger() int64 {
	ck := h.j.ck
	a := ck.coord.Trigger(time.Now())
	ck.do([]coordinator.Action{a})
	for _, s := range h.src {
		<-s.trigger
	}
	return a.ID
}

// TestWatermarkValve checks the valve's cases the trace above does not
// reach, one event per line: "wm CH W", "idle CH", "end CH", "data CH",
// each followed by the decision: "->W" (forward W) and/or "idle" (go idle
// downstream), or "-" for nothing.
func TestWatermarkValve(t *testing.T) {
	for _, tc := range []struct {
		name     string
		channels int
		trace    string
	}{
		{"the last channel to go idle flushes the largest watermark", 2, `
wm 0 50    -
wm 1 10    ->10
idle 0     -
idle 1     ->50 idle
wm 1 20    -
data 0     -
wm 0 60    -
wm 1 55    ->55
wm 1 70    ->60`},
		{"an end leaving only idle channels goes idle", 3, `
wm 0 5     -
wm 1 7     -
wm 2 9     ->5
idle 1     -
wm 0 9223372036854775807 ->9
end 0      -
idle 2     idle
data 1     -
wm 1 12    ->12
wm 2 12    -
wm 2 15    -
wm 1 20    ->15`},
		{"an end without +inf (a stopped upstream) holds the watermark", 2, `
wm 0 5     -
wm 1 9     ->5
end 0      -
wm 1 12    -
idle 1     idle`},
		{"a lower watermark on a channel is ignored", 1, `
wm 0 10    ->10
wm 0 8     -
wm 0 11    ->11`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newWatermarkValve(tc.channels)
			for _, line := range strings.Split(strings.TrimSpace(tc.trace), "\n") {
				f := strings.Fields(line)
				ch, _ := strconv.Atoi(f[1])
				var (
					wm        int64
					adv, idle bool
				)
				want := f[2:]
				switch f[0] {
				case "wm":
					w, _ := strconv.ParseInt(f[2], 10, 64)
					want = f[3:]
					wm, adv = v.Watermark(ch, w)
				case "idle":
					wm, adv, idle = v.Idle(ch)
				case "end":
					wm, adv, idle = v.End(ch)
				case "data":
					v.activate(ch)
				}
				var got []string
				if adv {
					got = append(got, "->"+fmtWM(wm))
				}
				if idle {
					got = append(got, "idle")
				}
				if len(got) == 0 {
					got = []string{"-"}
				}
				if g, w := strings.Join(got, " "), strings.Join(want, " "); g != w {
					t.Fatalf("%q: got %q, want %q", line, g, w)
				}
			}
		})
	}
}

// lateCheck passes rows on and checks event time as a running job sees it:
// its watermarks advance strictly, no row comes behind the watermark (the
// input's disorder stays within the WATERMARK's delay), and +∞ comes last,
// before Finish.
type lateCheck struct {
	calcOp
	wms      []int64
	rows     int
	late     []string
	finished bool
	afterEnd bool // a watermark or a row after Finish or after +∞
}

func (c *lateCheck) Process(port int, b *types.Batch, out Emitter) error {
	wm := NoWatermark
	if len(c.wms) > 0 {
		wm = c.wms[len(c.wms)-1]
	}
	for i := range b.Len() {
		if ts := b.Row(i)[1].Int(); ts < wm {
			c.late = append(c.late, fmt.Sprintf("ts %d after watermark %s", ts, fmtWM(wm)))
		}
	}
	c.rows += b.Len()
	c.afterEnd = c.afterEnd || c.finished
	return c.calcOp.Process(port, b, out)
}

func (c *lateCheck) ProcessWatermark(wm int64, out Emitter) error {
	if n := len(c.wms); n > 0 && wm <= c.wms[n-1] {
		c.late = append(c.late, fmt.Sprintf("watermark %s after %s", fmtWM(wm), fmtWM(c.wms[n-1])))
	}
	c.afterEnd = c.afterEnd || c.finished
	c.wms = append(c.wms, wm)
	return ForwardWatermark(out, wm)
}

func (c *lateCheck) Finish(Emitter) error { c.finished = true; return nil }

// TestWatermarksInARunningJob runs a bounded source (parallelism 2, rows out
// of order by up to the watermark's delay) through a hash exchange into two
// checking subtasks, with a watermark after every batch.
func TestWatermarksInARunningJob(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	const n, delay = 5000, 50
	src := &sliceSource{width: 2}
	for i := range n {
		ts := int64(1_700_000_000_000 + i*10 - rng.Intn(delay/2))
		src.rows = append(src.rows, []types.Value{types.BigIntValue(int64(i)), types.TimestampValue(ts)})
	}
	ts := expr.NewColumn(1, types.Timestamp, "ts")
	wmExpr, err := expr.NewArith("-", ts, expr.NewLiteral(types.IntervalValue(delay), types.Interval))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var checks []*lateCheck
	sink := &collectSink{}
	g := &JobGraph{Name: "wm-run", Vertices: []*Vertex{
		{Name: "Source", Parallelism: 2, Source: src, SourceWidth: 2, SourceName: "src",
			Watermark: &WatermarkSpec{Column: 1, Expr: wmExpr}},
		{Name: "Check", Parallelism: 2, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Check", ID: "check", OutWidth: 2, New: func() Operator {
				c := &lateCheck{}
				mu.Lock()
				checks = append(checks, c)
				mu.Unlock()
				return c
			}}},
			Sink: sink, SinkName: "out"},
	}}
	j, err := Start(context.Background(), g, Options{BatchSize: 8, AutoWatermarkInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for i, c := range checks {
		rows += c.rows
		if len(c.late) > 0 {
			t.Errorf("subtask %d: %d late rows or watermarks, first: %s", i, len(c.late), c.late[0])
		}
		if len(c.wms) < 2 || c.wms[len(c.wms)-1] != MaxWatermark {
			t.Errorf("subtask %d: watermarks %v, want several ending in +inf", i, c.wms)
		}
		if !c.finished || c.afterEnd {
			t.Errorf("subtask %d: finished %v, something after Finish %v", i, c.finished, c.afterEnd)
		}
	}
	if rows != n || len(sink.rows) != n {
		t.Errorf("%d rows checked, %d written, want %d", rows, len(sink.rows), n)
	}
	for _, v := range j.Metrics().Vertices {
		if v.Watermark != MaxWatermark {
			t.Errorf("vertex %s: watermark metric %s at the end, want +inf", v.Name, FormatWatermark(v.Watermark))
		}
	}
}
