package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// This file tests the semi and anti join operator against a batch answer
// computed here: random changelogs on both inputs (as for the regular
// join: updates, deletes, duplicates, NULL keys) in random interleavings;
// the applied output must equal the left rows that have a match (semi) or
// none (anti) among the applied right rows, for every state layout, and
// every retraction must take back a row emitted before.

// batchSemi returns the live left rows with (semi) or without (anti) a
// right row of equal, non-NULL k (and l.v <= r.v with residual).
func batchSemi(anti bool, left, right [][]types.Value, residual bool) map[string]int {
	out := map[string]int{}
	byKey := indexByKey(right)
	for _, l := range left {
		found := false
		if !l[0].IsNull() {
			for _, j := range byKey[l[0].Int()] {
				if !residual || l[2].Int() <= right[j][2].Int() {
					found = true
					break
				}
			}
		}
		if found != anti {
			out[rowKey(l)]++
		}
	}
	return out
}

func TestSemiJoinRandomChangelogs(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindBigInt}
	layouts := []struct {
		layout JoinLayout
		uk     []int
	}{{NoUniqueKey, nil}, {HasUniqueKey, []int{1}}, {JoinKeyContainsUniqueKey, nil}}
	for _, anti := range []bool{false, true} {
		for li, ll := range layouts {
			for ri, rl := range layouts {
				for _, residual := range []bool{false, true} {
					name := fmt.Sprintf("anti=%v/left%v/right%v/residual=%v", anti, ll.layout, rl.layout, residual)
					t.Run(name, func(t *testing.T) {
						s := seed + uint64(li*100+ri*10)
						if anti {
							s += 1000
						}
						if residual {
							s++
						}
						runRandomSemiJoin(t, s, anti, JoinSide{Keys: []int{0}, Kinds: kinds, Layout: ll.layout, UniqueKey: ll.uk},
							JoinSide{Keys: []int{0}, Kinds: kinds, Layout: rl.layout, UniqueKey: rl.uk}, residual)
					})
				}
			}
		}
	}
}

func runRandomSemiJoin(t *testing.T, seed uint64, anti bool, left, right JoinSide, residual bool) {
	r := rand.New(rand.NewPCG(seed, 15))
	spec := SemiJoinSpec{Anti: anti, Left: left, Right: right}
	if residual {
		c, err := expr.NewCompare("<=", expr.NewColumn(2, types.BigInt, "lv"), expr.NewColumn(5, types.BigInt, "rv"))
		if err != nil {
			t.Fatal(err)
		}
		spec.Residual = c
	}
	op := NewSemiJoin(spec)().(*semiJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	gens := [2]*changelogGen{
		{r: r, keys: 6, unique: left.Layout != NoUniqueKey, keyUnique: left.Layout == JoinKeyContainsUniqueKey},
		{r: r, keys: 6, unique: right.Layout != NoUniqueKey, keyUnique: right.Layout == JoinKeyContainsUniqueKey},
	}
	out := &collectEmitter{t: t, rows: map[string]int{}}
	b := types.NewBatch(3, 16)
	for step := range 400 {
		side := r.IntN(2)
		b.Reset()
		for range 1 + r.IntN(4) {
			gens[side].next(b)
		}
		if err := op.Process(side, b, out); err != nil {
			t.Fatalf("seed %d, step %d: %v", seed, step, err)
		}
		if step%25 == 24 || step == 399 {
			want := batchSemi(anti, gens[0].live, gens[1].live, residual)
			if !equalMultiset(out.rows, want) {
				t.Fatalf("seed %d, step %d: output\n%v\nwant\n%v", seed, step, keysOf(out.rows), keysOf(want))
			}
		}
	}
}

// TestSemiJoinKinds checks the kinds a semi and an anti join emit: a left
// row passes with its own kind, a right row's first match brings a left
// row (+I for semi, -D for anti) and its last match's retraction takes it
// back; NULL keys never match.
func TestSemiJoinKinds(t *testing.T) {
	kinds := []types.Kind{types.KindInt, types.KindBigInt}
	row := func(k any, v int64) []types.Value {
		if k == nil {
			return []types.Value{{}, types.BigIntValue(v)}
		}
		return []types.Value{types.IntValue(int64(k.(int))), types.BigIntValue(v)}
	}
	type step struct {
		port int
		kind types.RowKind
		row  []types.Value
		want []string // emitted rows, as kind + row
	}
	for _, tc := range []struct {
		anti  bool
		steps []step
	}{
		{false, []step{
			{0, types.Insert, row(1, 10), nil},
			{0, types.Insert, row(nil, 11), nil},
			{1, types.Insert, row(1, 0), []string{"+I[1, 10]"}},
			{1, types.Insert, row(1, 0), nil},
			{1, types.Insert, row(nil, 0), nil},
			{0, types.UpdateBefore, row(1, 10), []string{"-U[1, 10]"}},
			{0, types.UpdateAfter, row(1, 12), []string{"+U[1, 12]"}},
			{1, types.Delete, row(1, 0), nil},
			{1, types.Delete, row(1, 0), []string{"-D[1, 12]"}},
		}},
		{true, []step{
			{0, types.Insert, row(1, 10), []string{"+I[1, 10]"}},
			{0, types.Insert, row(nil, 11), []string{"+I[<NULL>, 11]"}},
			{1, types.Insert, row(1, 0), []string{"-D[1, 10]"}},
			{1, types.Insert, row(nil, 0), nil},
			{0, types.Insert, row(1, 13), nil},
			{1, types.Delete, row(1, 0), []string{"+I[1, 10]", "+I[1, 13]"}},
		}},
	} {
		op := NewSemiJoin(SemiJoinSpec{Anti: tc.anti, Left: JoinSide{Keys: []int{0}, Kinds: kinds}, Right: JoinSide{Keys: []int{0}, Kinds: kinds}})()
		if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
			t.Fatal(err)
		}
		for i, s := range tc.steps {
			b := types.NewBatch(2, 1)
			b.Append(s.kind, s.row)
			var got []string
			em := emitFunc(func(b *types.Batch) error {
				for j := range b.Len() {
					got = append(got, types.FormatRow(b.Kinds[j], b.Row(j)))
				}
				return nil
			})
			if err := op.Process(s.port, b, em); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, s.want) {
				t.Fatalf("anti=%v step %d (%s on port %d): emitted %v, want %v", tc.anti, i, types.FormatRow(s.kind, s.row), s.port, got, s.want)
			}
		}
	}
}

// emitFunc is an Emitter that calls a function.
type emitFunc func(*types.Batch) error

func (f emitFunc) Emit(b *types.Batch) error { return f(b) }

// TestSemiJoinStateTTL checks that table.exec.state.ttl bounds a semi
// join's state as a regular join's: a right row not written for longer
// than the TTL is gone, so a left row that comes after it finds no match.
func TestSemiJoinStateTTL(t *testing.T) {
	kinds := []types.Kind{types.KindInt, types.KindBigInt}
	for _, wait := range []int64{500, 1500} {
		op := NewSemiJoin(SemiJoinSpec{Left: JoinSide{Keys: []int{0}, Kinds: kinds}, Right: JoinSide{Keys: []int{0}, Kinds: kinds}})().(*semiJoinOp)
		if err := op.Open(&OpContext{MaxParallelism: 128, StateTTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		out := &collectEmitter{t: t, rows: map[string]int{}}
		fire := func(ms int64) {
			if err := op.advanceTime(ms); err != nil {
				t.Fatal(err)
			}
		}
		b := types.NewBatch(2, 1)
		fire(10_000)
		b.Append(types.Insert, []types.Value{types.IntValue(1), types.BigIntValue(1)})
		if err := op.Process(1, b, out); err != nil {
			t.Fatal(err)
		}
		fire(10_000 + wait)
		b.Reset()
		b.Append(types.Insert, []types.Value{types.IntValue(1), types.BigIntValue(2)})
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		want := 1
		if wait > 1000 {
			want = 0
		}
		if len(out.rows) != want {
			t.Fatalf("after %d ms with a TTL of 1 s: %d rows out, want %d", wait, len(out.rows), want)
		}
	}
}
