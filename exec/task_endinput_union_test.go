package exec

import (
	"fmt"
	"sync"
	"testing"

	"github.com/weir-sql/weir/types"
)

// unionEndRecorder is endRecorder for TestTaskEndInputUnion: it counts,
// over the subtasks, the rows of port 0 from the bounded source (column 1
// not 0) and from the trickle (column 1 is 0) after them, and tells the
// test (allBounded) once every bounded row and then trickleAfter trickle
// rows came.
type unionEndRecorder struct {
	sub int
	u   *unionEndLog
}

type unionEndLog struct {
	mu           sync.Mutex
	events       [][]string
	bounded      int // rows of the bounded source on port 0, over the subtasks
	boundedTotal int
	after        int // trickle rows once every bounded row came
	trickleAfter int
	done         chan struct{} // closed once after reaches trickleAfter
}

func (r *unionEndRecorder) Open(ctx *OpContext) error {
	r.sub = ctx.Subtask
	return nil
}

func (r *unionEndRecorder) Process(port int, b *types.Batch, out Emitter) error {
	u := r.u
	u.mu.Lock()
	defer u.mu.Unlock()
	u.events[r.sub] = append(u.events[r.sub], fmt.Sprint("row ", port))
	if port == 0 {
		for i := range b.Len() {
			switch {
			case b.Row(i)[1].Int() != 0:
				u.bounded++
			case u.bounded == u.boundedTotal:
				u.after++
				if u.after == u.trickleAfter {
					close(u.done)
				}
			}
		}
	}
	return out.Emit(b)
}

func (r *unionEndRecorder) EndInput(port int, _ Emitter) error {
	r.u.mu.Lock()
	defer r.u.mu.Unlock()
	r.u.events[r.sub] = append(r.u.events[r.sub], fmt.Sprint("end ", port))
	return nil
}

func (r *unionEndRecorder) Finish(Emitter) error {
	r.u.mu.Lock()
	defer r.u.mu.Unlock()
	r.u.events[r.sub] = append(r.u.events[r.sub], "finish")
	return nil
}

func (r *unionEndRecorder) Close() error { return nil }

// TestTaskEndInputUnion checks a port that is the union of two inputs (as
// a UNION ALL feeding one side of a join): port 0 reads a bounded source
// of three subtasks and an unbounded trickle, which goes on well after
// the bounded source ended (it ends only once every bounded row and then
// 200 of its own rows came); port 1 a bounded source. EndInput(0) comes
// once per subtask, after every row of port 0, the trickle's too: the end
// of one of a port's inputs is not the port's end.
func TestTaskEndInputUnion(t *testing.T) {
	const par = 2
	var dim [][]types.Value
	for i := range 400 {
		dim = append(dim, bigints(i, 1+i%7))
	}
	u := &unionEndLog{events: make([][]string, par), boundedTotal: len(dim), trickleAfter: 200, done: make(chan struct{})}
	trickle := &trickleSource{done: u.done}
	sink := &collectSink{}
	g := &JobGraph{Name: "endunion", Vertices: []*Vertex{
		{ID: "s0", Name: "S0", Parallelism: 1, Source: trickle, SourceWidth: 2, SourceName: "facts"},
		{ID: "s1", Name: "S1", Parallelism: 3, Source: &sliceSource{width: 2, rows: dim}, SourceWidth: 2, SourceName: "more"},
		{ID: "s2", Name: "S2", Parallelism: 3, Source: &sliceSource{width: 2, rows: dim}, SourceWidth: 2, SourceName: "dim"},
		{Name: "J", Parallelism: par,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Rebalance}},
				{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{0}}},
				{From: 2, Partition: Partitioning{Kind: Hash, Keys: []int{0}}, Port: 1}},
			Operators: []OperatorSpec{{Name: "Rec", ID: "rec", OutWidth: 2, New: func() Operator { return &unionEndRecorder{u: u} }}},
			Sink:      sink, SinkName: "out"},
	}}
	runJob(t, g, Options{BatchSize: 16})
	for sub, evs := range u.events {
		var ends [2]int
		for i, ev := range evs {
			switch ev {
			case "end 0", "end 1":
				ends[ev[4]-'0']++
			case "row 0", "row 1":
				if ends[ev[4]-'0'] > 0 {
					t.Fatalf("subtask %d: %s after the port's end: %v", sub, ev, evs[max(0, i-3):min(len(evs), i+2)])
				}
			}
		}
		if ends != [2]int{1, 1} || evs[len(evs)-1] != "finish" {
			t.Fatalf("subtask %d: ends %v, last event %q: want one end per port, then finish", sub, ends, evs[len(evs)-1])
		}
	}
}
