package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// globalFootprint is what the global window aggregate's memory is made
// of, in entries: accumulator cells it has room for, cell-list capacity
// over all key slots, and slice ends indexed.
func globalFootprint(g *globalWindowOp) (cells, lists, ends int) {
	for _, k := range g.wkeys {
		lists += cap(k.cells)
	}
	return int(g.nCells), lists, len(g.slices)
}

// TestWindowStateShrinksAfterBurst runs a two-phase TUMBLE aggregate over
// many windows: a steady part (the watermark a few slices behind the
// rows), a burst (the watermark held back for 300 slices, as when one
// input runs ahead of another: every key holds 300 open slices), then a
// steady part again. Once the burst's windows fired, the global phase's
// accumulator cells, its keys' cell lists and its slice index are back
// near their size in the first steady part, not at the burst's size; the
// local phase keeps at most a few spare slices. The windows' counts and
// sums match those computed here.
func TestWindowStateShrinksAfterBurst(t *testing.T) {
	onOneGoroutine(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 13))
	calls := windowTestCalls(t)[:2]
	spec := WindowSpec{Kind: WindowTumble, Size: 100, TimeCol: 2}
	g := NewGlobalWindowAgg(1, spec, calls)().(*globalWindowOp)
	if err := g.Open(&OpContext{MaxParallelism: 128, Name: "global"}); err != nil {
		t.Fatal(err)
	}
	l := NewLocalWindowAgg([]int{0}, spec, calls)().(*localWindowAggOp)
	if err := l.Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
		t.Fatal(err)
	}
	feed := &globalFeed{g: g}
	out := &rowCollector{}
	const keys, perSlice = 100, 300
	type acc struct{ n, sum int64 }
	want := map[[2]int64]*acc{}
	b := types.NewBatch(3, perSlice)
	slice := int64(0)
	// run feeds n slices of rows, with the watermark lag slices behind
	// the newest row after every every-th.
	every := int64(1)
	run := func(n, lag int64) {
		for range n {
			b.Reset()
			for i := range perSlice {
				k, v := int64(r.IntN(keys)), int64(r.IntN(1000))
				ts := slice*100 + int64(i)*100/perSlice
				b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v), types.TimestampValue(ts)})
				id := [2]int64{k, slice * 100}
				if want[id] == nil {
					want[id] = &acc{}
				}
				want[id].n++
				want[id].sum += v
			}
			if err := l.Process(0, b, feed); err != nil {
				t.Fatal(err)
			}
			slice++
			if wm := (slice-lag)*100 - 1; wm > 0 && slice%every == 0 {
				if err := l.ProcessWatermark(wm, feed); err != nil {
					t.Fatal(err)
				}
				if err := g.ProcessWatermark(wm, out); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	run(200, 3)
	cells0, lists0, ends0 := globalFootprint(g)
	// The burst: the watermark stays where it is for 300 slices.
	held := slice
	run(300, 300+slice-held)
	burstCells, burstLists, _ := globalFootprint(g)
	if burstCells < 300*keys/2 {
		t.Fatalf("the burst held %d cells only: it does not test anything", burstCells)
	}
	run(400, 3)
	cells, lists, ends := globalFootprint(g)
	t.Logf("steady: %d cells, %d cell-list entries, %d slice ends; burst: %d cells, %d cell-list entries; after: %d, %d, %d",
		cells0, lists0, ends0, burstCells, burstLists, cells, lists, ends)
	if cells > 2*cells0+globalWindowMinCells {
		t.Errorf("after the burst the accumulators have room for %d cells, before it %d", cells, cells0)
	}
	if lists > 2*lists0+8*keys {
		t.Errorf("after the burst the keys' cell lists have room for %d cells, before it %d", lists, lists0)
	}
	if ends > 2*ends0+2 {
		t.Errorf("after the burst %d slice ends are indexed, before it %d", ends, ends0)
	}
	if g.compactions != 1 {
		t.Errorf("%d compactions, want 1 (after the burst)", g.compactions)
	}
	// Watermarks that fire 80 slices at once swing the cells in use
	// between none and 80 slices' worth (some 7,600), over and over: that
	// is the steady state, not a burst, and does not compact.
	every = 80
	run(1600, 0)
	if g.compactions != 1 {
		t.Errorf("%d compactions after the swings of watermarks 80 slices apart, want still 1", g.compactions)
	}
	if len(l.spare)+len(l.open) > localWindowSpareSlices+2 {
		t.Errorf("the local phase keeps %d slices", len(l.spare)+len(l.open))
	}
	if err := l.ProcessWatermark(MaxWatermark, feed); err != nil {
		t.Fatal(err)
	}
	if err := g.ProcessWatermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	var wantRows []string
	for id, a := range want {
		s := id[1]
		wantRows = append(wantRows, fmt.Sprint([]types.Value{types.BigIntValue(id[0]), types.TimestampValue(s), types.TimestampValue(s + 100),
			types.TimestampValue(s + 99), types.BigIntValue(a.n), types.BigIntValue(a.sum)}))
	}
	slices.Sort(wantRows)
	got := slices.Sorted(slices.Values(out.rows))
	if !slices.Equal(got, wantRows) {
		t.Fatalf("seed %d: %d windows, want %d\nfirst got  %v\nfirst want %v", seed, len(got), len(wantRows), got[:min(3, len(got))], wantRows[:min(3, len(wantRows))])
	}
}
