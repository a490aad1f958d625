package exec

import (
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestFinalGroupAggPairsAcrossBatches feeds the outer aggregate of a split
// distinct aggregation (NewFinalGroupAgg) a -U and its +U in two batches,
// and a +U whose -U found no group: a group's row count counts +I rows, so
// no group is deleted in between (the plain GroupAgg would emit -D and +I)
// and the final rows are the last +U's. The sum of counts, NOT NULL, is
// 0 between the two.
func TestFinalGroupAggPairsAcrossBatches(t *testing.T) {
	calls := []AggCall{
		// A sum of counts: NOT NULL, 0 over no values ($SUM0).
		{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.Type{Kind: types.KindBigInt, NotNull: true}},
		{Func: AggMax, Arg: 2, ArgType: types.Varchar, Type: types.Varchar},
	}
	op := NewFinalGroupAgg([]int{0}, calls)().(*groupAggOp)
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "final", ID: "final"}); err != nil {
		t.Fatal(err)
	}
	row := func(k string, v int64, s string) []types.Value {
		return []types.Value{types.StringValue(k), types.BigIntValue(v), types.StringValue(s)}
	}
	steps := []struct {
		kind types.RowKind
		row  []types.Value
	}{
		{types.Insert, row("a", 3, "x")},
		{types.UpdateBefore, row("a", 3, "x")},
		{types.UpdateAfter, row("a", 5, "y")},
		{types.UpdateBefore, row("b", 1, "z")}, // no group b: nothing to retract
		{types.UpdateAfter, row("b", 2, "w")},
	}
	var out recorder
	for _, s := range steps {
		b := types.NewBatch(3, 1)
		b.Append(s.kind, s.row)
		if err := op.Process(0, b, &out); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(out.rows, " ")
	want := "+I[a, 3, x] -U[a, 3, x] +U[a, 0, <NULL>] -U[a, 0, <NULL>] +U[a, 5, y] +I[b, 2, w]"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
