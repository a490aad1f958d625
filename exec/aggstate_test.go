package exec

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestSumAvgStateFormat pins the stored state of SUM and AVG (checkpoints
// written earlier must still restore) and checks that it loads back to the
// same result: SUM of integers is varint(sum) varint(count), SUM of DOUBLE
// float64(sum) varint(count), AVG varint(integer sum) float64(float sum)
// varint(count).
func TestSumAvgStateFormat(t *testing.T) {
	f := func(x float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)) }
	v := func(x int64) []byte { return binary.AppendVarint(nil, x) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	ints := []types.Value{types.BigIntValue(7), types.BigIntValue(-3), types.NullValue(), types.BigIntValue(10)}
	doubles := []types.Value{types.DoubleValue(1.5), types.DoubleValue(-0.25), types.NullValue(), types.DoubleValue(4)}
	cases := []struct {
		name   string
		call   AggCall
		in     []types.Value
		want   []byte
		result types.Value
	}{
		{"sum of bigint", AggCall{Func: AggSum, Arg: 0, ArgType: types.BigInt, Type: types.BigInt}, ints,
			cat(v(14), v(3)), types.BigIntValue(14)},
		{"sum of double", AggCall{Func: AggSum, Arg: 0, ArgType: types.Double, Type: types.Double}, doubles,
			cat(f(5.25), v(3)), types.DoubleValue(5.25)},
		{"avg of bigint", AggCall{Func: AggAvg, Arg: 0, ArgType: types.BigInt, Type: types.BigInt}, ints,
			cat(v(14), f(0), v(3)), types.BigIntValue(4)},
		{"avg of double", AggCall{Func: AggAvg, Arg: 0, ArgType: types.Double, Type: types.Double}, doubles,
			cat(v(0), f(5.25), v(3)), types.DoubleValue(1.75)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acc, err := newAccumulator(tc.call)
			if err != nil {
				t.Fatal(err)
			}
			acc.grow()
			for _, x := range tc.in {
				acc.add(0, x)
			}
			acc.add(0, tc.in[0]) // a retraction takes back an addition
			acc.retract(0, tc.in[0])
			got := acc.save(0, nil)
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("saved %x, want %x", got, tc.want)
			}
			again, _ := newAccumulator(tc.call)
			again.grow()
			rest, err := again.load(0, got)
			if err != nil || len(rest) != 0 {
				t.Fatalf("load: %v, %d bytes left", err, len(rest))
			}
			if r := again.result(0); !types.Equal(r, tc.result) || r.Kind() != tc.result.Kind() {
				t.Fatalf("result after load %v, want %v", r, tc.result)
			}
		})
	}
}
