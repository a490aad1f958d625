package exec

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestMergeSavedMatchesGo adds a saved state into a group directly
// (mergeSaved: COUNT and SUM/AVG decode it in place, other aggregates go
// through a scratch group), twice, then checks each result against the
// answer computed here over both halves' inputs, and that each state's
// bytes were consumed exactly (the next call's state follows it).
func TestMergeSavedMatchesGo(t *testing.T) {
	ints := []types.Value{types.BigIntValue(7), types.BigIntValue(-3), types.NullValue(), types.BigIntValue(10)}
	more := []types.Value{types.BigIntValue(100), types.NullValue(), types.BigIntValue(-40)}
	doubles := []types.Value{types.DoubleValue(1.5), types.NullValue(), types.DoubleValue(4)}
	moreD := []types.Value{types.DoubleValue(-0.25)}
	cases := []struct {
		name    string
		call    AggCall
		a, b    []types.Value
		want    types.Value
		noFused bool // merged through a scratch group
	}{
		{"count(*)", AggCall{Func: AggCountStar, Arg: -1, Type: types.BigInt}, ints, more, types.BigIntValue(7), false},
		{"count", AggCall{Func: AggCount, Arg: 0, ArgType: types.BigInt, Type: types.BigInt}, ints, more, types.BigIntValue(5), false},
		{"sum of bigint", AggCall{Func: AggSum, Arg: 0, ArgType: types.BigInt, Type: types.BigInt}, ints, more, types.BigIntValue(74), false},
		{"sum of double", AggCall{Func: AggSum, Arg: 0, ArgType: types.Double, Type: types.Double}, doubles, moreD, types.DoubleValue(5.25), false},
		{"avg of bigint", AggCall{Func: AggAvg, Arg: 0, ArgType: types.BigInt, Type: types.BigInt}, ints, more, types.BigIntValue(74 / 5), false},
		{"max", AggCall{Func: AggMax, Arg: 0, ArgType: types.BigInt, Type: types.BigInt}, ints, more, types.BigIntValue(100), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, err := newAccumulator(tc.call)
			if err != nil {
				t.Fatal(err)
			}
			src.grow()
			src.grow()
			for _, v := range tc.a {
				src.add(0, v)
			}
			for _, v := range tc.b {
				src.add(1, v)
			}
			saved := src.save(1, src.save(0, nil))
			dst, _ := newAccumulator(tc.call)
			for range 3 {
				dst.grow()
			}
			if _, fused := dst.(savedMerger); fused == tc.noFused {
				t.Fatalf("fused mergeSaved: %v, want %v", fused, !tc.noFused)
			}
			rest := saved
			for range 2 {
				if rest, err = mergeSaved(dst, 2, 0, rest); err != nil {
					t.Fatal(err)
				}
			}
			if len(rest) != 0 {
				t.Fatalf("%d bytes of state left", len(rest))
			}
			if r := dst.result(2); !types.Equal(r, tc.want) {
				t.Fatalf("result %v, want %v", r, tc.want)
			}
			if _, err := mergeSaved(dst, 2, 0, saved[:0]); err == nil {
				t.Fatal("an empty state merged without an error")
			}
		})
	}
}
