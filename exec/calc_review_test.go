package exec

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// checkEmitter compares every row of each emitted batch, when it is
// emitted, with the next rows of want.
type checkEmitter struct {
	t     *testing.T
	where string
	width int
	want  []string
	next  int
}

func (c *checkEmitter) Emit(b *types.Batch) error {
	c.t.Helper()
	if b.Width != c.width {
		c.t.Fatalf("%s: emitted width %d, want %d", c.where, b.Width, c.width)
	}
	for i := range b.Len() {
		if c.next >= len(c.want) {
			c.t.Fatalf("%s: row %d emitted beyond the %d wanted: %s", c.where, c.next, len(c.want), types.FormatRow(b.Kinds[i], b.Row(i)))
		}
		if got := types.FormatRow(b.Kinds[i], b.Row(i)); got != c.want[c.next] {
			c.t.Fatalf("%s: row %d: %s, want %s", c.where, c.next, got, c.want[c.next])
		}
		c.next++
	}
	return nil
}

// TestCalcSlotsInstancesAndCutBatch runs one Calc factory's instances
// over time streams interleaved batch by batch, in session zones with
// daylight saving changes (one of 30 minutes) and offsets of 45 minutes:
// a filter drops rows (NULL and non-positive n), projections mix copies,
// DATE_FORMATs of a TIMESTAMP and a TIMESTAMP_LTZ column, and a CASE that
// is NULL for some rows, with NULLs in every input column. Batches are of
// random sizes (a large one before small ones), so a value left from an
// earlier batch in the cut, uncleared output batch would show. After a
// while every instance is closed and the streams go on through two new
// instances and a reopened one (as after a restore at another
// parallelism), two streams of different times through one instance.
// Every emitted row is compared, when emitted, with one computed here
// with Go's time formatting. Randomized: prints its seed.
func TestCalcSlotsInstancesAndCutBatch(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 1021))
	tsCol := expr.NewColumn(0, types.Timestamp, "ts")
	ltzCol := expr.NewColumn(1, types.Type{Kind: types.KindTimestampLTZ}, "ltz")
	sCol := expr.NewColumn(2, types.Varchar, "s")
	nCol := expr.NewColumn(3, types.BigInt, "n")
	lit := func(v types.Value, ty types.Type) expr.Expr { return expr.NewLiteral(v, ty) }
	must := func(e expr.Expr, err error) expr.Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	type stream struct{ ms int64 }
	for _, zone := range []string{"UTC", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Skipf("zone %s: %v", zone, err)
		}
		df := func(arg expr.Expr, pattern string) expr.Expr {
			return must(expr.NewTimeCall("DATE_FORMAT", "", []expr.Expr{arg, lit(types.StringValue(pattern), types.Varchar)}, loc))
		}
		filter := must(expr.NewCompare(">", nCol, lit(types.BigIntValue(0), types.BigInt)))
		big := must(expr.NewCompare(">", nCol, lit(types.BigIntValue(3), types.BigInt)))
		upper := must(expr.NewCall("UPPER", []expr.Expr{sCol}))
		proj := []expr.Expr{
			df(tsCol, "yyyy-MM-dd HH:mm"),
			sCol, nCol,
			df(ltzCol, "yyyy-MM-dd HH:mm:ss XXX"),
			must(expr.NewCase([]expr.Expr{big}, []expr.Expr{upper}, nil)),
			tsCol,
			df(tsCol, "EEE HH"),
			df(ltzCol, "yyyy-MM-dd HH"),
			df(ltzCol, "EEEE"),
		}
		expect := func(row []types.Value) (string, bool) {
			n := row[3]
			if n.IsNull() || n.Int() <= 0 {
				return "", false
			}
			out := make([]types.Value, len(proj))
			if ts := row[0]; !ts.IsNull() {
				at := time.UnixMilli(ts.Int()).UTC()
				out[0] = types.StringValue(at.Format("2006-01-02 15:04"))
				out[5] = ts
				out[6] = types.StringValue(at.Format("Mon 15"))
			}
			if l := row[1]; !l.IsNull() {
				at := time.UnixMilli(l.Int()).In(loc)
				out[3] = types.StringValue(at.Format("2006-01-02 15:04:05 Z07:00"))
				out[7] = types.StringValue(at.Format("2006-01-02 15"))
				out[8] = types.StringValue(at.Format("Monday"))
			}
			out[1], out[2] = row[2], n
			if s := row[2]; !s.IsNull() && n.Int() > 3 {
				out[4] = types.StringValue(strings.ToUpper(s.Str()))
			}
			return types.FormatRow(types.Insert, out), true
		}
		// Streams start before a change of the zone's offset (and before
		// 1970), a minute before its hour.
		starts := []time.Time{
			time.Date(2026, 3, 8, 6, 59, 0, 0, time.UTC),    // New York: 02:00 EST becomes 03:00 EDT at 07:00 UTC
			time.Date(2026, 4, 4, 14, 59, 0, 0, time.UTC),   // Lord Howe: 02:00 +11 becomes 01:30 +10:30 at 15:00 UTC
			time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC), // the epoch
			time.Date(2026, 10, 3, 15, 29, 0, 0, time.UTC),  // Lord Howe: 02:00 +10:30 becomes 02:30 +11
			time.Date(2026, 11, 1, 5, 59, 0, 0, time.UTC),   // New York: 02:00 EDT becomes 01:00 EST at 06:00 UTC
		}
		streams := make([]stream, len(starts))
		for i, s := range starts {
			streams[i].ms = s.UnixMilli()
		}
		const words = "abcdefghij0123"
		batch := func(st *stream) (*types.Batch, []string) {
			size := 1 + r.IntN(150)
			if r.IntN(4) == 0 {
				size = 1 + r.IntN(3)
			}
			b := types.NewBatch(4, size)
			var want []string
			for range size {
				switch k := r.IntN(20); {
				case k == 0:
					st.ms -= r.Int64N(120_000)
				case k == 1:
					st.ms += r.Int64N(7_200_000) - 3_600_000
				default:
					st.ms += r.Int64N(20_000)
				}
				sb := make([]byte, r.IntN(12))
				for i := range sb {
					sb[i] = words[r.IntN(len(words))]
				}
				row := []types.Value{types.TimestampValue(st.ms), types.TimestampLTZValue(st.ms + r.Int64N(3) - 1),
					types.StringValue(string(sb)), types.BigIntValue(r.Int64N(10) - 3)}
				for c := range row {
					if r.IntN(9) == 0 {
						row[c] = types.NullValue()
					}
				}
				b.Append(types.Insert, row)
				if w, ok := expect(row); ok {
					want = append(want, w)
				}
			}
			return b, want
		}
		factory := NewCalc(filter, proj)
		open := func(op Operator) Operator {
			if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
				t.Fatal(err)
			}
			c := op.(*calcOp)
			// ltz: the slot takes TIMESTAMP_LTZ values too (a UTC session).
			slots, ltz := 0, 0
			for _, d := range c.dfs {
				if d.col >= 0 {
					slots++
					if d.ltz {
						ltz++
					}
				}
			}
			if wantLTZ := map[bool]int{true: 5, false: 0}[loc == time.UTC]; slots != 5 || ltz != wantLTZ {
				t.Fatalf("zone %s: %d DATE_FORMAT slots (%d for LTZ), want 5 (%d)", zone, slots, ltz, wantLTZ)
			}
			return op
		}
		run := func(phase string, ops []Operator, of func(stream int) int, rounds int) {
			for range rounds {
				si := r.IntN(len(streams))
				op := ops[of(si)]
				b, want := batch(&streams[si])
				em := &checkEmitter{t: t, where: fmt.Sprintf("seed %d: zone %s: %s, stream %d", seed, zone, phase, si), width: len(proj), want: want}
				if err := op.Process(0, b, em); err != nil {
					t.Fatal(err)
				}
				if em.next != len(want) {
					t.Fatalf("%s: %d rows emitted, want %d", em.where, em.next, len(want))
				}
			}
		}
		ops := []Operator{open(factory()), open(factory()), open(factory())}
		run("three instances", ops, func(s int) int { return s % 3 }, 300)
		for _, op := range ops {
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		}
		// Another parallelism: two new instances and the first reopened.
		next := []Operator{open(factory()), open(ops[0]), open(factory())}
		run("after reopening", next, func(s int) int { return (s + 1) % 3 }, 100)
		run("two streams an instance", next[:2], func(s int) int { return s % 2 }, 300)
		for _, op := range next {
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCalcDateFormatSlotNoAllocs: a batch whose rows fall in the minute
// and day the DATE_FORMAT slots hold is projected (copies, two
// DATE_FORMATs, a filter) without an allocation.
func TestCalcDateFormatSlotNoAllocs(t *testing.T) {
	ts := expr.NewColumn(0, types.Timestamp, "ts")
	n := expr.NewColumn(1, types.BigInt, "n")
	df := func(p string) expr.Expr {
		e, err := expr.NewTimeCall("DATE_FORMAT", "", []expr.Expr{ts, expr.NewLiteral(types.StringValue(p), types.Varchar)}, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	filter, err := expr.NewCompare(">", n, expr.NewLiteral(types.BigIntValue(0), types.BigInt))
	if err != nil {
		t.Fatal(err)
	}
	op := NewCalc(filter, []expr.Expr{n, ts, df("yyyy-MM-dd"), df("HH:mm")})()
	if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 2, 16, 40, 0, 0, time.UTC).UnixMilli()
	b := types.NewBatch(2, 256)
	for i := range 256 {
		b.Append(types.Insert, []types.Value{types.TimestampValue(start + int64(i)*200), types.BigIntValue(int64(i%3) - 1)})
	}
	var rows int
	em := emitFunc(func(o *types.Batch) error { rows = o.Len(); return nil })
	if err := op.Process(0, b, em); err != nil {
		t.Fatal(err)
	}
	if rows != 85 {
		t.Fatalf("%d rows, want 85", rows)
	}
	if a := testing.AllocsPerRun(20, func() {
		if err := op.Process(0, b, em); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%.1f allocations a batch, want 0", a)
	}
}
