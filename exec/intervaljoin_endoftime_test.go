package exec

import (
	"fmt"
	"math"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestIntervalJoinRowAtEndOfTime: a left row whose interval's end
// saturates (row time near the int64 maximum) is still swept by the +∞
// watermark at the end of input: emitted NULL-padded by a left outer
// join, and its key removed. (Its expiry was once math.MaxInt64, which
// the sweep queue reads as "no row", so it stayed forever.)
func TestIntervalJoinRowAtEndOfTime(t *testing.T) {
	op, out := openKeyTimeJoin(t, LeftOuterJoin, 10)
	rows := [][]types.Value{
		{types.BigIntValue(1), types.TimestampValue(math.MaxInt64 - 5)},
		{types.BigIntValue(2), types.TimestampValue(100)},
	}
	ijFeed(t, op, 0, out, rows...)
	if err := op.ProcessWatermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, r := range rows {
		want[fmt.Sprint(append(append([]types.Value(nil), r...), types.NullValue(), types.NullValue()))] = 1
	}
	checkIJRows(t, "at the +∞ watermark", out.rows, want)
	if n := op.keys.Len(); n != 0 {
		t.Fatalf("%d keys left after the +∞ watermark", n)
	}
}

// TestIntervalJoinWatermarkJustBelowEndOfTime (review r18-rev-lead of
// da1f300): a left row whose interval ends at math.MaxInt64-1 (true
// expiry MaxInt64, capped to MaxInt64-1) must still be there when the
// watermark is MaxInt64-1: a right row at MaxInt64-1 is not late then
// (late is below the watermark) and matches it. The cap made the two
// expiries MaxInt64-1 and MaxInt64 one, so the watermark MaxInt64-1 (a
// source with WATERMARK FOR ts AS ts and a row at MaxInt64-1) swept it.
func TestIntervalJoinWatermarkJustBelowEndOfTime(t *testing.T) {
	op, out := openKeyTimeJoin(t, InnerJoin, 0)
	row := []types.Value{types.BigIntValue(1), types.TimestampValue(math.MaxInt64 - 1)}
	ijFeed(t, op, 0, out, row)
	if err := op.ProcessWatermark(math.MaxInt64-1, out); err != nil {
		t.Fatal(err)
	}
	ijFeed(t, op, 1, out, row)
	want := map[string]int{fmt.Sprint(append(append([]types.Value(nil), row...), row...)): 1}
	checkIJRows(t, "right row at the watermark MaxInt64-1", out.rows, want)
}

// TestIntervalJoinBoundsOverflow (review r18-rev-lead): a left row near
// the int64 maximum whose interval end t+Upper overflows must still match
// a stored right row inside its interval (add computes lo, hi without
// saturating, so hi wraps negative and the search stops at once).
func TestIntervalJoinBoundsOverflow(t *testing.T) {
	op, out := openKeyTimeJoin(t, InnerJoin, 10)
	right := []types.Value{types.BigIntValue(1), types.TimestampValue(math.MaxInt64 - 3)}
	left := []types.Value{types.BigIntValue(1), types.TimestampValue(math.MaxInt64 - 5)}
	ijFeed(t, op, 1, out, right)
	ijFeed(t, op, 0, out, left)
	want := map[string]int{fmt.Sprint(append(append([]types.Value(nil), left...), right...)): 1}
	checkIJRows(t, "left row whose interval end overflows", out.rows, want)
}

// openKeyTimeJoin opens an interval join of two (BIGINT key, TIMESTAMP)
// inputs on the key, right rows within [left, left + upper].
func openKeyTimeJoin(t *testing.T, typ JoinType, upper int64) (*intervalJoinOp, *ijCollect) {
	t.Helper()
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp}
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: 0, Upper: upper}
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{ID: "ij", Parallelism: 1, MaxParallelism: ijMaxPar}); err != nil {
		t.Fatal(err)
	}
	return op, &ijCollect{rows: map[string]int{}}
}

// ijFeed processes rows as one insert batch on input in.
func ijFeed(t *testing.T, op *intervalJoinOp, in int, out *ijCollect, rows ...[]types.Value) {
	t.Helper()
	b := types.NewBatch(len(rows[0]), len(rows))
	for _, r := range rows {
		b.Append(types.Insert, r)
	}
	if err := op.Process(in, b, out); err != nil {
		t.Fatal(err)
	}
}
