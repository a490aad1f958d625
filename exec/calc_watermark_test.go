package exec

import (
	"math"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// TestCalcCurrentWatermarkPerSubtask checks that CURRENT_WATERMARK in a
// Calc reads the watermark of the task running it: two subtasks of one
// operator, opened from the same factory, see their own watermarks, NULL
// before the first, and follow them as they advance.
func TestCalcCurrentWatermarkPerSubtask(t *testing.T) {
	ts := expr.NewColumn(0, types.Type{Kind: types.KindTimestamp, Attr: types.Rowtime}, "ts")
	wmCall, err := expr.NewTimeCall("CURRENT_WATERMARK", "", []expr.Expr{ts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	late, err := expr.NewCompare(">", ts, wmCall)
	if err != nil {
		t.Fatal(err)
	}
	keep, err := expr.NewOr(late, expr.NewIsNull(wmCall, false))
	if err != nil {
		t.Fatal(err)
	}
	factory := NewCalc(keep, []expr.Expr{ts, wmCall})
	var wms [2]atomic.Int64
	var ops [2]Operator
	for s := range ops {
		wms[s].Store(NoWatermark)
		ops[s] = factory()
		if err := ops[s].Open(&OpContext{Subtask: s, Parallelism: 2, Watermark: &wms[s]}); err != nil {
			t.Fatal(err)
		}
	}
	batch := func(vals ...int64) *types.Batch {
		b := types.NewBatch(1, len(vals))
		for _, v := range vals {
			b.Append(types.Insert, []types.Value{types.TimestampValue(v)})
		}
		return b
	}
	run := func(s int, vals ...int64) []string {
		var c collectRows
		if err := ops[s].Process(0, batch(vals...), &c); err != nil {
			t.Fatal(err)
		}
		return c.rows
	}
	check := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("got %v, want %v", got, want)
			}
		}
	}
	// No watermark yet: every row passes, with NULL.
	check(run(0, 100, 200), "+I[1970-01-01 00:00:00.100, <NULL>]", "+I[1970-01-01 00:00:00.200, <NULL>]")
	wms[0].Store(150)
	// Subtask 0 drops the row at or below 150; subtask 1 still has none.
	check(run(0, 100, 150, 200), "+I[1970-01-01 00:00:00.200, 1970-01-01 00:00:00.150]")
	check(run(1, 100), "+I[1970-01-01 00:00:00.100, <NULL>]")
	wms[1].Store(50)
	check(run(1, 100), "+I[1970-01-01 00:00:00.100, 1970-01-01 00:00:00.050]")
	wms[0].Store(math.MaxInt64 - 1)
	check(run(0, 300))
}
