package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// TestIntervalJoinRandom drives the interval join with random rows (k INT,
// ts TIMESTAMP, v BIGINT) on both inputs, out of order, with NULL keys and
// times, and random watermark advances, then a final +∞ watermark; the
// output must equal the answer computed here: a row is dropped (and
// counted) when its time is behind the watermark when it arrives; the kept
// rows of both sides join when their keys are equal and right.ts - left.ts
// is within the bounds; each kept row of a preserved side that joined
// nothing goes out NULL-padded. Every type, several bounds.
func TestIntervalJoinRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}
	for _, typ := range []JoinType{InnerJoin, LeftOuterJoin, RightOuterJoin, FullOuterJoin} {
		for bi, b := range [][2]int64{{0, 10}, {-10, 0}, {-5, 20}, {3, 3}} {
			t.Run(fmt.Sprintf("type%d/bounds%v", typ, b), func(t *testing.T) {
				s := seed + uint64(typ)*100 + uint64(bi)
				spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
					Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
					Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
					LeftTime: 1, RightTime: 1, Lower: b[0], Upper: b[1]}
				runRandomIntervalJoin(t, s, spec)
			})
		}
	}
}

func runRandomIntervalJoin(t *testing.T, seed uint64, spec IntervalJoinSpec) {
	r := rand.New(rand.NewPCG(seed, 10))
	var dropped atomic.Int64
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128, Dropped: &dropped}); err != nil {
		t.Fatal(err)
	}
	k, err := state.NewMemory(state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.OpenKeyed(k); err != nil {
		t.Fatal(err)
	}
	out := &collectEmitter{t: t, rows: map[string]int{}}
	advance := func(wm int64) {
		if err := k.AdvanceWatermark(wm, func(tm state.Timer) error { return op.OnTimer(tm, out) }); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := op.ProcessWatermark(wm, out); err != nil {
			t.Fatal(err)
		}
	}
	var kept [2][][]types.Value
	var wantDropped int64
	wm := int64(NoWatermark)
	clock := int64(0)
	b := types.NewBatch(3, 8)
	for step := range 600 {
		if r.IntN(8) == 0 {
			wm = clock - int64(r.IntN(15))
			if wm > k.Watermark() {
				advance(wm)
			} else {
				wm = k.Watermark()
			}
			continue
		}
		clock += int64(r.IntN(3))
		side := r.IntN(2)
		b.Reset()
		for range 1 + r.IntN(3) {
			row := []types.Value{types.IntValue(int64(r.IntN(5))), types.TimestampValue(clock - int64(r.IntN(25))), types.BigIntValue(int64(step))}
			if r.IntN(15) == 0 {
				row[0] = types.Value{}
			}
			if r.IntN(40) == 0 {
				row[1] = types.Value{}
			}
			if row[1].IsNull() || row[1].Int() < k.Watermark() {
				wantDropped++
			} else {
				kept[side] = append(kept[side], row)
			}
			b.Append(types.Insert, row)
		}
		if err := op.Process(side, b, out); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	advance(MaxWatermark)

	want := map[string]int{}
	null := []types.Value{{}, {}, {}}
	matched := [2][]bool{make([]bool, len(kept[0])), make([]bool, len(kept[1]))}
	for i, l := range kept[0] {
		for j, rr := range kept[1] {
			if l[0].IsNull() || rr[0].IsNull() || l[0].Int() != rr[0].Int() {
				continue
			}
			if d := rr[1].Int() - l[1].Int(); d < spec.Lower || d > spec.Upper {
				continue
			}
			want[fmt.Sprint(append(slices.Clone(l), rr...))]++
			matched[0][i], matched[1][j] = true, true
		}
	}
	for i, l := range kept[0] {
		if !matched[0][i] && (spec.Type == LeftOuterJoin || spec.Type == FullOuterJoin) {
			want[fmt.Sprint(append(slices.Clone(l), null...))]++
		}
	}
	for j, rr := range kept[1] {
		if !matched[1][j] && (spec.Type == RightOuterJoin || spec.Type == FullOuterJoin) {
			want[fmt.Sprint(append(slices.Clone(null), rr...))]++
		}
	}
	if !equalMultiset(out.rows, want) {
		t.Fatalf("seed %d: output (%d rows)\n%v\nwant (%d rows)\n%v", seed, len(out.rows), keysOf(out.rows), len(want), keysOf(want))
	}
	if dropped.Load() != wantDropped {
		t.Fatalf("seed %d: %d rows counted as dropped, want %d", seed, dropped.Load(), wantDropped)
	}
	if wantDropped == 0 {
		t.Fatalf("seed %d: no late rows generated", seed)
	}
	// Every row was cleaned up at the +∞ watermark.
	for i := range 2 {
		if n := countRows(t, k, op.rows[i]); n != 0 {
			t.Fatalf("seed %d: %d rows left in side %d's state after the final watermark", seed, n, i)
		}
	}
}

// countRows counts the kept rows of every key of a side.
func countRows(t *testing.T, k *state.Keyed, s *state.SortedMapState[timeKey, joinRec]) int {
	t.Helper()
	n := 0
	for key := range 5 {
		if err := k.SetCurrentKeyRow([]types.Value{types.IntValue(int64(key))}, []int{0}); err != nil {
			t.Fatal(err)
		}
		if err := s.Ascend(func(timeKey, joinRec) (bool, error) { n++; return true, nil }); err != nil {
			t.Fatal(err)
		}
	}
	return n
}
