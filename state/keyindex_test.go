package state

import (
	"bytes"
	"fmt"
	"github.com/weir-sql/weir/internal/testseed"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestKeyIndexAgainstMap applies random inserts and removals to a KeyIndex
// and to a map keyed by the key's encoding, for integer keys (the IntTable
// path, NULLs included), string keys and two-column keys, and checks that
// they agree on every key, that slots are never shared and are reused.
func TestKeyIndexAgainstMap(t *testing.T) {
	seed := testseed.Seed(t)
	for _, tc := range []struct {
		name  string
		cols  []int
		kinds []types.Kind
		gen   func(r *rand.Rand) []types.Value
	}{
		{"bigint", []int{1}, []types.Kind{types.KindVarchar, types.KindBigInt}, func(r *rand.Rand) []types.Value {
			v := types.BigIntValue(r.Int64N(300) - 150)
			if r.IntN(50) == 0 {
				v = types.NullValue()
			}
			return []types.Value{types.StringValue("x"), v}
		}},
		{"varchar", []int{0}, []types.Kind{types.KindVarchar, types.KindBigInt}, func(r *rand.Rand) []types.Value {
			return []types.Value{types.StringValue(fmt.Sprintf("k%d", r.IntN(300))), types.BigIntValue(1)}
		}},
		{"two columns", []int{1, 0}, []types.Kind{types.KindVarchar, types.KindInt}, func(r *rand.Rand) []types.Value {
			return []types.Value{types.StringValue(fmt.Sprintf("k%d", r.IntN(20))), types.IntValue(int64(r.IntN(20)))}
		}},
		// Two integer-stored columns: the Int2Table path, a NULL in
		// either going to the map; keys equal in one part only.
		{"two bigints", []int{2, 0}, []types.Kind{types.KindBigInt, types.KindVarchar, types.KindBigInt}, func(r *rand.Rand) []types.Value {
			a, b := types.BigIntValue(r.Int64N(40)-20), types.BigIntValue(r.Int64N(40)<<40)
			if r.IntN(40) == 0 {
				a = types.NullValue()
			}
			if r.IntN(40) == 0 {
				b = types.NullValue()
			}
			return []types.Value{a, types.StringValue("x"), b}
		}},
		// The other integer-stored kinds in pairs (r19-rev-q6b): BOOLEAN
		// and INTERVAL, TIMESTAMP_LTZ and INT, with extremes.
		{"boolean and interval", []int{0, 1}, []types.Kind{types.KindBoolean, types.KindInterval}, func(r *rand.Rand) []types.Value {
			a, b := types.BoolValue(r.IntN(2) == 0), types.IntervalValue([]int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[r.IntN(5)]+r.Int64N(30))
			if r.IntN(40) == 0 {
				a = types.NullValue()
			}
			return []types.Value{a, b}
		}},
		{"timestamp_ltz and int", []int{1, 0}, []types.Kind{types.KindInt, types.KindTimestampLTZ}, func(r *rand.Rand) []types.Value {
			a, b := types.IntValue([]int64{math.MinInt32, math.MaxInt32, 0}[r.IntN(3)]+r.Int64N(20)-10), types.TimestampLTZValue(r.Int64N(30)*1000)
			if r.IntN(40) == 0 {
				b = types.NullValue()
			}
			return []types.Value{a, b}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			x := NewKeyIndex(tc.cols, tc.kinds)
			ref := map[string]int32{}
			owner := map[int32]string{}
			for step := range 20000 {
				row := tc.gen(r)
				enc := string(x.AppendKeyOf(nil, row))
				s, ok := x.Find(row)
				want, wok := ref[enc]
				if ok != wok || (ok && s != want) {
					t.Fatalf("step %d: Find(%v) = %d, %v; want %d, %v", step, row, s, ok, want, wok)
				}
				if !bytes.Equal(x.Key(), []byte(enc)) {
					t.Fatalf("step %d: Key() = %x, want %x", step, x.Key(), enc)
				}
				switch {
				case ok && r.IntN(3) == 0:
					x.Remove(s)
					delete(ref, enc)
					delete(owner, s)
				case !ok:
					s = x.Insert(row)
					if _, taken := owner[s]; taken || s < 0 || s >= x.Cap() {
						t.Fatalf("step %d: Insert gave slot %d (cap %d), already %q's", step, s, x.Cap(), owner[s])
					}
					ref[enc], owner[s] = s, enc
				}
				if x.Len() != len(ref) {
					t.Fatalf("step %d: Len %d, want %d", step, x.Len(), len(ref))
				}
			}
			for enc, s := range ref {
				if got := x.AppendKey(nil, s); string(got) != enc {
					t.Fatalf("AppendKey(%d) = %x, want %x", s, got, enc)
				}
			}
			if int(x.Cap()) > 2*len(ref)+400 {
				t.Fatalf("cap %d for %d keys: freed slots are not reused", x.Cap(), len(ref))
			}
			x.Reset()
			if x.Len() != 0 || x.Cap() != 0 {
				t.Fatalf("after Reset: len %d cap %d", x.Len(), x.Cap())
			}
		})
	}
}

// TestKeyIndexFindOrInsert applies random FindOrInsert calls and removals
// to a KeyIndex and a map keyed by the key's encoding, for integer keys
// (one probe, NULLs going through Find and Insert) and string keys, and
// checks what each call reports against the map, that new keys take the
// freed slots in NextFree's order, that slots are never shared, and that
// Find agrees with the map on every key after each step. Randomized:
// prints its seed.
func TestKeyIndexFindOrInsert(t *testing.T) {
	seed := testseed.Seed(t)
	for _, tc := range []struct {
		name  string
		cols  []int
		kinds []types.Kind
		gen   func(r *rand.Rand) []types.Value
	}{
		{"bigint", []int{0}, []types.Kind{types.KindBigInt}, func(r *rand.Rand) []types.Value {
			v := types.BigIntValue(r.Int64N(400) - 200)
			if r.IntN(40) == 0 {
				v = types.NullValue()
			}
			return []types.Value{v}
		}},
		{"int kinds", []int{0}, []types.Kind{types.KindInt}, func(r *rand.Rand) []types.Value {
			if r.IntN(2) == 0 {
				return []types.Value{types.IntValue(r.Int64N(100))}
			}
			return []types.Value{types.BigIntValue(r.Int64N(100))}
		}},
		// A kind that encodes unlike BIGINT: the slot must keep the
		// row's kind (AppendKey, Added's key group).
		{"timestamp", []int{0}, []types.Kind{types.KindTimestamp}, func(r *rand.Rand) []types.Value {
			return []types.Value{types.TimestampValue(r.Int64N(400) - 200)}
		}},
		{"varchar", []int{0}, []types.Kind{types.KindVarchar}, func(r *rand.Rand) []types.Value {
			return []types.Value{types.StringValue(fmt.Sprintf("k%d", r.IntN(300)))}
		}},
		// Two integer-stored columns (Int2Table), one of a kind that
		// encodes unlike BIGINT, NULLs going through the map.
		{"bigint and timestamp", []int{0, 1}, []types.Kind{types.KindBigInt, types.KindTimestamp}, func(r *rand.Rand) []types.Value {
			a, b := types.BigIntValue(r.Int64N(30)), types.TimestampValue(r.Int64N(30)-15)
			if r.IntN(40) == 0 {
				a = types.NullValue()
			}
			if r.IntN(40) == 0 {
				b = types.NullValue()
			}
			return []types.Value{a, b}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 2))
			x := NewKeyIndex(tc.cols, tc.kinds)
			ref := map[string]int32{}
			owner := map[int32]string{}
			for step := range 20000 {
				row := tc.gen(r)
				enc := string(x.AppendKeyOf(nil, row))
				want, wok := ref[enc]
				next, reuse := x.NextFree(0)
				s, ok := x.FindOrInsert(row)
				switch {
				case ok != wok || (ok && s != want):
					t.Fatalf("step %d: FindOrInsert(%v) = %d, %v; want %d, %v", step, row, s, ok, want, wok)
				case !ok && reuse && s != next:
					t.Fatalf("step %d: new key took slot %d, want the freed %d", step, s, next)
				case !ok:
					if _, taken := owner[s]; taken || s < 0 || s >= x.Cap() || !x.Used(s) {
						t.Fatalf("step %d: new slot %d (cap %d), already %q's", step, s, x.Cap(), owner[s])
					}
					ref[enc], owner[s] = s, enc
				}
				if got := x.AppendKey(nil, s); string(got) != enc {
					t.Fatalf("step %d: AppendKey(%d) = %x, want %x", step, s, got, enc)
				}
				if r.IntN(2) == 0 {
					x.Remove(s)
					delete(ref, enc)
					delete(owner, s)
				}
				if x.Len() != len(ref) {
					t.Fatalf("step %d: Len %d, want %d", step, x.Len(), len(ref))
				}
				if step%501 == 0 {
					for enc, want := range ref {
						row, err := decodeKeyRow(enc, tc.kinds)
						if err != nil {
							t.Fatal(err)
						}
						if s, ok := x.Find(row); !ok || s != want {
							t.Fatalf("step %d: Find(%v) = %d, %v; want %d", step, row, s, ok, want)
						}
					}
				}
			}
		})
	}
}

// decodeKeyRow decodes an encoded key of columns of kinds into a row.
func decodeKeyRow(enc string, kinds []types.Kind) ([]types.Value, error) {
	b := []byte(enc)
	row := make([]types.Value, len(kinds))
	for i := range kinds {
		v, rest, err := DecodeValue(b)
		if err != nil {
			return nil, err
		}
		row[i], b = WithColumnKind(v, kinds[i]), rest
	}
	return row, nil
}

// TestKeyIndexIntKindsShareKeys checks that INT 7 and BIGINT 7 are one key
// (as they are one key group), and that a slot's stored key encodes as the
// row's key did.
func TestKeyIndexIntKindsShareKeys(t *testing.T) {
	x := NewKeyIndex([]int{0}, []types.Kind{types.KindBigInt})
	s := x.Insert([]types.Value{types.IntValue(7)})
	if got, ok := x.Find([]types.Value{types.BigIntValue(7)}); !ok || got != s {
		t.Fatalf("BIGINT 7 not found as INT 7's slot %d: %d, %v", s, got, ok)
	}
	want := AppendValue(nil, types.IntValue(7))
	if got := x.AppendKey(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("AppendKey = %x, want %x", got, want)
	}
}

func TestSlab(t *testing.T) {
	s := NewSlab[int64](3)
	s.Grow(slabPage + 2)
	for i := range int32(slabPage + 2) {
		v := s.At(i)
		if len(v) != 3 || cap(v) != 3 {
			t.Fatalf("At(%d) has len %d cap %d", i, len(v), cap(v))
		}
		v[0], v[2] = int64(i), -int64(i)
	}
	for i := range int32(slabPage + 2) {
		if v := s.At(i); v[0] != int64(i) || v[1] != 0 || v[2] != -int64(i) {
			t.Fatalf("At(%d) = %v", i, v)
		}
	}
	s.Clear()
	if v := s.At(slabPage + 1); v[0] != 0 {
		t.Fatalf("after Clear: %v", v)
	}
}

// TestKeyIndexNextFree checks that NextFree foretells the slots that the
// next Inserts take (freed slots, last freed first), and that Touch reads
// a key's entry without changing the index.
func TestKeyIndexNextFree(t *testing.T) {
	x := NewKeyIndex([]int{0}, []types.Kind{types.KindBigInt})
	var slots []int32
	for k := range 10 {
		slots = append(slots, x.Insert([]types.Value{types.BigIntValue(int64(k))}))
	}
	if _, ok := x.NextFree(0); ok {
		t.Fatal("NextFree(0) found a slot with none freed")
	}
	for _, k := range []int{3, 7, 1} {
		if x.Touch(slots[k]) == 0 {
			t.Fatalf("Touch of key %d's slot read an empty entry", k)
		}
		x.Remove(slots[k])
		if got := x.TouchInfo(slots[k]); got != int64(k) {
			t.Fatalf("TouchInfo of freed slot %d read %d, want its last key %d", slots[k], got, k)
		}
	}
	if got := x.TouchInfo(x.Cap()); got != 0 {
		t.Fatalf("TouchInfo past the slots read %d, want 0", got)
	}
	var want []int32
	for j := 0; ; j++ {
		s, ok := x.NextFree(j)
		if !ok {
			break
		}
		want = append(want, s)
	}
	if len(want) != 3 || x.FreeLen() != 3 {
		t.Fatalf("NextFree gave %d slots, FreeLen %d, want 3", len(want), x.FreeLen())
	}
	for j, s := range want {
		if got := x.Insert([]types.Value{types.BigIntValue(int64(100 + j))}); got != s {
			t.Fatalf("insert %d took slot %d, NextFree(%d) said %d", j, got, j, s)
		}
	}
	if x.Len() != 10 {
		t.Fatalf("%d keys, want 10", x.Len())
	}
	for k := range 10 {
		if k == 1 || k == 3 || k == 7 {
			continue
		}
		if s, ok := x.Find([]types.Value{types.BigIntValue(int64(k))}); !ok || s != slots[k] {
			t.Fatalf("key %d: slot %d, %v after Touch and reuse, want %d", k, s, ok, slots[k])
		}
	}
}

// TestSlabOne checks that One reaches the value At gives for slots across
// pages, in a slab of one value a slot.
func TestSlabOne(t *testing.T) {
	s := NewSlab[int64](1)
	const n = 3*slabPage + 17
	s.Grow(n)
	for i := range int32(n) {
		*s.One(i) = int64(i) * 7
	}
	for i := range int32(n) {
		if got := s.At(i)[0]; got != int64(i)*7 {
			t.Fatalf("slot %d: At gives %d, want %d", i, got, int64(i)*7)
		}
	}
}
