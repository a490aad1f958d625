package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// This file is the worked example of DESIGN.md as a deterministic test. Two
// sources S1 and S2 each emit 1, 2, 3, ...; two sum subtasks sum by parity
// (the test routes parity p to subtask p). The test is the scheduler: it
// plays the sources, and it decides which logical channel delivers its next
// message to which sum subtask, so the interleaving is exactly the one the
// design describes. The sum subtasks are the runtime's real tasks (input
// gate, GroupAgg, state store, snapshot, ack) driven one message at a time;
// the checkpointer is the real one, stepped by hand.

// posReader is a source reader whose position the scheduler sets.
type posReader struct {
	pos      int64
	restored int64
}

func (r *posReader) Next(context.Context, *types.Batch, int) error { return nil }
func (r *posReader) Position() ([]byte, error) {
	return binary.AppendVarint(nil, r.pos), nil
}
func (r *posReader) Seek(p []byte) error {
	v, n := binary.Varint(p)
	if n <= 0 {
		return fmt.Errorf("bad position")
	}
	r.pos, r.restored = v, v
	return nil
}
func (r *posReader) Close() error { return nil }

type posSource struct{ r *posReader }

func (s posSource) Bounded() bool                                 { return false }
func (s posSource) Open(int, int) (connector.SourceReader, error) { return s.r, nil }

// sumSink records, per subtask, the sums the GroupAgg emitted (+I/+U).
type sumSink struct{ sums [2][]int64 }

func (s *sumSink) AcceptsUpdates() bool { return true }
func (s *sumSink) Parallelism() int     { return 0 }
func (s *sumSink) Open(sub, _ int) (connector.SinkWriter, error) {
	return sumWriter{s, sub}, nil
}

type sumWriter struct {
	s   *sumSink
	sub int
}

func (w sumWriter) Write(b *types.Batch) error {
	for i := range b.Len() {
		if k := b.Kinds[i]; k == types.Insert || k == types.UpdateAfter {
			w.s.sums[w.sub] = append(w.s.sums[w.sub], b.Row(i)[1].Int())
		}
	}
	return nil
}
func (w sumWriter) Flush() error { return nil }
func (w sumWriter) Close() error { return nil }

// parityHarness holds the job under the scheduler's control.
type parityHarness struct {
	t      *testing.T
	j      *Job
	src    [2]*task           // S1, S2
	sum    [2]*task           // even, odd subtask
	reader [2]*posReader      // S1, S2 positions
	next   [2]int64           // next number each source emits
	queues [2][2]chan message // [sum subtask][channel]: the channel's messages in flight
	chanOf [2][2]int32        // [sum subtask][source]: logical channel index
	sink   *sumSink
}

func newParityHarness(t *testing.T, dir string, restore *checkpoint.Checkpoint) *parityHarness {
	h := &parityHarness{t: t, reader: [2]*posReader{{}, {}}, sink: &sumSink{}}
	g := &JobGraph{Name: "parity", Vertices: []*Vertex{
		{ID: "s1", Name: "S1", Parallelism: 1, Source: posSource{h.reader[0]}, SourceWidth: 2, SourceName: "s1"},
		{ID: "s2", Name: "S2", Parallelism: 1, Source: posSource{h.reader[1]}, SourceWidth: 2, SourceName: "s2"},
		{Name: "Sum", Parallelism: 2,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}},
				{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "GroupAggregate(sum by parity)", ID: "sum", OutWidth: 2,
				New: NewGroupAgg([]int{0}, []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt, Name: "SUM(n)"}})}},
			Sink: h.sink, SinkName: "sums"},
	}}
	opts := Options{BatchSize: 16, ChannelBuffer: 8, Checkpoint: testCheckpointing(t, dir, "parity", restore, statestore.DefaultCacheBytes)}
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
			h.sum[tk.subtask] = tk
		}
	}
	// Give every logical channel into a sum subtask its own queue, so the
	// scheduler picks which channel delivers next.
	for sub, tk := range h.sum {
		for ch, l := range tk.links {
			q := make(chan message, 64)
			h.queues[sub][ch] = q
			l.inbox = q
		}
	}
	for src := range 2 {
		for sub := range 2 {
			h.chanOf[sub][src] = h.src[src].outEdges[0].dests[sub].link.ch
		}
	}
	for _, tk := range tasks {
		if err := tk.open(); err != nil {
			t.Fatal(err)
		}
	}
	h.next = [2]int64{h.reader[0].restored + 1, h.reader[1].restored + 1}
	t.Cleanup(func() {
		for _, tk := range tasks {
			_ = tk.close(nil)
		}
		j.cancel()
	})
	return h
}

// emit makes source src (0 = S1, 1 = S2) emit its next number, routed to
// the subtask of its parity; the message waits on its channel.
func (h *parityHarness) emit(src int) {
	n := h.next[src]
	h.next[src]++
	h.reader[src].pos = n
	sub := int(n % 2)
	d := h.src[src].outEdges[0].dests[sub]
	b := types.NewBatch(2, 1)
	b.Append(types.Insert, []types.Value{types.BigIntValue(n % 2), types.BigIntValue(n)})
	if err := d.link.send(h.j.ctx, h.j, message{batch: b, ch: d.link.ch, kind: msgData}); err != nil {
		h.t.Fatal(err)
	}
}

// deliver hands the next message of channel (sum subtask sub, source src)
// to the subtask, which handles it and then what it released, as its run
// loop does.
func (h *parityHarness) deliver(sub, src int) {
	tk := h.sum[sub]
	var m message
	select {
	case m = <-h.queues[sub][h.chanOf[sub][src]]:
	default:
		h.t.Fatalf("nothing in flight from S%d to subtask %d", src+1, sub)
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

// trigger starts checkpoint id (the coordinator's next) and lets source src
// take it: record its position, broadcast the barrier, ack.
func (h *parityHarness) trigger() int64 {
	ck := h.j.ck
	a := ck.coord.Trigger(time.Now())
	ck.do([]coordinator.Action{a})
	// The trigger reached the source tasks' trigger channels; drain them.
	for _, s := range h.src {
		<-s.trigger
	}
	return a.ID
}

// sourceBarrier lets source src take checkpoint id now.
func (h *parityHarness) sourceBarrier(src int, id int64) {
	if err := h.src[src].sourceCheckpoint(id); err != nil {
		h.t.Fatal(err)
	}
}

// acks feeds what the tasks told the checkpointer to it.
func (h *parityHarness) acks() {
	ck := h.j.ck
	for {
		select {
		case ev := <-ck.events:
			ck.handle(ev)
		default:
			return
		}
	}
}

func (h *parityHarness) sums(sub int) string {
	var s []string
	for _, v := range h.sink.sums[sub] {
		s = append(s, strconv.FormatInt(v, 10))
	}
	return strings.Join(s, " ")
}

// storedSums reads the sums of operator "sum" from a checkpoint's state.
func storedSums(t *testing.T, c *checkpoint.Checkpoint) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	for sub := range 2 {
		dir, ok := c.SubtaskDir("sum", sub)
		if !ok {
			continue
		}
		st, err := statestore.Restore(dir, t.TempDir(), statestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sp, err := st.Space("sum")
		if err != nil {
			t.Fatal(err)
		}
		prefix := append([]byte{byte(len(groupsStateName))}, groupsStateName...)
		for kg := range types.DefaultMaxParallelism {
			err = sp.Scan(kg, prefix, nil, false, func(key, val []byte) (bool, error) {
				k, _, err := state.DecodeValue(key[len(prefix):])
				if err != nil {
					return false, err
				}
				// version, INT and TIMESTAMP_LTZ key masks, row count, then
				// SUM's state: sum, non-NULL count.
				_, rest, err := readUvarint(val[1:])
				if err != nil {
					return false, err
				}
				if _, rest, err = readUvarint(rest); err != nil {
					return false, err
				}
				if _, rest, err = readVarint(rest); err != nil {
					return false, err
				}
				sum, _, err := readVarint(rest)
				out[k.Int()] = sum
				return true, err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func sourcePositions(t *testing.T, c *checkpoint.Checkpoint) string {
	var out []string
	for _, sp := range c.Meta.Sources {
		v, _ := binary.Varint(sp.Position)
		out = append(out, fmt.Sprintf("%s=%d", sp.Source, v))
	}
	return strings.Join(out, " ")
}

func TestWorkedExample(t *testing.T) {
	dir := t.TempDir()
	const even, odd, s1, s2 = 0, 1, 0, 1
	h := newParityHarness(t, dir, nil)

	// Checkpoint 1 once both sources emitted 1.
	h.emit(s1)
	h.deliver(odd, s1)
	h.emit(s2)
	h.deliver(odd, s2)
	id := h.trigger()
	h.sourceBarrier(s1, id)
	h.sourceBarrier(s2, id)
	for _, sub := range []int{even, odd} {
		h.deliver(sub, s1)
		h.deliver(sub, s2)
	}
	h.acks()
	if id != 1 || h.j.ck.coord.LastCompleted() != 1 {
		t.Fatalf("checkpoint 1 did not complete (id %d, last %d)", id, h.j.ck.coord.LastCompleted())
	}

	// S1 emits 2, 3; S2 emits 2, 3; all delivered.
	h.emit(s1)
	h.deliver(even, s1)
	h.emit(s2)
	h.deliver(even, s2)
	h.emit(s1)
	h.deliver(odd, s1)
	h.emit(s2)
	h.deliver(odd, s2)
	// S2 emits 4 (not yet delivered); checkpoint 2 cuts S1 after 3 and S2 after 4.
	h.emit(s2)
	id = h.trigger()
	h.sourceBarrier(s1, id)
	h.sourceBarrier(s2, id)
	// Behind the barriers: S1 emits 4 and 5, S2 emits 5 and 6.
	h.emit(s1)
	h.emit(s1)
	h.emit(s2)
	h.emit(s2)

	// The even subtask gets S1's barrier first: S1's 4 is held, S2's 4 is
	// added (8); S2's barrier aligns it; then the held 4 (12), then S2's 6 (18).
	h.deliver(even, s1) // barrier
	h.deliver(even, s1) // 4, held
	h.deliver(even, s2) // 4
	h.deliver(even, s2) // barrier: aligned, snapshot 8, then the held 4
	h.deliver(even, s2) // 6
	// The odd subtask gets S2's barrier first and holds S2's 5 until S1's
	// barrier comes: snapshot 8, then 13 (S2's 5), then 18 (S1's 5).
	h.deliver(odd, s2) // barrier
	h.deliver(odd, s2) // 5, held
	h.deliver(odd, s1) // barrier: aligned, snapshot 8, then the held 5
	h.deliver(odd, s1) // 5
	h.acks()

	if got, want := h.sums(even), "2 4 8 12 18"; got != want {
		t.Errorf("even subtask emitted sums %q, want %q", got, want)
	}
	if got, want := h.sums(odd), "1 2 5 8 13 18"; got != want {
		t.Errorf("odd subtask emitted sums %q, want %q", got, want)
	}
	st := h.j.opts.Checkpoint.Storage
	latest, skipped, err := st.Latest()
	if err != nil || len(skipped) != 0 {
		t.Fatalf("latest checkpoint: %v (skipped %v)", err, skipped)
	}
	if latest.Meta.CheckpointID != 2 {
		t.Fatalf("latest checkpoint is %d, want 2", latest.Meta.CheckpointID)
	}
	if got, want := sourcePositions(t, latest), "s1=3 s2=4"; got != want {
		t.Errorf("checkpoint 2 source positions %q, want %q", got, want)
	}
	if got := storedSums(t, latest); got[0] != 8 || got[1] != 8 || len(got) != 2 {
		t.Errorf("checkpoint 2 state %v, want even 8, odd 8", got)
	}

	// Restore checkpoint 2 and replay what followed the cut: the final sums
	// equal those of the uninterrupted run (18 and 18).
	r := newParityHarness(t, t.TempDir(), latest)
	if r.next != [2]int64{4, 5} {
		t.Fatalf("restored sources continue at %v, want S1 at 4, S2 at 5", r.next)
	}
	r.emit(s1) // 4
	r.deliver(even, s1)
	r.emit(s1) // 5
	r.deliver(odd, s1)
	r.emit(s2) // 5
	r.deliver(odd, s2)
	r.emit(s2) // 6
	r.deliver(even, s2)
	if got, want := r.sums(even), "12 18"; got != want {
		t.Errorf("restored even subtask emitted %q, want %q", got, want)
	}
	if got, want := r.sums(odd), "13 18"; got != want {
		t.Errorf("restored odd subtask emitted %q, want %q", got, want)
	}
}
