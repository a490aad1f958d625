package exec

import (
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// tickingClock is a task clock that moves on 1 ms at every read.
type tickingClock struct{ now time.Time }

func (c *tickingClock) read() time.Time {
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

// TestLookupJoinProctimeOneTimePerLoad: a lookup table (k, v) with a
// computed column p AS PROCTIME(), more rows than one read of its source
// (1024), reloaded before every batch; the residual is PROCTIME() >= p.
// One load is one processing time: every row of the table has the same p.
// A batch joins the table it reloaded at its own time, so its PROCTIME()
// is never before the table's p, and every pair joins. The clock moves on
// at every read, so reading it again within a load or a batch shows.
func TestLookupJoinProctimeOneTimePerLoad(t *testing.T) {
	const rows = 3000
	bigint := types.Type{Kind: types.KindBigInt}
	ltz := types.Type{Kind: types.KindTimestampLTZ}
	pt := func() expr.Expr {
		e, err := expr.NewTimeCall("PROCTIME", "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	table := make([][]types.Value, rows)
	for i := range table {
		table[i] = []types.Value{types.BigIntValue(int64(i % 2)), types.BigIntValue(int64(i))}
	}
	// Left (k, x) ++ right (k, v, p): PROCTIME() >= p.
	residual, err := expr.NewCompare(">=", pt(), expr.NewColumn(4, ltz, "p"))
	if err != nil {
		t.Fatal(err)
	}
	spec := LookupJoinSpec{Type: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 3,
		SourceWidth: 2, Computed: []expr.Expr{expr.NewColumn(0, bigint, "k"), expr.NewColumn(1, bigint, "v"), pt()},
		Residual: residual, Table: "t", Reload: time.Millisecond,
		Open: func() (connector.Source, error) { return &sliceSource{width: 2, rows: table}, nil }}
	clk := &tickingClock{now: time.Date(2000, 6, 1, 12, 0, 0, 0, time.UTC)}
	op := NewLookupJoin(spec)()
	if err := op.Open(&OpContext{Name: "LookupJoin", MaxParallelism: 128, Clock: clk.read}); err != nil {
		t.Fatal(err)
	}
	for batch := range 3 {
		b := types.NewBatch(2, 2)
		b.Append(types.Insert, []types.Value{types.BigIntValue(0), types.BigIntValue(1)})
		b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.BigIntValue(2)})
		out := &rowsEmitter{}
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		if len(out.rows) != rows {
			t.Fatalf("batch %d: %d rows out, want %d (every left row with the table's %d rows of its key)", batch, len(out.rows), rows, rows/2)
		}
		p := out.rows[0][4]
		for _, r := range out.rows {
			if r[4] != p {
				t.Fatalf("batch %d: the table's PROCTIME() column is %v in one row, %v in another: one load, two times", batch, p, r[4])
			}
		}
	}
}
