package exec

import (
	"fmt"
	"github.com/weir-sql/weir/internal/testseed"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// partialCounter counts a local window aggregate's partial rows per slice
// end.
type partialCounter struct {
	perSlice map[int64]int
	rows     int
}

func (c *partialCounter) Emit(b *types.Batch) error {
	for i := range b.Len() {
		c.perSlice[b.Row(i)[1].Int()]++
		c.rows++
	}
	return nil
}

// TestLocalWindowFlushesBehindNewestSlice feeds a local TUMBLE aggregate
// rows in time order over many slices with no watermark at all: each slice
// goes out, once per key, as soon as rows of the next slice come, so the
// operator holds at most two slices' groups (before this it held every
// slice until the watermark or its group bound). Then a row one slice
// behind the newest comes: from then on the operator keeps the slice
// before the newest too, and the late row's slice is not sent twice.
func TestLocalWindowFlushesBehindNewestSlice(t *testing.T) {
	calls := windowTestCalls(t)[:2]
	spec := WindowSpec{Kind: WindowTumble, Size: 100, TimeCol: 2}
	l := NewLocalWindowAgg([]int{0}, spec, calls)().(*localWindowAggOp)
	if err := l.Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
		t.Fatal(err)
	}
	const keys, nslices, perSlice = 50, 40, 500
	out := &partialCounter{perSlice: map[int64]int{}}
	b := types.NewBatch(3, 64)
	maxHeld := 0
	send := func() {
		if err := l.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		maxHeld = max(maxHeld, l.held)
		b.Reset()
	}
	for i := range nslices * perSlice {
		ts := int64(i) * 100 / perSlice
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i % keys)), types.BigIntValue(1), types.TimestampValue(ts)})
		if b.Len() == 64 {
			send()
		}
	}
	send()
	if maxHeld > 2*keys {
		t.Errorf("held %d groups at most, want at most two slices' (%d)", maxHeld, 2*keys)
	}
	// Every slice but the newest went out, each key once.
	for s := int64(1); s < nslices; s++ {
		if n := out.perSlice[s*100]; n != keys {
			t.Errorf("slice ending at %d: %d partial rows, want %d", s*100, n, keys)
		}
	}
	if n := out.perSlice[nslices*100]; n != 0 {
		t.Errorf("the newest slice sent %d partial rows before it was complete", n)
	}
	// A row one slice behind the newest (its slice went out already: it
	// goes out again, as a second partial).
	b.Append(types.Insert, []types.Value{types.BigIntValue(0), types.BigIntValue(1), types.TimestampValue((nslices-2)*100 + 5)})
	send()
	if l.reach != 1 {
		t.Fatalf("reach %d after a row one slice behind, want 1", l.reach)
	}
	// Rows of the next slice: the slice before it is kept now.
	for k := range keys {
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(k)), types.BigIntValue(1), types.TimestampValue(nslices*100 + 1)})
	}
	send()
	if n := out.perSlice[nslices*100]; n != 0 {
		t.Errorf("with rows one slice behind, the slice before the newest went out early (%d partial rows)", n)
	}
	if err := l.Finish(out); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range out.perSlice {
		total += n
	}
	// One partial per key and slice, plus the one late row's second partial.
	if want := keys*(nslices+1) + 1; total != want {
		t.Errorf("%d partial rows in all, want %d", total, want)
	}
}

// TestLocalWindowFastAggsWithNulls runs COUNT(*), COUNT(v), SUM(v) and
// AVG(v) of a BIGINT column with NULLs (the aggregates the local phase adds
// in its row loop) and SUM(d) of a DOUBLE (updated a batch at a time)
// through the two phases, and compares each window with the answer
// computed here.
func TestLocalWindowFastAggsWithNulls(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 5))
	big, dbl := types.Type{Kind: types.KindBigInt}, types.Type{Kind: types.KindDouble}
	calls := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: big, Name: "COUNT"},
		{Func: AggCount, Arg: 1, ArgType: big, Type: big, Name: "COUNT"},
		{Func: AggSum, Arg: 1, ArgType: big, Type: big, Name: "SUM"},
		{Func: AggAvg, Arg: 1, ArgType: big, Type: big, Name: "AVG"},
		{Func: AggSum, Arg: 3, ArgType: dbl, Type: dbl, Name: "SUM"},
	}
	spec := WindowSpec{Kind: WindowTumble, Size: 100, TimeCol: 2}
	g := NewGlobalWindowAgg(1, spec, calls)().(*globalWindowOp)
	if err := g.Open(&OpContext{MaxParallelism: 128, Name: "global"}); err != nil {
		t.Fatal(err)
	}
	l := NewLocalWindowAgg([]int{0}, spec, calls)().(*localWindowAggOp)
	if err := l.Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
		t.Fatal(err)
	}
	if len(l.fast) != 4 || len(l.slow) != 1 {
		t.Fatalf("%d fast and %d other aggregates, want 4 and 1", len(l.fast), len(l.slow))
	}
	type acc struct {
		star, n, sum int64
		d            float64
	}
	want := map[[2]int64]*acc{}
	feed := &globalFeed{g: g}
	b := types.NewBatch(4, 100)
	for i := range 5000 {
		k, ts := int64(r.IntN(20)), int64(i/10)-int64(r.IntN(30))
		v := types.NullValue()
		d := float64(r.IntN(8)) / 4
		id := [2]int64{k, ts - floorMod(ts, 100)}
		if want[id] == nil {
			want[id] = &acc{}
		}
		a := want[id]
		a.star++
		a.d += d
		if r.IntN(3) > 0 {
			x := int64(r.IntN(1000)) - 500
			v = types.BigIntValue(x)
			a.n++
			a.sum += x
		}
		b.Append(types.Insert, []types.Value{types.BigIntValue(k), v, types.TimestampValue(ts), types.DoubleValue(d)})
		if b.Len() == 100 {
			if err := l.Process(0, b, feed); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := l.Process(0, b, feed); err != nil {
		t.Fatal(err)
	}
	out := &rowCollector{}
	if err := l.ProcessWatermark(MaxWatermark, feed); err != nil {
		t.Fatal(err)
	}
	if err := g.ProcessWatermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	var wantRows []string
	for id, a := range want {
		s := id[1]
		sum, avg := types.NullValue(), types.NullValue()
		if a.n > 0 {
			sum, avg = types.BigIntValue(a.sum), types.BigIntValue(a.sum/a.n)
		}
		wantRows = append(wantRows, fmt.Sprint([]types.Value{types.BigIntValue(id[0]), types.TimestampValue(s), types.TimestampValue(s + 100),
			types.TimestampValue(s + 99), types.BigIntValue(a.star), types.BigIntValue(a.n), sum, avg, types.DoubleValue(a.d)}))
	}
	slices.Sort(wantRows)
	got := slices.Sorted(slices.Values(out.rows))
	if !slices.Equal(got, wantRows) {
		t.Fatalf("seed %d: %d windows, want %d\nfirst got  %v\nfirst want %v", seed, len(got), len(wantRows), got[:min(3, len(got))], wantRows[:min(3, len(wantRows))])
	}
}

// TestLocalGroupAggHoldsUntilFlush: the local phase of a two-phase
// GroupAggregate (no slices) holds its partials over batches until the
// task flushes it, then sends one partial row per key with the key's row
// count (the slice-behind flush of the window phase does not apply).
func TestLocalGroupAggHoldsUntilFlush(t *testing.T) {
	calls := windowTestCalls(t)[:2]
	l := NewLocalGroupAgg([]int{0}, calls)().(*localWindowAggOp)
	if err := l.Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
		t.Fatal(err)
	}
	out := &partialCounter{perSlice: map[int64]int{}}
	counts := map[int64]int64{}
	b := types.NewBatch(3, 10)
	for batch := range 3 {
		b.Reset()
		for i := range 10 {
			k := int64((batch*10 + i) % 7)
			counts[k]++
			b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(1), types.TimestampValue(0)})
		}
		if err := l.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		if out.rows != 0 {
			t.Fatalf("after batch %d: %d partial rows sent before the flush", batch, out.rows)
		}
	}
	if !l.hasPending() {
		t.Fatal("no partials pending")
	}
	got := map[int64]int64{}
	rows := &rowsByKey{got: got}
	if err := l.flush(rows, func(int64) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(counts) {
		t.Fatalf("%d keys sent, want %d", len(got), len(counts))
	}
	for k, n := range counts {
		if got[k] != n {
			t.Errorf("key %d: row count %d, want %d", k, got[k], n)
		}
	}
}

// rowsByKey adds up the row counts (column 1) of local group partials by
// key (column 0).
type rowsByKey struct{ got map[int64]int64 }

func (r *rowsByKey) Emit(b *types.Batch) error {
	for i := range b.Len() {
		row := b.Row(i)
		r.got[row[0].Int()] += row[1].Int()
	}
	return nil
}

// TestLocalAggRetractionError: a retraction reaching the local phase of a
// two-phase aggregation fails with an error that names that operator (a
// group aggregation's local phase is no window aggregate) and, for the
// group aggregation, says how to plan it in one phase.
func TestLocalAggRetractionError(t *testing.T) {
	calls := windowTestCalls(t)[:2]
	spec := WindowSpec{Kind: WindowTumble, Size: 10, TimeCol: 2}
	for _, tc := range []struct {
		op       Operator
		want     []string
		wantNot  string
		rowsKind types.RowKind
	}{
		{NewLocalGroupAgg([]int{0}, calls)(), []string{"LocalGroupAggregate: ", "local phase of a two-phase group aggregation", "insert-only", "-U",
			"'table.optimizer.agg-phase-strategy' = 'ONE_PHASE'"}, "window", types.UpdateBefore},
		{NewLocalWindowAgg([]int{0}, spec, calls)(), []string{"LocalWindowAggregate: ", "local window aggregate", "insert-only", "-D"}, "group", types.Delete},
	} {
		name := tc.want[0][:len(tc.want[0])-2]
		if err := tc.op.Open(&OpContext{MaxParallelism: 128, Name: name}); err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(3, 2)
		b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.BigIntValue(1), types.TimestampValue(0)})
		b.Append(tc.rowsKind, []types.Value{types.BigIntValue(1), types.BigIntValue(1), types.TimestampValue(0)})
		err := tc.op.Process(0, b, &partialCounter{perSlice: map[int64]int{}})
		if err == nil {
			t.Fatalf("%s: a %s row was taken", name, tc.rowsKind)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", name, err, w)
			}
		}
		if strings.Contains(err.Error(), tc.wantNot) {
			t.Errorf("%s: error %q says %q", name, err, tc.wantNot)
		}
	}
}
