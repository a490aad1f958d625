package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestIntervalJoinFusedCalcChain runs an interval join and a Calc picking
// columns after it as a task chains them: both opened, fuseCalcs, rows
// through the join into the Calc. For every join type and picks of
// either side (the padded one included, repeated, reordered) the Calc
// must be folded into the join (which picks) and then pass batches on,
// and the rows out of the chain must be the picked columns of the answer
// computed here in Go (watermarks along the way, late rows left out of
// the answer, batches crossing the join's flush size). A Calc with a
// filter is not folded, and its output is checked the same way. Reopened
// (as a restart) the chain folds again. Randomized: prints its seed.
func TestIntervalJoinFusedCalcChain(t *testing.T) {
	onOneGoroutine(t)
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}
	const width = 3
	types2 := []types.Type{types.Int, types.Timestamp, types.BigInt}
	picks := [][]int{{0, 1, 4}, {5, 3, 5, 1}, {4}, {2, 5, 0}}
	for _, typ := range []JoinType{InnerJoin, LeftOuterJoin, RightOuterJoin, FullOuterJoin} {
		for pi, pick := range picks {
			for _, filtered := range []bool{false, true} {
				name := fmt.Sprintf("type%d/pick%d/filter%v", typ, pi, filtered)
				t.Run(name, func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, uint64(int(typ)*100+pi*10)+map[bool]uint64{false: 0, true: 1}[filtered]))
					spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
						Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
						Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
						LeftTime: 1, RightTime: 1, Lower: -7, Upper: 3}
					proj := make([]expr.Expr, len(pick))
					for k, c := range pick {
						proj[k] = expr.NewColumn(c, types2[c%width], fmt.Sprintf("c%d", c))
					}
					var filter expr.Expr
					if filtered { // keeps rows whose first picked column is not NULL
						filter = expr.NewIsNull(proj[0], true)
					}
					for round := range 2 { // the second as after a restart: opened again
						ij := NewIntervalJoin(spec)().(*intervalJoinOp)
						if err := ij.Open(&OpContext{ID: "ij", Name: "IntervalJoin", Parallelism: 1, MaxParallelism: ijMaxPar}); err != nil {
							t.Fatal(err)
						}
						calc := NewCalc(filter, proj)().(*calcOp)
						if err := calc.Open(&OpContext{Name: "Calc"}); err != nil {
							t.Fatal(err)
						}
						fuseCalcs([]Operator{ij, calc})
						if (ij.pick != nil) == filtered || (!filtered && calc.proj != nil) {
							t.Fatalf("round %d: filter %v: join picks %v, Calc proj %v", round, filtered, ij.pick, calc.proj)
						}
						rec := &recorder{}
						chain := &chainEmitter{op: calc, next: rec}
						var kept [2][][]types.Value
						wm := int64(-1 << 62)
						now := int64(0)
						for step := range 120 {
							side := r.IntN(2)
							size := 1 + r.IntN(30)
							if step%40 == 39 {
								size = 1100 // past the join's flush size
							}
							b := types.NewBatch(width, size)
							for range size {
								kv := types.IntValue(int64(r.IntN(25)))
								if r.IntN(15) == 0 {
									kv = types.Value{}
								}
								ts := now + int64(r.IntN(20)) - 12
								row := []types.Value{kv, types.TimestampValue(ts), types.BigIntValue(r.Int64N(1000))}
								b.Append(types.Insert, row)
								if ts >= wm {
									kept[side] = append(kept[side], slices.Clone(row))
								}
							}
							if err := ij.Process(side, b, chain); err != nil {
								t.Fatal(err)
							}
							now += int64(r.IntN(4))
							if r.IntN(5) == 0 && now-15 > wm {
								wm = now - 15
								if err := ij.ProcessWatermark(wm, chain); err != nil {
									t.Fatal(err)
								}
							}
						}
						if err := ij.ProcessWatermark(1<<62, chain); err != nil {
							t.Fatal(err)
						}
						if err := ij.Finish(chain); err != nil {
							t.Fatal(err)
						}
						// The answer, in Go.
						var want []string
						add := func(l, rr []types.Value) {
							full := append(slices.Clone(l), rr...)
							out := make([]types.Value, len(pick))
							for k, c := range pick {
								out[k] = full[c]
							}
							if filtered && out[0].IsNull() {
								return
							}
							want = append(want, types.FormatRow(types.Insert, out))
						}
						null := make([]types.Value, width)
						matched := [2][]bool{make([]bool, len(kept[0])), make([]bool, len(kept[1]))}
						for i, l := range kept[0] {
							for j, rr := range kept[1] {
								if l[0].IsNull() || rr[0].IsNull() || l[0].Int() != rr[0].Int() {
									continue
								}
								if d := rr[1].Int() - l[1].Int(); d < spec.Lower || d > spec.Upper {
									continue
								}
								add(l, rr)
								matched[0][i], matched[1][j] = true, true
							}
						}
						for i, l := range kept[0] {
							if !matched[0][i] && (typ == LeftOuterJoin || typ == FullOuterJoin) {
								add(l, null)
							}
						}
						for j, rr := range kept[1] {
							if !matched[1][j] && (typ == RightOuterJoin || typ == FullOuterJoin) {
								add(null, rr)
							}
						}
						got := slices.Clone(rec.rows)
						sort.Strings(got)
						sort.Strings(want)
						if len(got) != len(want) {
							t.Fatalf("seed %d, round %d: %d rows, want %d", seed, round, len(got), len(want))
						}
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("seed %d, round %d: row %d (sorted) is %s, want %s", seed, round, i, got[i], want[i])
							}
						}
					}
				})
			}
		}
	}
}
