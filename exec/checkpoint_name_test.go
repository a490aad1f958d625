package exec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestCheckpointStorageNamesGraph: a job whose checkpoint storage is for
// another job name than its graph's fails to start with an error naming
// both (its checkpoints could never complete), also when the options come
// from the tests' testCheckpointing; the same name starts.
func TestCheckpointStorageNamesGraph(t *testing.T) {
	graph := func(name string) *JobGraph {
		return &JobGraph{Name: name, Vertices: []*Vertex{
			{ID: "s", Name: "S", Parallelism: 1, Source: &sliceSource{width: 1, rows: [][]types.Value{{types.BigIntValue(1)}}},
				SourceWidth: 1, SourceName: "s", Sink: &recordSink{}, SinkName: "out"},
		}}
	}
	_, _, err := newJob(context.Background(), graph("g"), Options{Checkpoint: testCheckpointing(t, t.TempDir(), "other", nil, 1<<12)})
	if err == nil {
		t.Fatal("a job started with the checkpoint storage of another job")
	}
	if !errors.Is(err, ErrInvalidGraph) || !strings.Contains(err.Error(), `"other"`) || !strings.Contains(err.Error(), `"g"`) {
		t.Fatalf("error %q: want ErrInvalidGraph naming both jobs", err)
	}
	j, tasks, err := newJob(context.Background(), graph("g"), Options{Checkpoint: testCheckpointing(t, t.TempDir(), "g", nil, 1<<12)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		_ = tk.close(nil)
	}
	j.cancel()
}
