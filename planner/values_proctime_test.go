package planner

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// TestValuesProctimeReadsTaskClock: PROCTIME() in VALUES rows is the
// processing time of the task's clock (given through
// exec.ClockReader), read once per Next call for all its rows, not
// time.Now per row.
func TestValuesProctimeReadsTaskClock(t *testing.T) {
	var rows [][]expr.Expr
	for i := range 5 {
		pt, err := expr.NewTimeCall("PROCTIME", "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, []expr.Expr{expr.NewLiteral(types.IntValue(int64(i)), types.Type{Kind: types.KindInt}), pt})
	}
	src := &valuesSource{rows: rows}
	r, err := src.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	at, reads := time.Date(2000, 6, 1, 12, 0, 0, 0, time.UTC), 0
	cr, ok := r.(interface{ SetClock(func() time.Time) })
	if !ok {
		t.Fatal("the VALUES reader takes no clock (exec.ClockReader): its PROCTIME() reads time.Now")
	}
	cr.SetClock(func() time.Time { reads++; return at })
	for call, n := range []int{3, 3} {
		b := types.NewBatch(2, 8)
		err := r.Next(context.Background(), b, n)
		if call == 1 && err != io.EOF || call == 0 && err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		for i := range b.Len() {
			if got := b.Row(i)[1]; got != types.TimestampLTZValue(at.UnixMilli()) {
				t.Fatalf("call %d row %d: PROCTIME() = %v, want the clock's %v", call, i, got, at)
			}
		}
		if reads != call+1 {
			t.Fatalf("after %d calls the clock was read %d times, want once a call", call+1, reads)
		}
		at = at.Add(time.Second)
	}
	// The source's expressions stay unbound: another reader has its own.
	if v, _ := rows[0][1].Eval(nil); v.Int() < time.Now().Add(-time.Hour).UnixMilli() {
		t.Fatalf("the source's PROCTIME() reads %v: bound by a reader", v)
	}
}
