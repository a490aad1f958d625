package exec

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestCalcDateFormatSlots checks the Calc's DATE_FORMAT of a column
// without an Eval call (dfs) against Go's time formatting, in three
// session time zones (UTC, and two whose offsets are not whole hours):
// TIMESTAMP and TIMESTAMP_LTZ columns formatted by day, hour, minute,
// second and year patterns, a VARCHAR column (evaluated), NULLs, and
// times that step over the last millisecond of a minute, an hour, a day
// and a year (before 1970 too), go back and forth, and jump. Rows at the
// ends of the int64 range must give what Eval gives. Randomized: prints
// its seed.
func TestCalcDateFormatSlots(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 31))
	ts := expr.NewColumn(0, types.Timestamp, "ts")
	ltz := expr.NewColumn(1, types.Type{Kind: types.KindTimestampLTZ}, "ltz")
	txt := expr.NewColumn(2, types.Varchar, "txt")
	// Flink's patterns and Go's layouts for them.
	patterns := []struct{ flink, goLayout string }{
		{"yyyy-MM-dd", "2006-01-02"},
		{"HH:mm", "15:04"},
		{"yyyy-MM-dd HH:mm:ss", "2006-01-02 15:04:05"},
		{"HH", "15"},
		{"yyyy", "2006"},
	}
	// Edges: the last millisecond of a minute, hour, day and year and the
	// one after, either side of 1970 and of 2026.
	var edges []int64
	for _, at := range []time.Time{
		time.Date(1969, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(2025, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(2026, 3, 1, 12, 34, 59, 999e6, time.UTC),
		time.Date(2026, 6, 30, 18, 29, 59, 999e6, time.UTC), // 23:59:59.999 in Kolkata
		time.Date(1950, 7, 1, 2, 29, 59, 999e6, time.UTC),   // a half hour, St John's
	} {
		edges = append(edges, at.UnixMilli(), at.UnixMilli()+1)
	}
	for _, zone := range []string{"UTC", "Asia/Kolkata", "America/St_Johns"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Skipf("zone %s: %v", zone, err)
		}
		var proj []expr.Expr
		var layouts []string // per projection: its Go layout, in UTC for ts and txt, in loc for ltz
		var onLTZ []bool
		for _, p := range patterns {
			for _, arg := range []expr.Expr{ts, ltz, txt} {
				e, err := expr.NewTimeCall("DATE_FORMAT", "", []expr.Expr{arg, expr.NewLiteral(types.StringValue(p.flink), types.Varchar)}, loc)
				if err != nil {
					t.Fatal(err)
				}
				proj = append(proj, e)
				layouts = append(layouts, p.goLayout)
				onLTZ = append(onLTZ, arg == ltz)
			}
		}
		proj = append(proj, ts) // and a copy
		op := NewCalc(nil, proj)()
		if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
			t.Fatal(err)
		}
		slots := 0
		for _, d := range op.(*calcOp).dfs {
			if d.col >= 0 {
				slots++
			}
		}
		if slots != 3*len(patterns) {
			t.Fatalf("%d DATE_FORMAT slots, want %d", slots, 3*len(patterns))
		}
		in := types.NewBatch(3, 64)
		var want [][]types.Value
		add := func(ms int64, null bool) {
			row := []types.Value{types.TimestampValue(ms), types.TimestampLTZValue(ms),
				types.StringValue(time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000"))}
			out := make([]types.Value, len(proj))
			for k, l := range layouts {
				at := time.UnixMilli(ms).UTC()
				if onLTZ[k] {
					at = at.In(loc)
				}
				out[k] = types.StringValue(at.Format(l))
			}
			out[len(proj)-1] = row[0]
			if null {
				row = []types.Value{{}, {}, {}}
				out = make([]types.Value, len(proj))
			}
			in.Append(types.Insert, row)
			want = append(want, out)
		}
		for _, e := range edges {
			for _, d := range []int64{-1, 0, 1, 0, -1, 1, 1} {
				add(e+d, false)
			}
			add(e, true)
		}
		ms := edges[len(edges)-2]
		for range 3000 {
			switch r.IntN(10) {
			case 0:
				ms += r.Int64N(4e9) - 2e9 // a jump: weeks
			case 1:
				ms -= r.Int64N(120_000) // back: up to two minutes
			case 2:
				add(ms, true)
			default:
				ms += r.Int64N(3000)
			}
			add(ms, false)
		}
		rec := &recorder{}
		for start := 0; start < in.Len(); start += 64 {
			part := types.NewBatch(3, 64)
			for i := start; i < min(start+64, in.Len()); i++ {
				part.Append(types.Insert, in.Row(i))
			}
			if err := op.Process(0, part, rec); err != nil {
				t.Fatal(err)
			}
		}
		if len(rec.rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(rec.rows), len(want))
		}
		for i := range want {
			if w := types.FormatRow(types.Insert, want[i]); rec.rows[i] != w {
				t.Fatalf("seed %d: zone %s: row %d (%v): %s, want %s", seed, zone, i, in.Row(i), rec.rows[i], w)
			}
		}
		// The ends of the int64 range: as Eval gives them (no slot's range
		// may overflow), then a row in range again.
		ends := types.NewBatch(3, 8)
		var wantEnds []string
		for _, ms := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, 0, math.MaxInt64} {
			row := []types.Value{types.TimestampValue(ms), types.TimestampLTZValue(ms), types.StringValue("2026-01-01 00:00:00")}
			ends.Append(types.Insert, row)
			out := make([]types.Value, len(proj))
			for k, p := range proj {
				v, err := p.Eval(row)
				if err != nil {
					t.Fatal(err)
				}
				out[k] = v
			}
			wantEnds = append(wantEnds, types.FormatRow(types.Insert, out))
		}
		rec = &recorder{}
		if err := op.Process(0, ends, rec); err != nil {
			t.Fatal(err)
		}
		for i := range wantEnds {
			if rec.rows[i] != wantEnds[i] {
				t.Fatalf("zone %s: end row %d: %s, want %s", zone, i, rec.rows[i], wantEnds[i])
			}
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
