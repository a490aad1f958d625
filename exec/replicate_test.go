package exec

import (
	"slices"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestReplicate: each row n times (its count column dropped, its kind
// kept), none for n <= 0 or NULL, and a large n split into batches of at
// most replicateChunk rows.
func TestReplicate(t *testing.T) {
	op := NewReplicate(1, 1)()
	if err := op.Open(&OpContext{}); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	b := types.NewBatch(2, 4)
	b.Append(types.Insert, []types.Value{types.StringValue("a"), types.BigIntValue(2)})
	b.Append(types.UpdateBefore, []types.Value{types.StringValue("b"), types.BigIntValue(1)})
	b.Append(types.Insert, []types.Value{types.StringValue("c"), types.BigIntValue(0)})
	b.Append(types.Insert, []types.Value{types.StringValue("d"), types.BigIntValue(-3)})
	b.Append(types.Delete, []types.Value{types.StringValue("e"), types.NullValue()})
	var rec batchRecorder
	if err := op.Process(0, b, &rec); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a]", "+I[a]", "-U[b]"}
	if !slices.Equal(rec.rows, want) {
		t.Fatalf("got %v, want %v", rec.rows, want)
	}

	big := types.NewBatch(2, 1)
	big.Append(types.Delete, []types.Value{types.StringValue("x"), types.BigIntValue(2500)})
	var sizes sizeRecorder
	if err := op.Process(0, big, &sizes); err != nil {
		t.Fatal(err)
	}
	if want := []int{1024, 1024, 452}; !slices.Equal(sizes.sizes, want) {
		t.Fatalf("batch sizes %v, want %v", sizes.sizes, want)
	}
}

type sizeRecorder struct{ sizes []int }

func (r *sizeRecorder) Emit(b *types.Batch) error {
	for i := range b.Len() {
		if b.Kinds[i] != types.Delete || b.Row(i)[0].Str() != "x" {
			r.sizes = append(r.sizes, -1)
			return nil
		}
	}
	r.sizes = append(r.sizes, b.Len())
	return nil
}
