package expr

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestHashBucketStable pins the buckets of a few values: a bucket is part
// of the keys of a split distinct aggregation's checkpointed state, so the
// hash must never change (a restore would put a value in another bucket
// and count it twice). Equal values of other integer kinds share a bucket
// only within one type (a column has one).
func TestHashBucketStable(t *testing.T) {
	for _, c := range []struct {
		v    types.Value
		want int64
	}{
		{types.NullValue(), 0},
		{types.BigIntValue(0), 431},
		{types.BigIntValue(1001), 724},
		{types.BigIntValue(-7), 368},
		{types.StringValue("Google"), 199},
		{types.StringValue(""), 409},
		{types.DoubleValue(2.5), 329},
		{types.BoolValue(true), 387},
	} {
		hb, err := NewHashBucket(NewLiteral(c.v, types.Type{Kind: c.v.Kind()}), 1024)
		if err != nil {
			t.Fatal(err)
		}
		got, err := hb.Eval(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Int() < 0 || got.Int() >= 1024 {
			t.Fatalf("bucket of %v: %d, out of [0, 1024)", c.v, got.Int())
		}
		if got.Int() != c.want {
			t.Errorf("bucket of %v: %d, want %d", c.v, got.Int(), c.want)
		}
	}
}
