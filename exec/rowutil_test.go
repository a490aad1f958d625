package exec

import (
	"math"
	"testing"

	"github.com/weir-sql/weir/types"
)

func TestHashIntKey(t *testing.T) {
	ns := []int64{0, 1, -1, 42, 1 << 40, math.MaxInt64, math.MinInt64, -123456789}
	for i := range 1000 {
		ns = append(ns, int64(uint64(i)*0x9E3779B97F4A7C15))
	}
	mk := map[types.Kind]func(int64) types.Value{
		types.KindInt: types.IntValue, types.KindBigInt: types.BigIntValue,
		types.KindTimestamp: types.TimestampValue, types.KindInterval: types.IntervalValue,
		types.KindBoolean: func(n int64) types.Value { return types.BoolValue(n&1 == 1) },
	}
	for k, f := range mk {
		for _, n := range ns {
			v := f(n)
			if !intStored(v.Kind()) {
				t.Fatalf("%v not int-stored", v.Kind())
			}
			want := types.HashKey(types.AppendKey(nil, v))
			if got := hashIntKey(v.Kind(), uint64(v.Int())); got != want {
				t.Fatalf("%v %d: got %x, want %x", k, n, got, want)
			}
		}
	}
}

func TestAppendRow(t *testing.T) {
	b := types.NewBatch(2, 1)
	for i := range 5 {
		appendRow(b, types.UpdateAfter, []types.Value{types.BigIntValue(int64(i)), types.StringValue("x")})
	}
	if b.Len() != 5 || b.Row(4)[0].Int() != 4 || b.Row(4)[1].Str() != "x" || b.Kinds[4] != types.UpdateAfter {
		t.Fatalf("bad batch %+v", b)
	}
}
