package exec

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/weir-sql/weir/types"
)

// endLog records, per subtask, the calls a task makes to an
// InputEndOperator (endRecorder).
type endLog struct {
	mu     sync.Mutex
	events [][]string // per subtask: "row p", "end p", "finish"
	rows   [2]int     // rows per port over the subtasks, before their port's end
	ended1 int        // subtasks that saw port 1 end
	all1   chan struct{}
	par    int
}

// endRecorder passes its rows on and records the calls in its log.
type endRecorder struct {
	log *endLog
	sub int
}

func (r *endRecorder) Open(ctx *OpContext) error {
	r.sub = ctx.Subtask
	return nil
}

func (r *endRecorder) note(ev string) {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	r.log.events[r.sub] = append(r.log.events[r.sub], ev)
}

func (r *endRecorder) Process(port int, b *types.Batch, out Emitter) error {
	r.log.mu.Lock()
	r.log.rows[port] += b.Len()
	r.log.mu.Unlock()
	r.note(fmt.Sprint("row ", port))
	return out.Emit(b)
}

func (r *endRecorder) EndInput(port int, _ Emitter) error {
	r.note(fmt.Sprint("end ", port))
	if port == 1 {
		r.log.mu.Lock()
		r.log.ended1++
		if r.log.ended1 == r.log.par {
			close(r.log.all1)
		}
		r.log.mu.Unlock()
	}
	return nil
}

func (r *endRecorder) Finish(Emitter) error {
	r.note("finish")
	return nil
}

func (r *endRecorder) Close() error { return nil }

// TestTaskEndInput checks the task's calls to an InputEndOperator heading
// a chain of two input ports: port 1 (a bounded source of three subtasks)
// ends while port 0 (a trickle, ended only once every subtask saw port 1
// end) still sends rows; each subtask gets EndInput once per port, only
// after every row of the port (no row of a port after its end), and
// Finish after both.
func TestTaskEndInput(t *testing.T) {
	const par = 2
	var dim [][]types.Value
	for i := range 500 {
		dim = append(dim, bigints(i, i%7))
	}
	log := &endLog{events: make([][]string, par), all1: make(chan struct{}), par: par}
	trickle := &trickleSource{done: make(chan struct{})}
	go func() {
		<-log.all1
		close(trickle.done)
	}()
	sink := &collectSink{}
	g := &JobGraph{Name: "endinput", Vertices: []*Vertex{
		{ID: "s0", Name: "S0", Parallelism: 1, Source: trickle, SourceWidth: 2, SourceName: "facts"},
		{ID: "s1", Name: "S1", Parallelism: 3, Source: &sliceSource{width: 2, rows: dim}, SourceWidth: 2, SourceName: "dim"},
		{Name: "J", Parallelism: par,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}},
				{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{0}}, Port: 1}},
			Operators: []OperatorSpec{{Name: "Rec", ID: "rec", OutWidth: 2, New: func() Operator { return &endRecorder{log: log} }}},
			Sink:      sink, SinkName: "out"},
	}}
	runJob(t, g, Options{BatchSize: 16})
	if log.rows[1] != len(dim) {
		t.Fatalf("%d rows of port 1, want %d", log.rows[1], len(dim))
	}
	for sub, evs := range log.events {
		var ends [2]int
		finished := false
		for i, ev := range evs {
			if finished {
				t.Fatalf("subtask %d: %s after finish: %v", sub, ev, evs[max(0, i-3):])
			}
			switch ev {
			case "end 0", "end 1":
				ends[ev[4]-'0']++
			case "row 0", "row 1":
				if ends[ev[4]-'0'] > 0 {
					t.Fatalf("subtask %d: %s after the port's end", sub, ev)
				}
			case "finish":
				if ends != [2]int{1, 1} {
					t.Fatalf("subtask %d: finish after ends %v, want one per port", sub, ends)
				}
				finished = true
			}
		}
		if !finished {
			t.Fatalf("subtask %d: no finish: %v", sub, evs)
		}
	}
}

// TestTaskEndInputNotOnStop checks that a stopped input is not an ended
// one: port 0 reads an unbounded source through a task of its own, port 1
// a bounded one; once every subtask saw port 1 end (EndInput(1)), the job
// is stopped (Job.Stop), and the end of input that the stop sends down
// the chain, marked stopped, must not reach EndInput(0) (a restore goes
// on with that input), while Finish still comes.
func TestTaskEndInputNotOnStop(t *testing.T) {
	const par = 2
	var dim [][]types.Value
	for i := range 300 {
		dim = append(dim, bigints(i, i%7))
	}
	log := &endLog{events: make([][]string, par), all1: make(chan struct{}), par: par}
	sink := &collectSink{}
	g := &JobGraph{Name: "endstop", Vertices: []*Vertex{
		{ID: "s0", Name: "S0", Parallelism: 1, Source: counterSource{}, SourceWidth: 2, SourceName: "facts"},
		{Name: "Pass", Parallelism: 2, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}}}},
		{ID: "s1", Name: "S1", Parallelism: 3, Source: &sliceSource{width: 2, rows: dim}, SourceWidth: 2, SourceName: "dim"},
		{Name: "J", Parallelism: par,
			Inputs: []Input{{From: 1, Partition: Partitioning{Kind: Rebalance}},
				{From: 2, Partition: Partitioning{Kind: Hash, Keys: []int{0}}, Port: 1}},
			Operators: []OperatorSpec{{Name: "Rec", ID: "rec", OutWidth: 2, New: func() Operator { return &endRecorder{log: log} }}},
			Sink:      sink, SinkName: "out"},
	}}
	j, err := Start(context.Background(), g, Options{BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	<-log.all1
	j.Stop()
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	for sub, evs := range log.events {
		var ends [2]int
		finished := false
		for _, ev := range evs {
			switch ev {
			case "end 0", "end 1":
				ends[ev[4]-'0']++
			case "finish":
				finished = true
			}
		}
		if ends != [2]int{0, 1} || !finished {
			t.Fatalf("subtask %d: ends %v (want none of the stopped port 0, one of port 1), finished %v", sub, ends, finished)
		}
	}
}
