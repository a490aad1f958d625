package exec

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/types"
)

// collectRows records the rows emitted to it, rendered as "+I[1, a]".
type collectRows struct {
	rows    []string
	batches []*types.Batch
}

func (c *collectRows) Emit(b *types.Batch) error {
	c.batches = append(c.batches, b)
	for i := range b.Len() {
		c.rows = append(c.rows, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	return nil
}

// notNullBatch builds a batch of (id, name) rows; id < 0 means NULL id,
// name "" means NULL name.
func notNullBatch(kinds []types.RowKind, ids []int64, names []string) *types.Batch {
	b := types.NewBatch(2, len(ids))
	for i := range ids {
		row := make([]types.Value, 2)
		if ids[i] >= 0 {
			row[0] = types.BigIntValue(ids[i])
		}
		if names[i] != "" {
			row[1] = types.StringValue(names[i])
		}
		b.Append(kinds[i], row)
	}
	return b
}

func TestNotNullEnforcer(t *testing.T) {
	I, UB, UA := types.Insert, types.UpdateBefore, types.UpdateAfter
	kinds := []types.RowKind{I, I, UB, UA, I}
	ids := []int64{1, -1, 3, 3, -1}
	names := []string{"a", "b", "", "c", "e"}

	t.Run("clean batch passes through unchanged", func(t *testing.T) {
		op := NewNotNullEnforcer("fo", []int{0}, []string{"id"}, NotNullError)()
		var dropped atomic.Int64
		if err := op.Open(&OpContext{Dropped: &dropped}); err != nil {
			t.Fatal(err)
		}
		in := notNullBatch([]types.RowKind{I, I}, []int64{1, 2}, []string{"", "b"})
		out := &collectRows{}
		if err := op.Process(0, in, out); err != nil {
			t.Fatal(err)
		}
		if len(out.batches) != 1 || out.batches[0] != in {
			t.Fatalf("a batch without NULL in the checked columns was not forwarded as is")
		}
		sink := &discardEmitter2{}
		if allocs := testing.AllocsPerRun(100, func() { _ = op.Process(0, in, sink) }); allocs != 0 {
			t.Fatalf("%v allocations per clean batch", allocs)
		}
	})

	t.Run("ERROR names table, column and row", func(t *testing.T) {
		op := NewNotNullEnforcer("fo", []int{0, 1}, []string{"id", "name"}, NotNullError)()
		if err := op.Open(&OpContext{}); err != nil {
			t.Fatal(err)
		}
		out := &collectRows{}
		err := op.Process(0, notNullBatch(kinds, ids, names), out)
		if err == nil {
			t.Fatal("NULL in a NOT NULL column was accepted")
		}
		for _, want := range []string{"sink fo", "column 'id' is NOT NULL", "null value", "+I[<NULL>, b]", "'table.exec.sink.not-null-enforcer'='DROP'"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if len(out.rows) != 0 {
			t.Errorf("rows emitted from a failing batch: %v", out.rows)
		}
	})

	t.Run("DROP drops and counts", func(t *testing.T) {
		op := NewNotNullEnforcer("fo", []int{0, 1}, []string{"id", "name"}, NotNullDrop)()
		var dropped atomic.Int64
		if err := op.Open(&OpContext{Dropped: &dropped}); err != nil {
			t.Fatal(err)
		}
		out := &collectRows{}
		in := notNullBatch(kinds, ids, names)
		if err := op.Process(0, in, out); err != nil {
			t.Fatal(err)
		}
		// All NULLs: nothing is emitted.
		if err := op.Process(0, notNullBatch([]types.RowKind{I}, []int64{-1}, []string{"x"}), out); err != nil {
			t.Fatal(err)
		}
		want := []string{"+I[1, a]", "+U[3, c]"}
		if strings.Join(out.rows, " ") != strings.Join(want, " ") {
			t.Fatalf("got %v, want %v", out.rows, want)
		}
		if n := dropped.Load(); n != 4 {
			t.Fatalf("dropped %d, want 4", n)
		}
		if in.Len() != len(ids) || types.FormatRow(in.Kinds[1], in.Row(1)) != "+I[<NULL>, b]" {
			t.Fatal("the input batch was modified")
		}
	})
}
