package state

import (
	"math"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestHashIntKey checks the specialised hash against xxhash64 of the
// encoding, for every kind it takes, and that INT and BIGINT of equal value
// hash alike.
func TestHashIntKey(t *testing.T) {
	ns := []int64{0, 1, -1, 42, 255, 256, 1 << 40, math.MaxInt64, math.MinInt64, -123456789}
	for i := range 1000 {
		ns = append(ns, int64(uint64(i)*0x9E3779B97F4A7C15))
	}
	mk := []func(int64) types.Value{types.IntValue, types.BigIntValue, types.TimestampValue, types.TimestampLTZValue, types.IntervalValue}
	for _, f := range mk {
		for _, n := range ns {
			v := f(n)
			want := HashKey(AppendValue(nil, v))
			got, ok := HashIntKey(v.Kind(), v.Int())
			if !ok || got != want {
				t.Fatalf("%v %d: got %x %v, want %x", v.Kind(), n, got, ok, want)
			}
		}
	}
	for _, n := range ns {
		a, _ := HashIntKey(types.KindInt, n)
		b, _ := HashIntKey(types.KindBigInt, n)
		if a != b || KeyGroup(AppendValue(nil, types.IntValue(n)), 128) != KeyGroup(AppendValue(nil, types.BigIntValue(n)), 128) {
			t.Fatalf("INT %d and BIGINT %d hash differently", n, n)
		}
	}
	for _, k := range []types.Kind{types.KindBoolean, types.KindDouble, types.KindVarchar, types.KindNull} {
		if _, ok := HashIntKey(k, 1); ok {
			t.Fatalf("HashIntKey accepts %v", k)
		}
	}
}

// TestReadsLayout pins which key layouts a restore reads as they are: 2
// (before blind-write deltas and DISTINCT value records) and the current
// one; layout 1 is migrated, and a later layout (a newer build's) must be
// refused rather than read without the records it added.
func TestReadsLayout(t *testing.T) {
	for _, tc := range []struct {
		layout int
		want   bool
	}{{0, false}, {1, false}, {2, true}, {KeyLayout, true}, {KeyLayout + 1, false}} {
		if got := ReadsLayout(tc.layout); got != tc.want {
			t.Errorf("ReadsLayout(%d) = %v, want %v", tc.layout, got, tc.want)
		}
	}
	if KeyLayout != 3 {
		t.Errorf("KeyLayout = %d: a new layout must say here and in ReadsLayout which older ones it reads", KeyLayout)
	}
}

// TestKeyGroupOfHash checks that the key group of a hash is the hash modulo
// the maximum parallelism, for powers of two (masked) and other values,
// so that the fast path places keys where the stored layout has them.
func TestKeyGroupOfHash(t *testing.T) {
	hs := []uint64{0, 1, 127, 128, 129, math.MaxUint64, math.MaxUint64 - 1, 1 << 63}
	for i := range 1000 {
		hs = append(hs, uint64(i)*0xC2B2AE3D27D4EB4F)
	}
	for _, m := range []int{1, 2, 3, 100, 128, 255, 256, 4096, 32768} {
		for _, h := range hs {
			if got, want := KeyGroupOfHash(h, m), int(h%uint64(m)); got != want {
				t.Fatalf("KeyGroupOfHash(%#x, %d) = %d, want %d", h, m, got, want)
			}
		}
	}
}
