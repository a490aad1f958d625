package exec

import (
	"slices"
	"testing"

	"github.com/weir-sql/weir/types"
)

type batchRecorder struct{ rows []string }

func (r *batchRecorder) Emit(b *types.Batch) error {
	for i := range b.Len() {
		r.rows = append(r.rows, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	return nil
}

// TestExpand: each row once per grouping set, the left-out grouping
// columns NULL, $e the set's index, the row kind kept (retractions too).
func TestExpand(t *testing.T) {
	op := NewExpand(3, [][]int{{}, {1}, {0, 1}})()
	if err := op.Open(&OpContext{}); err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(3, 2)
	b.Append(types.Insert, []types.Value{types.StringValue("a"), types.IntValue(1), types.IntValue(10)})
	b.Append(types.UpdateBefore, []types.Value{types.NullValue(), types.IntValue(2), types.IntValue(20)})
	var rec batchRecorder
	if err := op.Process(0, b, &rec); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[a, 1, 10, 0]", "-U[<NULL>, 2, 20, 0]",
		"+I[a, <NULL>, 10, 1]", "-U[<NULL>, <NULL>, 20, 1]",
		"+I[<NULL>, <NULL>, 10, 2]", "-U[<NULL>, <NULL>, 20, 2]",
	}
	if !slices.Equal(rec.rows, want) {
		t.Fatalf("got %v, want %v", rec.rows, want)
	}
	// The input batch is untouched.
	if got := types.FormatRow(b.Kinds[0], b.Row(0)); got != "+I[a, 1, 10]" {
		t.Fatalf("input changed: %s", got)
	}
}
