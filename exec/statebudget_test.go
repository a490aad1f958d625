package exec

import (
	"context"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestStateBudgetAuto checks the state budget per stateful subtask that a
// job gives its operators: the configured size, or with state.cache.size
// 'auto' (StateCacheBytes 0) a quarter of the memory split over the job's
// stateful subtasks (here a GROUP BY at parallelism 2 and a deduplication
// at 3: 5; the Calc keeps no state), never below
// statestore.DefaultCacheBytes.
func TestStateBudgetAuto(t *testing.T) {
	sum := []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}}
	g := &JobGraph{Name: "budget", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: &sliceSource{width: 2}, SourceWidth: 2, SourceName: "s"},
		{Name: "Calc -> GroupAggregate", Parallelism: 2, Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Calc", ID: "calc", OutWidth: 2, New: NewCalc(nil, nil)},
				{Name: "GroupAggregate", ID: "agg", OutWidth: 2, New: NewGroupAgg([]int{0}, sum)}}},
		{Name: "Deduplicate", Parallelism: 3, Inputs: []Input{{From: 1, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Deduplicate", ID: "dedup", OutWidth: 2, New: NewDedup(DedupSpec{Keys: []int{0}})}},
			Sink:      &collectSink{}, SinkName: "out"},
	}}
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
			ck := testCheckpointing(t, t.TempDir(), "budget", nil, c.configured)
			j, tasks, err := newJob(context.Background(), g, Options{MemoryBytes: c.memory, Checkpoint: ck})
			if err != nil {
				t.Fatal(err)
			}
			defer j.cancel()
			if n := statefulSubtasks(tasks); n != 5 {
				t.Fatalf("statefulSubtasks = %d, want 5", n)
			}
			if got := j.stateBudget(); got != c.want {
				t.Errorf("stateBudget = %d, want %d", got, c.want)
			}
		})
	}
	if got := stateBudgetFor(0, 0, 40*gib); got != statestore.DefaultCacheBytes {
		t.Errorf("no stateful operator: stateBudgetFor = %d, want %d", got, statestore.DefaultCacheBytes)
	}
}
