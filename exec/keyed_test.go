package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// This file tests KeyedOperator: keyed state and event-time timers wired
// into the task. tumbleCount is a tumbling-window count written as a small
// keyed operator: rows (k BIGINT, ts TIMESTAMP) are counted per key and
// window in a MapState (window end → count, as windows of one key may be
// open at once under out-of-order input), and an event-time timer at the
// window's end emits +I(k, window end, count) when the watermark reaches it.

type tumbleCount struct {
	size   int64
	rk     *RowKey
	k      *state.Keyed
	counts *state.MapState[int64, int64]
	// lastFired checks that timers fire in timestamp order.
	lastFired int64
	out       *types.Batch
}

func newTumbleCount(size int64) func() Operator {
	return func() Operator { return &tumbleCount{size: size} }
}

func (o *tumbleCount) Open(ctx *OpContext) error {
	o.rk = NewRowKey([]int{0}, ctx.MaxParallelism)
	o.out = types.NewBatch(3, 1)
	o.lastFired = NoWatermark
	return nil
}

func (o *tumbleCount) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	o.counts, err = state.NewMapState(k, "counts", state.Int64{}, state.Int64{})
	return err
}

// windowEnd is the end (exclusive) of the window holding ts.
func windowEnd(ts, size int64) int64 {
	start := ts - ((ts%size)+size)%size
	return start + size
}

func (o *tumbleCount) Process(_ int, b *types.Batch, _ Emitter) error {
	for i := range b.Len() {
		row := b.Row(i)
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		end := windowEnd(row[1].Int(), o.size)
		if end <= o.k.Watermark() {
			return fmt.Errorf("late row %v at watermark %d", row, o.k.Watermark())
		}
		n, _, err := o.counts.Get(end)
		if err != nil {
			return err
		}
		if err := o.counts.Put(end, n+1); err != nil {
			return err
		}
		if err := o.k.RegisterTimer(state.EventTime, end, nil); err != nil {
			return err
		}
	}
	return nil
}

func (o *tumbleCount) OnTimer(tm state.Timer, out Emitter) error {
	if tm.Domain != state.EventTime || tm.Timestamp > o.k.Watermark() || tm.Timestamp < o.lastFired {
		return fmt.Errorf("timer %d (%v) fired at watermark %d after %d", tm.Timestamp, tm.Domain, o.k.Watermark(), o.lastFired)
	}
	o.lastFired = tm.Timestamp
	n, ok, err := o.counts.Get(tm.Timestamp)
	if err != nil || !ok {
		return fmt.Errorf("timer %d without a count: %v", tm.Timestamp, err)
	}
	if err := o.counts.Remove(tm.Timestamp); err != nil {
		return err
	}
	key, _, err := state.DecodeValue(tm.Key)
	if err != nil {
		return err
	}
	o.out.Reset()
	o.out.Append(types.Insert, []types.Value{key, types.TimestampValue(tm.Timestamp), types.BigIntValue(n)})
	return out.Emit(o.out)
}

func (o *tumbleCount) Finish(Emitter) error { return nil }
func (o *tumbleCount) Close() error         { return nil }

var _ KeyedOperator = (*tumbleCount)(nil)

const (
	tumbleSize  = 10 // ms
	tumbleDelay = 7  // the watermark delay, ms
)

// tumbleRows returns n rows (k, ts) out of order by up to tumbleDelay: row i
// has ts in [i*2, i*2+tumbleDelay], so no row is behind a watermark of
// max(ts) - tumbleDelay, on any subsequence of the rows either.
func tumbleRows(seed uint64, n, keys int) [][]types.Value {
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([][]types.Value, n)
	for i := range rows {
		ts := int64(i*2 + r.IntN(tumbleDelay+1))
		rows[i] = []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.TimestampValue(ts)}
	}
	return rows
}

// tumbleWant computes the windows' counts of rows in Go: window end → key
// → count.
func tumbleWant(rows [][]types.Value) map[int64]map[int64]int64 {
	want := map[int64]map[int64]int64{}
	for _, row := range rows {
		end := windowEnd(row[1].Int(), tumbleSize)
		if want[end] == nil {
			want[end] = map[int64]int64{}
		}
		want[end][row[0].Int()]++
	}
	return want
}

// tumbleFormat formats the windows ending at or before upTo as the rows
// tumbleCount emits, sorted.
func tumbleFormat(want map[int64]map[int64]int64, upTo int64) []string {
	var out []string
	for end, byKey := range want {
		if end > upTo {
			continue
		}
		for k, n := range byKey {
			out = append(out, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(k), types.TimestampValue(end), types.BigIntValue(n)}))
		}
	}
	slices.Sort(out)
	return out
}

func tumbleWatermark() *WatermarkSpec {
	ts := expr.NewColumn(1, types.Timestamp, "ts")
	delay, err := expr.NewArith("-", ts, expr.NewLiteral(types.IntervalValue(tumbleDelay), types.Interval))
	if err != nil {
		panic(err)
	}
	return &WatermarkSpec{Column: 1, Expr: delay}
}

// TestKeyedTumblingCountJob runs the tumbling count as a real job (two
// source subtasks generating watermarks every millisecond, a hash exchange,
// the keyed operator at parallelism 1 and 2, in memory and on state stores
// with checkpoints) and compares its output with the Go computation: each
// window of each key once, with its count.
func TestKeyedTumblingCountJob(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := tumbleRows(seed, 5000, 13)
	want := tumbleFormat(tumbleWant(rows), MaxWatermark)
	for _, par := range []int{1, 2} {
		for _, ckpt := range []bool{false, true} {
			t.Run(fmt.Sprintf("p%d/checkpoints=%v", par, ckpt), func(t *testing.T) {
				sink := &collectSink{}
				g := &JobGraph{Name: "tumble", Vertices: []*Vertex{
					{ID: "src", Name: "Source", Parallelism: 2, Source: &sliceSource{width: 2, rows: rows},
						SourceWidth: 2, SourceName: "src", Watermark: tumbleWatermark()},
					{Name: "Tumble", Parallelism: par,
						Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
						Operators: []OperatorSpec{{Name: "TumbleCount", ID: "tc", OutWidth: 3, New: newTumbleCount(tumbleSize)}},
						Sink:      sink, SinkName: "out"},
				}}
				opts := Options{BatchSize: 64, AutoWatermarkInterval: time.Millisecond}
				if ckpt {
					opts.Checkpoint = testCheckpointing(t, t.TempDir(), "tumble", nil, 1<<16)
					opts.Checkpoint.Interval, opts.Checkpoint.Retain = 5*time.Millisecond, 1
				}
				runJob(t, g, opts)
				got := slices.Clone(sink.rows)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: %d rows, want %d\n got  %.300v\n want %.300v", seed, len(got), len(want), got, want)
				}
			})
		}
	}
}

// recordSink keeps what its writers write at once (the harness runs every
// task on the test's goroutine).
type recordSink struct{ rows []string }

func (s *recordSink) AcceptsUpdates() bool { return true }
func (s *recordSink) Parallelism() int     { return 0 }
func (s *recordSink) Open(int, int) (connector.SinkWriter, error) {
	return recordWriter{s}, nil
}

type recordWriter struct{ s *recordSink }

func (w recordWriter) Write(b *types.Batch) error {
	for i := range b.Len() {
		w.s.rows = append(w.s.rows, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	return nil
}
func (w recordWriter) Flush() error { return nil }
func (w recordWriter) Close() error { return nil }

// tumbleHarness runs source S (parallelism 1, WATERMARK ts - 7 ms) → HASH
// → TumbleCount at parallelism p, with the test as the scheduler and the
// clock, as in the worked example: the tasks are the runtime's real ones.
type tumbleHarness struct {
	t      *testing.T
	j      *Job
	src    *task
	reader *posReader
	keyed  []*task
	sink   *recordSink
	now    time.Time
}

func newTumbleHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	g := &JobGraph{Name: "tumble", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Tumble", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "TumbleCount", ID: "tc", OutWidth: 3, New: newTumbleCount(tumbleSize)}},
			Sink:      h.sink, SinkName: "out"},
	}}
	// A small cache, so that state and timers go through Pebble.
	opts := Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval,
		Checkpoint: testCheckpointing(t, dir, "tumble", restore, 1<<12)}
	h.start(g, opts, par)
	return h
}

// start makes the job of graph g (vertex 0 the source S, vertex 1 the
// keyed vertex at parallelism par), opens its tasks, sets the clock and
// closes the tasks when the test ends.
func (h *tumbleHarness) start(g *JobGraph, opts Options, par int) {
	t := h.t
	j, tasks, err := newJob(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.j = j
	h.keyed = make([]*task, par)
	for _, tk := range tasks {
		if tk.vi == 0 {
			h.src = tk
		} else {
			h.keyed[tk.subtask] = tk
		}
	}
	for _, tk := range tasks {
		if err := tk.open(); err != nil {
			t.Fatal(err)
		}
	}
	h.now = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	h.src.lastWMEmit, h.src.lastData = h.now, h.now
	t.Cleanup(func() {
		for _, tk := range tasks {
			_ = tk.close(nil)
		}
		j.cancel()
	})
}

// emit makes S read rows, then lets the auto-watermark interval pass (S
// sends its watermark if it advanced), and the keyed subtasks handle all of
// it.
func (h *tumbleHarness) emit(rows [][]types.Value) {
	b := types.NewBatch(2, len(rows))
	for _, r := range rows {
		b.Append(types.Insert, r)
	}
	h.emitBatch(b)
}

// emitBatch reads b as the source's next rows, advances the clock by one
// watermark interval, flushes and delivers.
func (h *tumbleHarness) emitBatch(b *types.Batch) {
	s := h.src
	h.reader.pos += int64(b.Len())
	h.now = h.now.Add(wmInterval)
	if err := s.sourceRows(b, h.now); err != nil {
		h.t.Fatal(err)
	}
	if err := s.sourceTime(h.now, true); err != nil {
		h.t.Fatal(err)
	}
	if err := s.flush(); err != nil {
		h.t.Fatal(err)
	}
	h.deliver()
}

// deliver lets each keyed subtask handle every message waiting in its
// inbox, and what that released, then flush.
func (h *tumbleHarness) deliver() {
	for _, tk := range h.keyed {
		for {
			var m message
			got := false
			select {
			case m = <-tk.inbox:
				got = true
			default:
			}
			if !got {
				break
			}
			if err := tk.handle(m); err != nil {
				h.t.Fatal(err)
			}
			for len(tk.replay) > 0 {
				m := tk.replay[0]
				tk.replay = tk.replay[1:]
				if err := tk.handle(m); err != nil {
					h.t.Fatal(err)
				}
			}
		}
		if err := tk.flush(); err != nil {
			h.t.Fatal(err)
		}
	}
}

// watermark is S's last watermark.
func (h *tumbleHarness) watermark() int64 { return h.src.srcWM }

// end is the end of S's input: watermark +∞ fires every timer.
func (h *tumbleHarness) end() {
	if err := h.src.endWatermark(); err != nil {
		h.t.Fatal(err)
	}
	h.deliver()
}

// checkpoint takes a checkpoint through S and the keyed subtasks and
// returns it once complete.
func (h *tumbleHarness) checkpoint() *checkpoint.Checkpoint {
	ck := h.j.ck
	a := ck.coord.Trigger(time.Now())
	ck.do([]coordinator.Action{a})
	<-h.src.trigger
	if err := h.src.sourceCheckpoint(a.ID); err != nil {
		h.t.Fatal(err)
	}
	h.deliver()
	for {
		select {
		case ev := <-ck.events:
			ck.handle(ev)
			continue
		default:
		}
		break
	}
	if ck.coord.LastCompleted() != a.ID {
		h.t.Fatalf("checkpoint %d did not complete", a.ID)
	}
	c, _, err := h.j.opts.Checkpoint.Storage.Latest()
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// TestKeyedTimersCheckpointRestore drives the tumbling count through a
// checkpoint taken while windows are open, goes on past it (output a crash
// loses), then restores the checkpoint at the same and another parallelism
// and replays the rest. It checks that windows fire exactly when the
// watermark passes their end (the output after each watermark is the Go
// answer up to it), and that the output before the checkpoint plus the
// restored run's is each window once with its count: the timers pending
// at the checkpoint fire after the restore, once.
func TestKeyedTimersCheckpointRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := tumbleRows(seed, 600, 9)
	want := tumbleWant(rows)
	const batch, cut = 20, 300 // the checkpoint comes after row 300
	for _, pp := range [][2]int{{1, 1}, {2, 2}, {2, 1}, {1, 2}, {2, 3}} {
		t.Run(fmt.Sprintf("p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			dir := t.TempDir()
			h := newTumbleHarness(t, dir, pp[0], nil)
			for i := 0; i < cut; i += batch {
				h.emit(rows[i : i+batch])
				wm := h.watermark()
				if got, w := sortedCopy(h.sink.rows), tumbleFormat(want, wm); !slices.Equal(got, w) {
					t.Fatalf("seed %d: at watermark %d:\n got  %v\n want %v", seed, wm, got, w)
				}
			}
			c := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			wmAtCut := h.watermark()
			if len(tumbleFormat(want, MaxWatermark)) == len(tumbleFormat(want, wmAtCut)) {
				t.Fatalf("seed %d: no window open at the checkpoint", seed)
			}
			// The job goes on (windows fire), then dies: what follows the
			// checkpoint is lost.
			for i := cut; i < cut+5*batch; i += batch {
				h.emit(rows[i : i+batch])
			}
			if len(h.sink.rows) == len(before) {
				t.Fatalf("seed %d: no window fired after the checkpoint", seed)
			}

			r := newTumbleHarness(t, t.TempDir(), pp[1], c)
			if r.reader.restored != cut {
				t.Fatalf("restored source at %d, want %d", r.reader.restored, cut)
			}
			r.reader.pos = cut
			for i := cut; i < len(rows); i += batch {
				r.emit(rows[i:min(i+batch, len(rows))])
			}
			r.end()
			got := sortedCopy(append(before, r.sink.rows...))
			if w := tumbleFormat(want, MaxWatermark); !slices.Equal(got, w) {
				t.Fatalf("seed %d: before the checkpoint and after the restore:\n got  %v\n want %v", seed, got, w)
			}
		})
	}
}

// procTimerOp registers a processing-time timer 20 ms after each row and
// emits the row's key when it fires.
type procTimerOp struct {
	rk  *RowKey
	k   *state.Keyed
	out *types.Batch
}

func (o *procTimerOp) Open(ctx *OpContext) error {
	o.rk, o.out = NewRowKey([]int{0}, ctx.MaxParallelism), types.NewBatch(1, 1)
	return nil
}
func (o *procTimerOp) OpenKeyed(k *state.Keyed) error { o.k = k; return nil }
func (o *procTimerOp) Process(_ int, b *types.Batch, _ Emitter) error {
	for i := range b.Len() {
		if err := o.rk.Set(o.k, b.Row(i)); err != nil {
			return err
		}
		if err := o.k.RegisterTimer(state.ProcessingTime, time.Now().UnixMilli()+20, nil); err != nil {
			return err
		}
	}
	return nil
}
func (o *procTimerOp) OnTimer(tm state.Timer, out Emitter) error {
	if tm.Domain != state.ProcessingTime || tm.Timestamp > time.Now().UnixMilli() {
		return fmt.Errorf("timer %d (%v) fired early", tm.Timestamp, tm.Domain)
	}
	key, _, err := state.DecodeValue(tm.Key)
	if err != nil {
		return err
	}
	o.out.Reset()
	o.out.Append(types.Insert, []types.Value{key})
	return out.Emit(o.out)
}
func (o *procTimerOp) Finish(Emitter) error { return nil }
func (o *procTimerOp) Close() error         { return nil }

// TestKeyedProcessingTimeTimerWhileIdle checks that a processing-time timer
// fires in a task that waits for input that does not come: the source
// sends one row and then nothing until the timer's output reaches the sink.
func TestKeyedProcessingTimeTimerWhileIdle(t *testing.T) {
	src := &trickleSource{idle: true, done: make(chan struct{})}
	sink := &collectSink{firstWrite: make(chan struct{})}
	g := &JobGraph{Name: "proc", Vertices: []*Vertex{
		{ID: "src", Name: "Source", Parallelism: 1, Source: src, SourceWidth: 2, SourceName: "src"},
		{Name: "Timers", Parallelism: 2,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "ProcTimers", ID: "pt", OutWidth: 1, New: func() Operator { return &procTimerOp{} }}},
			Sink:      sink, SinkName: "out"},
	}}
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sink.firstWrite:
	case <-time.After(10 * time.Second):
		t.Error("the processing-time timer did not fire within 10 s")
	}
	close(src.done)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"+I[0]"}; !slices.Equal(sink.rows, want) {
		t.Fatalf("sink got %v, want %v", sink.rows, want)
	}
}
