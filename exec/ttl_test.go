package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// This file tests the state TTL (Options.StateTTL, 'table.exec.state.ttl')
// as it reaches a KeyedOperator: a running sum per key whose state expires
// when the key was not written for the TTL, so that its sum starts from
// zero again, as in Flink.

// runningSum emits +I(k, sum of v so far) for each row (k BIGINT, v BIGINT),
// the sum kept in a ValueState.
type runningSum struct {
	rk  *RowKey
	sum *state.ValueState[int64]
	k   *state.Keyed
	out *types.Batch
}

func (o *runningSum) Open(ctx *OpContext) error {
	o.rk, o.out = NewRowKey([]int{0}, ctx.MaxParallelism), types.NewBatch(2, 16)
	return nil
}

func (o *runningSum) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	o.sum, err = state.NewValueState(k, "sum", state.Int64{})
	return err
}

func (o *runningSum) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	for i := range b.Len() {
		row := b.Row(i)
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		s, _, err := o.sum.Value()
		if err != nil {
			return err
		}
		s += row[1].Int()
		if err := o.sum.Update(s); err != nil {
			return err
		}
		o.out.Append(types.Insert, []types.Value{row[0], types.BigIntValue(s)})
	}
	return out.Emit(o.out)
}

func (o *runningSum) OnTimer(state.Timer, Emitter) error {
	return fmt.Errorf("no timer was registered")
}
func (o *runningSum) Finish(Emitter) error { return nil }
func (o *runningSum) Close() error         { return nil }

// ttlHarness runs source S (parallelism 1) → HASH → runningSum at
// parallelism p with the given TTL, the test being the scheduler and the
// clock: before each batch it advances the keyed tasks' processing time.
type ttlHarness struct {
	t      *testing.T
	j      *Job
	src    *task
	reader *posReader
	keyed  []*task
	sink   *recordSink
}

// start makes the job of graph g (vertex 0 the source S, vertex 1 the
// keyed vertex at parallelism par), opens its tasks and closes them when
// the test ends.
func (h *ttlHarness) start(g *JobGraph, opts Options, par int) {
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
	t.Cleanup(func() {
		for _, tk := range tasks {
			_ = tk.close(nil)
		}
		j.cancel()
	})
}

func newTTLHarness(t *testing.T, par int, ttl time.Duration, ck *CheckpointOptions) *ttlHarness {
	h := &ttlHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	g := &JobGraph{Name: "ttl", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s"},
		{Name: "Sum", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "RunningSum", ID: "rs", OutWidth: 2, New: func() Operator { return &runningSum{} }}},
			Sink:      h.sink, SinkName: "out"},
	}}
	h.start(g, Options{BatchSize: 16, ChannelBuffer: 64, StateTTL: ttl, Checkpoint: ck}, par)
	return h
}

// emit advances the keyed tasks' clock to now, then S reads rows and the
// keyed subtasks handle them.
func (h *ttlHarness) emit(now time.Time, rows [][]types.Value) {
	h.advance(now)
	b := types.NewBatch(2, len(rows))
	for _, r := range rows {
		b.Append(types.Insert, r)
	}
	h.reader.pos += int64(len(rows))
	if err := h.src.push(0, b); err != nil {
		h.t.Fatal(err)
	}
	if err := h.src.flush(); err != nil {
		h.t.Fatal(err)
	}
	for _, tk := range h.keyed {
		drainInbox(h.t, tk)
	}
}

func (h *ttlHarness) advance(now time.Time) {
	for _, tk := range h.keyed {
		if err := tk.processingTime(now); err != nil {
			h.t.Fatal(err)
		}
	}
}

// pendingTimers reports whether any keyed subtask has a processing-time
// timer (here: TTL timers only).
func (h *ttlHarness) pendingTimers(now time.Time) bool {
	for _, tk := range h.keyed {
		if _, ok, err := tk.nextProcessingTimer(now); err != nil {
			h.t.Fatal(err)
		} else if ok {
			return true
		}
	}
	return false
}

// drainInbox lets tk handle every message waiting in its inbox (and what
// that released), then flush.
func drainInbox(t *testing.T, tk *task) {
	t.Helper()
	for {
		var m message
		select {
		case m = <-tk.inbox:
		default:
			if err := tk.flush(); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := tk.handle(m); err != nil {
			t.Fatal(err)
		}
		for len(tk.replay) > 0 {
			m := tk.replay[0]
			tk.replay = tk.replay[1:]
			if err := tk.handle(m); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkpoint takes a checkpoint through S and the keyed subtasks.
func (h *ttlHarness) checkpoint() *checkpoint.Checkpoint {
	ck := h.j.ck
	a := ck.coord.Trigger(time.Now())
	ck.do([]coordinator.Action{a})
	<-h.src.trigger
	if err := h.src.sourceCheckpoint(a.ID); err != nil {
		h.t.Fatal(err)
	}
	for _, tk := range h.keyed {
		drainInbox(h.t, tk)
	}
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

// ttlModel is the Go answer: per key the sum and the last write time; a
// key not written for ttl starts from zero.
type ttlModel struct {
	ttl  int64
	sum  map[int64]int64
	last map[int64]int64
}

func (m *ttlModel) add(now, k, v int64) string {
	if l, ok := m.last[k]; ok && l+m.ttl <= now {
		delete(m.sum, k)
	}
	m.sum[k] += v
	m.last[k] = now
	return types.FormatRow(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(m.sum[k])})
}

// ttlStep is one batch of rows at one time.
type ttlStep struct {
	at   int64 // ms after the start
	rows [][]types.Value
}

func ttlSteps(seed uint64, n int) []ttlStep {
	rng := rand.New(rand.NewPCG(seed, 7))
	var steps []ttlStep
	at := int64(0)
	for range n {
		at += rng.Int64N(400)
		s := ttlStep{at: at}
		for range 1 + rng.IntN(4) {
			s.rows = append(s.rows, []types.Value{types.BigIntValue(rng.Int64N(6)), types.BigIntValue(1 + rng.Int64N(9))})
		}
		steps = append(steps, s)
	}
	return steps
}

// TestStateTTLKeyedOperator checks that Options.StateTTL reaches a
// KeyedOperator: keys not written for the TTL lose their state (the sum
// starts from zero), keys written again within it keep theirs, in memory
// and over checkpointed state; a checkpoint restored (at the same and at
// another parallelism) keeps the TTL timers, which then expire the
// restored keys. The expected output is computed by a Go model.
func TestStateTTLKeyedOperator(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	const ttl = 1000
	steps := ttlSteps(seed, 60)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int64) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	run := func(t *testing.T, h *ttlHarness, m *ttlModel, steps []ttlStep) {
		t.Helper()
		h.sink.rows = nil
		var want []string
		for _, s := range steps {
			h.emit(at(s.at), s.rows)
			for _, r := range s.rows {
				want = append(want, m.add(s.at, r[0].Int(), r[1].Int()))
			}
		}
		if got := sortedCopy(h.sink.rows); !slices.Equal(got, sortedCopy(want)) {
			t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, sortedCopy(want))
		}
	}
	expired := 0
	{
		m := &ttlModel{ttl: ttl, sum: map[int64]int64{}, last: map[int64]int64{}}
		for _, s := range steps {
			for _, r := range s.rows {
				if l, ok := m.last[r[0].Int()]; ok && l+ttl <= s.at {
					expired++
				}
				m.add(s.at, r[0].Int(), r[1].Int())
			}
		}
		if expired == 0 {
			t.Fatalf("seed %d: no key expired: the test proves nothing", seed)
		}
	}
	end := steps[len(steps)-1].at

	t.Run("memory", func(t *testing.T) {
		h := newTTLHarness(t, 2, ttl*time.Millisecond, nil)
		m := &ttlModel{ttl: ttl, sum: map[int64]int64{}, last: map[int64]int64{}}
		run(t, h, m, steps)
		if !h.pendingTimers(at(end)) {
			t.Fatal("no TTL timer pending for the keys written last")
		}
		h.advance(at(end + ttl))
		if h.pendingTimers(at(end + ttl)) {
			t.Fatal("TTL timers still pending after every key expired")
		}
	})
	t.Run("off", func(t *testing.T) {
		// Without a TTL nothing expires: the sums never restart.
		h := newTTLHarness(t, 2, 0, nil)
		m := &ttlModel{ttl: 1 << 62, sum: map[int64]int64{}, last: map[int64]int64{}}
		run(t, h, m, steps)
	})
	for _, pp := range [][2]int{{2, 2}, {2, 3}, {3, 1}} {
		t.Run(fmt.Sprintf("checkpoint-p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			dir := t.TempDir()
			cut := len(steps) / 2
			h := newTTLHarness(t, pp[0], ttl*time.Millisecond, testCheckpointing(t, dir, "ttl", nil, 1<<12))
			m := &ttlModel{ttl: ttl, sum: map[int64]int64{}, last: map[int64]int64{}}
			run(t, h, m, steps[:cut])
			c := h.checkpoint()

			r := newTTLHarness(t, pp[1], ttl*time.Millisecond, testCheckpointing(t, t.TempDir(), "ttl", c, 1<<12))
			if !r.pendingTimers(at(steps[cut-1].at)) {
				t.Fatal("the restored job has no TTL timer")
			}
			run(t, r, m, steps[cut:])
			r.advance(at(end + ttl))
			if r.pendingTimers(at(end + ttl)) {
				t.Fatal("TTL timers still pending after every key expired")
			}
		})
	}
}
