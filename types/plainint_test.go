package types

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestIsPlainInt checks IsPlainInt against the comparison it stands for,
// v == BigIntValue(v.Int()).WithKind(k), over values of every kind (the
// integer kinds with extreme and random integers, strings, bytes,
// decimals of several scales, doubles, NULL) and every kind k.
func TestIsPlainInt(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 40}
	for range 20 {
		ints = append(ints, int64(r.Uint64()))
	}
	var vals []Value
	for _, n := range ints {
		for k := KindNull; k <= KindBytes; k++ {
			vals = append(vals, BigIntValue(n).WithKind(k))
		}
		vals = append(vals, TimestampValue(n), TimestampLTZValue(n), IntValue(n), DoubleValue(float64(n)))
		vals = append(vals, DecimalValue(n, 0), DecimalValue(n, 2), DecimalValue(n, 18))
	}
	vals = append(vals, StringValue(""), StringValue("a"), BytesValue(""), BytesValue("\x00"), NullValue(), BoolValue(true))
	n := 0
	for _, v := range vals {
		for k := KindNull; k <= KindBytes; k++ {
			want := v == BigIntValue(v.Int()).WithKind(k)
			if got := v.IsPlainInt(k); got != want {
				t.Errorf("%#v.IsPlainInt(%v) = %v, want %v", v, k, got, want)
			}
			if want {
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no value was a plain integer: the test checks nothing")
	}
}
