package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestJoinRetentionDropsRows joins left rows (k, t, id) with right rows
// (k, m, id) on k where t BETWEEN m - 10 AND m, the right input's m being
// watermark-monotone (every right row after right watermark W has m > W)
// and the left rows coming in any order, late ones included. The left
// side's retention (t + 10 < right watermark) must drop left rows as the
// right watermark advances, exactly those out of reach at a sweep, and
// the output must equal a nested-loop join computed in Go; also with a
// 1 KiB state budget, where keys spill to the store and come back.
func TestJoinRetentionDropsRows(t *testing.T) {
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}
	tcol := expr.NewColumn(1, types.Timestamp, "t")
	mcol := expr.NewColumn(4, types.Timestamp, "m")
	lo, err := expr.NewArith("-", mcol, expr.NewLiteral(types.IntervalValue(10), types.Interval))
	if err != nil {
		t.Fatal(err)
	}
	residual, err := expr.NewBetween(tcol, lo, mcol, false)
	if err != nil {
		t.Fatal(err)
	}
	// 20 seeds (the odd ones spill), or the first 6 under -race (CI runs
	// all 20 without -race).
	seeds := uint64(20)
	if raceEnabled {
		seeds = 6
	}
	for seed := range seeds {
		spill := seed%2 == 1
		// Spilling needs more keys than Records keeps at least
		// (state.MinRecords): many keys, many rows, a slow watermark.
		keys, steps, perStep, wmEvery, wmStep, spread := 3, 300, 4, 4, 6, 50
		if spill {
			keys, steps, perStep, wmEvery, wmStep, spread = 3000, 1500, 8, 8, 2, 160
		}
		r := rand.New(rand.NewPCG(seed, 7))
		op := NewJoin(JoinSpec{Type: InnerJoin,
			Left:      JoinSide{Keys: []int{0}, Kinds: kinds},
			Right:     JoinSide{Keys: []int{0}, Kinds: kinds},
			Residual:  residual,
			Retention: [2]*JoinRetention{{TimeCol: 1, Offset: 10}},
		})().(*joinOp)
		ctx := &OpContext{ID: "join", MaxParallelism: joinTestMaxPar, Parallelism: 1}
		if spill {
			ctx.StateBudget = 1 << 10
		}
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		if spill {
			st, err := statestore.Open(t.TempDir(), statestore.Options{MaxParallelism: joinTestMaxPar})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := op.InitState(st, false); err != nil {
				t.Fatal(err)
			}
		}
		out := &collectEmitter{t: t, rows: map[string]int{}}
		var lefts, rights [][]types.Value
		wm := int64(0) // the right watermark: every later right row has m > wm
		id := int64(0)
		b := types.NewBatch(3, 8)
		for step := range steps {
			b.Reset()
			side := r.IntN(2)
			for range 1 + r.IntN(perStep) {
				id++
				k := types.BigIntValue(int64(r.IntN(keys)))
				var row []types.Value
				if side == 0 {
					// around the watermark, up to 30 behind it (late)
					ts := types.TimestampValue(wm - 30 + int64(r.IntN(spread)))
					if r.IntN(20) == 0 {
						ts = types.NullValue()
					}
					row = []types.Value{k, ts, types.BigIntValue(id)}
					lefts = append(lefts, row)
				} else {
					row = []types.Value{k, types.TimestampValue(wm + 1 + int64(r.IntN(15))), types.BigIntValue(id)}
					rights = append(rights, row)
				}
				b.Append(types.Insert, row)
			}
			if err := op.Process(side, b, out); err != nil {
				t.Fatal(err)
			}
			if r.IntN(wmEvery) == 0 {
				wm += int64(r.IntN(wmStep))
				before := op.retain[0].swept
				if err := op.ProcessInputWatermark(1, wm); err != nil {
					t.Fatal(err)
				}
				// The left watermark drops nothing: the right side has
				// no retention.
				if err := op.ProcessInputWatermark(0, wm+100); err != nil {
					t.Fatal(err)
				}
				if op.retain[0].swept == wm && before != wm && !op.sides[0].st.Backed() {
					// Just swept: the left rows kept are those within reach.
					within := 0
					for _, l := range lefts {
						if l[1].IsNull() || l[1].Int()+10 >= wm {
							within++
						}
					}
					if op.sides[0].rows != int64(within) {
						t.Fatalf("seed %d, step %d: %d left rows kept after a sweep at %d, want %d", seed, step, op.sides[0].rows, wm, within)
					}
				}
			}
			if got := op.sides[1].rows; got != int64(len(rights)) && !op.sides[1].st.Backed() {
				t.Fatalf("seed %d: %d right rows kept, want all %d", seed, got, len(rights))
			}
		}
		want := map[string]int{}
		for _, l := range lefts {
			for _, rr := range rights {
				if l[0] == rr[0] && !l[1].IsNull() && rr[1].Int()-10 <= l[1].Int() && l[1].Int() <= rr[1].Int() {
					want[fmt.Sprint(append(append([]types.Value{}, l...), rr...))]++
				}
			}
		}
		if !equalMultiset(out.rows, want) {
			t.Fatalf("seed %d: %d joined rows, want %d\n got  %v\n want %v", seed, len(out.rows), len(want), head(keysOf(out.rows)), head(keysOf(want)))
		}
		if op.retain[0].dropped == 0 {
			t.Fatalf("seed %d: no left row dropped", seed)
		}
		if err := op.ProcessInputWatermark(1, MaxWatermark); err != nil {
			t.Fatal(err)
		}
		nulls := 0
		for _, l := range lefts {
			if l[1].IsNull() {
				nulls++
			}
		}
		if spill {
			if !op.sides[0].st.Backed() {
				t.Fatalf("seed %d: a budget of 1 KiB did not spill", seed)
			}
			continue
		}
		if op.sides[0].rows != int64(nulls) {
			t.Fatalf("seed %d: %d left rows kept at the end of the right input, want the %d with a NULL time", seed, op.sides[0].rows, nulls)
		}
	}
}
