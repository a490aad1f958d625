package exec

import (
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestStateBudgetAuto checks the state budget per stateful subtask: the
// configured size, or with state.cache.size 'auto' (StateCacheBytes 0) a
// quarter of the memory split over the job's stateful subtasks (here a
// GROUP BY at parallelism 2 and a deduplication at 3: 5), never below
// statestore.DefaultCacheBytes; stateless operators (a Calc) take none.
func TestStateBudgetAuto(t *testing.T) {
	sum := []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}}
	g := &JobGraph{Name: "budget", Vertices: []*Vertex{
		{Name: "S", Parallelism: 1},
		{Name: "Calc -> GroupAggregate", Parallelism: 2, Inputs: []Input{{From: 0}},
			Operators: []OperatorSpec{{Name: "Calc", New: NewCalc(nil, nil)}, {Name: "GroupAggregate", New: NewGroupAgg([]int{0}, sum)}}},
		{Name: "Deduplicate", Parallelism: 3, Inputs: []Input{{From: 1}},
			Operators: []OperatorSpec{{Name: "Deduplicate", New: NewDedup(DedupSpec{Keys: []int{0}})}}},
	}}
	if n := statefulSubtasks(g); n != 5 {
		t.Fatalf("statefulSubtasks = %d, want 5", n)
	}
	const gib = int64(1) << 30
	cases := []struct {
		name       string
		configured int64
		memory     int64
		want       int64
	}{
		{"configured", 128 << 20, 40 * gib, 128 << 20},
		{"auto", 0, 40 * gib, 40 * gib / 4 / 5},
		{"auto, little memory", 0, 512 << 20, statestore.DefaultCacheBytes},
		{"auto, memory unknown", 0, -1, statestore.DefaultCacheBytes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := stateBudgetFor(g, &CheckpointOptions{StateCacheBytes: c.configured}, c.memory)
			if got != c.want {
				t.Errorf("stateBudgetFor = %d, want %d", got, c.want)
			}
		})
	}
	stateless := &JobGraph{Name: "calc", Vertices: []*Vertex{{Name: "S", Parallelism: 2},
		{Name: "Calc", Parallelism: 2, Inputs: []Input{{From: 0}}, Operators: []OperatorSpec{{Name: "Calc", New: NewCalc(nil, nil)}}}}}
	if got := stateBudgetFor(stateless, nil, 40*gib); got != statestore.DefaultCacheBytes {
		t.Errorf("stateless job: stateBudgetFor = %d, want %d", got, statestore.DefaultCacheBytes)
	}
}
