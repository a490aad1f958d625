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

// wmCheckEmitter checks that every emitted row with a key (column 0) has
// its left time (column 1) at or before the watermark the operator has
// seen (a NULL key matches nothing and goes out at once), then collects it.
type wmCheckEmitter struct {
	*collectEmitter
	wm *int64
}

func (e wmCheckEmitter) Emit(b *types.Batch) error {
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("temporal join emitted %s", types.FormatRow(b.Kinds[i], b.Row(i)))
		}
		if ts := b.Row(i)[1]; !b.Row(i)[0].IsNull() && ts.Int() > *e.wm {
			return fmt.Errorf("row %v emitted before the watermark (%d) passed its time", b.Row(i), *e.wm)
		}
	}
	return e.collectEmitter.Emit(b)
}

// TestTemporalJoinRandom drives the event-time temporal join with random
// left rows (k INT, ts TIMESTAMP, v BIGINT) and a random versioned right
// changelog (k INT, ts TIMESTAMP, v BIGINT: inserts, updates as -U/+U
// pairs, deletes), out of order within the watermark, NULL keys and
// times, several versions per key, random watermark advances, then +∞.
// The output must be the answer computed here: each left row with the
// right version of its key valid at its time (the latest right row with a
// time at or before it, ties to the later arrival; none if that is a
// delete), NULL-padded for LEFT when there is none; rows only after the
// watermark passed their time; superseded versions purged.
func TestTemporalJoinRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}
	for _, typ := range []JoinType{InnerJoin, LeftOuterJoin} {
		for run := range 4 {
			t.Run(fmt.Sprintf("type%d/run%d", typ, run), func(t *testing.T) {
				s := seed + uint64(typ)*100 + uint64(run)
				spec := TemporalJoinSpec{JoinSpec: JoinSpec{Type: typ,
					Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
					Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
					LeftTime: 1, RightTime: 1}
				runRandomTemporalJoin(t, s, spec)
			})
		}
	}
}

func runRandomTemporalJoin(t *testing.T, seed uint64, spec TemporalJoinSpec) {
	r := rand.New(rand.NewPCG(seed, 14))
	var dropped atomic.Int64
	op := NewTemporalJoin(spec)().(*temporalJoinOp)
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
	wm := int64(NoWatermark)
	out := wmCheckEmitter{collectEmitter: &collectEmitter{t: t, rows: map[string]int{}}, wm: &wm}
	advance := func(to int64) {
		wm = to
		if err := k.AdvanceWatermark(to, func(tm state.Timer) error { return op.OnTimer(tm, out) }); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	type rightEv struct {
		kind types.RowKind
		row  []types.Value
	}
	var lefts [][]types.Value
	var rights []rightEv
	var wantDropped int64
	live := map[int64][]types.Value{} // the right's current row per key
	clock := int64(100)
	b := types.NewBatch(3, 8)
	// rowTime is a time after the watermark, out of order within 20 ms.
	rowTime := func() types.Value {
		return types.TimestampValue(max(clock-int64(r.IntN(20)), wm+1))
	}
	for step := range 800 {
		clock += int64(r.IntN(3))
		b.Reset()
		switch r.IntN(10) {
		case 0:
			if w := clock - 20 - int64(r.IntN(10)); w > wm {
				advance(w)
			}
			continue
		case 1, 2, 3, 4:
			for range 1 + r.IntN(3) {
				row := []types.Value{types.IntValue(int64(r.IntN(5))), rowTime(), types.BigIntValue(int64(step))}
				if r.IntN(20) == 0 {
					row[0] = types.Value{}
				}
				if r.IntN(40) == 0 {
					row[1] = types.Value{}
					wantDropped++
				} else {
					lefts = append(lefts, row)
				}
				b.Append(types.Insert, row)
			}
			if err := op.Process(0, b, out); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			continue
		}
		key := int64(r.IntN(5))
		row := []types.Value{types.IntValue(key), rowTime(), types.BigIntValue(int64(-step))}
		old, ok := live[key]
		switch {
		case ok && r.IntN(4) == 0:
			row[2] = old[2]
			b.Append(types.Delete, row)
			rights = append(rights, rightEv{types.Delete, row})
			delete(live, key)
		case ok:
			b.Append(types.UpdateBefore, old)
			b.Append(types.UpdateAfter, row)
			rights = append(rights, rightEv{types.UpdateAfter, row})
			live[key] = row
		default:
			b.Append(types.Insert, row)
			rights = append(rights, rightEv{types.Insert, row})
			live[key] = row
		}
		if err := op.Process(1, b, out); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	advance(MaxWatermark)

	want := map[string]int{}
	null := []types.Value{{}, {}, {}}
	for _, l := range lefts {
		var match []types.Value
		if !l[0].IsNull() {
			best := int64(-1 << 62)
			for _, ev := range rights {
				rt := ev.row[1].Int()
				if ev.row[0].Int() != l[0].Int() || rt > l[1].Int() || rt < best {
					continue
				}
				best = rt
				match = nil
				if ev.kind != types.Delete {
					match = ev.row
				}
			}
		}
		switch {
		case match != nil:
			want[fmt.Sprint(append(slices.Clone(l), match...))]++
		case spec.Type == LeftOuterJoin:
			want[fmt.Sprint(append(slices.Clone(l), null...))]++
		}
	}
	if !equalMultiset(out.rows, want) {
		t.Fatalf("seed %d: output (%d rows)\n%v\nwant (%d rows)\n%v", seed, len(out.rows), keysOf(out.rows), len(want), keysOf(want))
	}
	if dropped.Load() != wantDropped {
		t.Fatalf("seed %d: %d rows counted as dropped, want %d", seed, dropped.Load(), wantDropped)
	}
	// After +∞ no left row waits, and each key keeps at most its latest
	// version (none if it was deleted).
	if n := countRows(t, k, op.left); n != 0 {
		t.Fatalf("seed %d: %d left rows left in state", seed, n)
	}
	for key := range 5 {
		if err := k.SetCurrentKeyRow([]types.Value{types.IntValue(int64(key))}, []int{0}); err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := op.right.Ascend(func(int64, joinRec) (bool, error) { n++; return true, nil }); err != nil {
			t.Fatal(err)
		}
		if n > 1 {
			t.Fatalf("seed %d: key %d keeps %d versions after the final watermark", seed, key, n)
		}
	}
}
