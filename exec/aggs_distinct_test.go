package exec

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// TestIntDistinctAcc drives COUNT(DISTINCT x) and SUM(DISTINCT x) over an
// integer column with random adds and retractions in batches, and checks
// each group's result against a Go computation of the multiset, then the
// state's round trip through save and load, both ways with distinctAcc's
// encoding, and merge.
func TestIntDistinctAcc(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for _, fn := range []AggFunc{AggCount, AggSum} {
		call := AggCall{Func: fn, Distinct: true, Arg: 0, ArgType: types.BigInt, Type: types.BigInt}
		acc, err := newAccumulator(call)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := acc.(*intDistinctAcc); !ok {
			t.Fatalf("%T for a BIGINT argument, want *intDistinctAcc", acc)
		}
		const groups = 5
		for range groups {
			acc.grow()
		}
		bag := make([]map[int64]int, groups) // value -> occurrences
		for g := range bag {
			bag[g] = map[int64]int{}
		}
		for range 200 {
			n := 1 + r.IntN(50)
			b := &types.Batch{Width: 1}
			gis := make([]int32, n)
			for i := range n {
				g := r.IntN(groups + 1) // groups: skipped (a filtered row)
				v := types.BigIntValue(int64(r.IntN(12)))
				kind := types.Insert
				if r.IntN(8) == 0 {
					v = types.NullValue()
				}
				if g < groups && !v.IsNull() && bag[g][v.Int()] > 0 && r.IntN(3) == 0 {
					kind = types.Delete
					bag[g][v.Int()]--
				} else if g < groups && !v.IsNull() {
					bag[g][v.Int()]++
				}
				gis[i] = int32(g)
				if g == groups {
					gis[i] = -1
				}
				b.Vals = append(b.Vals, v)
				b.Kinds = append(b.Kinds, kind)
			}
			acc.update(gis, b, 0)
			for g := range groups {
				if got, want := acc.result(int32(g)), distinctResult(fn, bag[g]); !types.Equal(got, want) {
					t.Fatalf("seed %d: %v group %d: %v, want %v (bag %v)", seed, fn, g, got, want, bag[g])
				}
			}
		}
		// Save and load into the general accumulator and back.
		gen := &distinctAcc{inner: mustAcc(t, AggCall{Func: fn, Arg: 0, ArgType: types.BigInt, Type: types.BigInt})}
		back := mustAcc(t, call)
		for g := range groups {
			gen.grow()
			back.grow()
			st := acc.save(int32(g), nil)
			if rest, err := gen.load(int32(g), st); err != nil || len(rest) != 0 {
				t.Fatalf("seed %d: load into distinctAcc: %v, %d bytes left", seed, err, len(rest))
			}
			st2 := gen.save(int32(g), nil)
			if rest, err := back.load(int32(g), st2); err != nil || len(rest) != 0 {
				t.Fatalf("seed %d: load back: %v, %d bytes left", seed, err, len(rest))
			}
			want := distinctResult(fn, bag[g])
			if got := gen.result(int32(g)); !types.Equal(got, want) {
				t.Fatalf("seed %d: distinctAcc after load: %v, want %v", seed, got, want)
			}
			if got := back.result(int32(g)); !types.Equal(got, want) {
				t.Fatalf("seed %d: after the round trip: %v, want %v", seed, got, want)
			}
		}
		// Merge group 1 into group 0 of the loaded copy.
		back.merge(0, 1)
		sum := map[int64]int{}
		for _, g := range []int{0, 1} {
			for v, c := range bag[g] {
				sum[v] += c
			}
		}
		if got, want := back.result(0), distinctResult(fn, sum); !types.Equal(got, want) {
			t.Fatalf("seed %d: merged: %v, want %v", seed, got, want)
		}
	}
}

// TestIntDistinctEncoding checks the saved bytes of a group against
// distinctAcc's encoding built here: the count of values, each value's
// types.AppendKey with its length, and its count, then the inner state.
func TestIntDistinctEncoding(t *testing.T) {
	for _, typ := range []types.Type{types.BigInt, {Kind: types.KindInt}} {
		call := AggCall{Func: AggCount, Distinct: true, Arg: 0, ArgType: typ, Type: types.BigInt}
		acc := mustAcc(t, call)
		acc.grow()
		v := types.BigIntValue(-42).WithKind(typ.Kind)
		acc.add(0, v)
		acc.add(0, v)
		key := types.AppendKey(nil, v)
		want := binary.AppendUvarint(nil, 1)
		want = binary.AppendUvarint(want, uint64(len(key)))
		want = append(want, key...)
		want = binary.AppendVarint(want, 2)
		inner := mustAcc(t, AggCall{Func: AggCount, Arg: 0, ArgType: typ, Type: types.BigInt})
		inner.grow()
		inner.add(0, v)
		want = inner.save(0, want)
		if got := acc.save(0, nil); !bytes.Equal(got, want) {
			t.Errorf("%s: saved %x, want %x", typ.Kind, got, want)
		}
	}
}

func mustAcc(t *testing.T, call AggCall) accumulator {
	t.Helper()
	a, err := newAccumulator(call)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// distinctResult is COUNT or SUM over the values with a positive count.
func distinctResult(fn AggFunc, bag map[int64]int) types.Value {
	var n, sum int64
	for v, c := range bag {
		if c > 0 {
			n++
			sum += v
		}
	}
	if fn == AggCount {
		return types.BigIntValue(n)
	}
	if n == 0 {
		return types.NullValue()
	}
	return types.BigIntValue(sum)
}
