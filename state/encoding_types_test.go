package state

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestEncodingNewKinds: every scalar kind (TIMESTAMP_LTZ, DATE, TIME,
// DECIMAL narrow and wide, BYTES, TINYINT, SMALLINT, FLOAT) round-trips
// through AppendValue/DecodeValue and their descending forms, and the
// encodings of values of one kind order as types.Compare does.
func TestEncodingNewKinds(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	wide := func(digits int) types.Value {
		s := "9"
		for len(s) < digits {
			s += string(rune('0' + r.IntN(10)))
		}
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		u, _ := new(big.Int).SetString(s, 10)
		v, err := types.DecimalFromBig(u, 4)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	gen := map[types.Kind]func() types.Value{
		types.KindTimestampLTZ: func() types.Value { return types.TimestampLTZValue(r.Int64N(1<<45) - 1<<44) },
		types.KindDate:         func() types.Value { return types.DateValue(r.Int64N(100000) - 50000) },
		types.KindTime:         func() types.Value { return types.TimeValue(r.Int64N(86_400_000)) },
		types.KindDecimal: func() types.Value {
			switch r.IntN(4) {
			case 0:
				return wide(19 + r.IntN(20))
			case 1:
				return types.DecimalValue([]int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)], 4)
			}
			return types.DecimalValue(r.Int64N(1<<40)-1<<39, 4)
		},
		types.KindBytes: func() types.Value {
			return types.BytesValue(string([]byte{byte(r.IntN(3)), byte(r.IntN(256)), 0, 0xff}[:r.IntN(5)]))
		},
		types.KindTinyInt:  func() types.Value { return types.TinyIntValue(r.Int64N(256) - 128) },
		types.KindSmallInt: func() types.Value { return types.SmallIntValue(r.Int64N(65536) - 32768) },
		types.KindFloat:    func() types.Value { return types.FloatValue(r.NormFloat64() * 1e6) },
		types.KindRow: func() types.Value {
			return types.RowValue(types.IntValue(r.Int64N(3)), types.StringValue("a\x00b"[:r.IntN(4)]), types.NullValue())
		},
		types.KindArray: func() types.Value { return types.ArrayValue(types.DecimalValue(r.Int64N(5), 1)) },
	}
	for k, g := range gen {
		vals := make([]types.Value, 300)
		for i := range vals {
			vals[i] = g()
		}
		for _, a := range vals {
			for _, desc := range []bool{false, true} {
				var enc []byte
				var got types.Value
				var rest []byte
				var err error
				if desc {
					enc = AppendValueDesc([]byte("p"), a)
					got, rest, err = DecodeValueDesc(append(enc[1:], 'z'))
				} else {
					enc = AppendValue([]byte("p"), a)
					got, rest, err = DecodeValue(append(enc[1:], 'z'))
				}
				if err != nil || string(rest) != "z" {
					t.Fatalf("%s %v: decode: %v, rest %q", k, a, err, rest)
				}
				got = WithColumnKind(got, k) // TIMESTAMP_LTZ shares TIMESTAMP's encoding
				if !types.Equal(got, a) || got.Kind() != k || got.String() != a.String() {
					t.Fatalf("%s: %v round-trips to %v (%s)", k, a, got, got.Kind())
				}
			}
			if k == types.KindRow || k == types.KindArray {
				continue // equality only: no SQL order
			}
			for _, b := range vals[:50] {
				want := types.Compare(a, b)
				got := bytes.Compare(AppendValue(nil, a), AppendValue(nil, b))
				if want != got {
					t.Fatalf("%s: Compare(%v, %v) = %d, encodings compare %d", k, a, b, want, got)
				}
			}
		}
	}
}
