package state

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// kindSamples returns values of kind k in ascending order, or nil for a
// kind this test does not know yet (a new kind must be added here and to
// AppendValue).
func kindSamples(k types.Kind) []types.Value {
	ints := func(mk func(int64) types.Value) []types.Value {
		var out []types.Value
		for _, n := range []int64{math.MinInt64, -86_400_000, -1, 0, 1, 1_700_000_000_000, math.MaxInt64} {
			out = append(out, mk(n))
		}
		return out
	}
	switch k {
	case types.KindNull:
		return []types.Value{types.NullValue()}
	case types.KindBoolean:
		return []types.Value{types.BoolValue(false), types.BoolValue(true)}
	case types.KindInt:
		return []types.Value{types.IntValue(math.MinInt32), types.IntValue(-1), types.IntValue(0), types.IntValue(math.MaxInt32)}
	case types.KindBigInt:
		return ints(types.BigIntValue)
	case types.KindDouble:
		return []types.Value{types.DoubleValue(math.Inf(-1)), types.DoubleValue(-2.5), types.DoubleValue(0), types.DoubleValue(1e300)}
	case types.KindVarchar:
		return []types.Value{types.StringValue(""), types.StringValue("a\x00b"), types.StringValue("ab")}
	case types.KindTimestamp:
		return ints(types.TimestampValue)
	case types.KindTimestampLTZ:
		return ints(types.TimestampLTZValue)
	case types.KindInterval:
		return ints(types.IntervalValue)
	case types.KindTinyInt:
		return []types.Value{types.TinyIntValue(-128), types.TinyIntValue(0), types.TinyIntValue(127)}
	case types.KindSmallInt:
		return []types.Value{types.SmallIntValue(-32768), types.SmallIntValue(0), types.SmallIntValue(32767)}
	case types.KindFloat:
		return []types.Value{types.FloatValue(math.Inf(-1)), types.FloatValue(-2.5), types.FloatValue(0), types.FloatValue(3.5)}
	case types.KindDate:
		return ints(types.DateValue)
	case types.KindTime:
		return []types.Value{types.TimeValue(0), types.TimeValue(1000), types.TimeValue(86_399_000)}
	case types.KindDecimal:
		return []types.Value{types.DecimalValue(-12345, 2), types.DecimalValue(-1, 2), types.DecimalValue(0, 2), types.DecimalValue(99, 2), types.DecimalValue(math.MaxInt64, 2)}
	case types.KindBytes:
		return []types.Value{types.BytesValue(""), types.BytesValue("\x00"), types.BytesValue("ab")}
	case types.KindRow:
		// Nested: a ROW in a ROW, an ARRAY in a ROW, NULL fields, bytes
		// that the key encoding escapes.
		return sortedSamples(
			types.RowValue(types.IntValue(1), types.StringValue("a")),
			types.RowValue(types.IntValue(1), types.StringValue("a\x00\x01b")),
			types.RowValue(types.NullValue(), types.NullValue()),
			types.RowValue(types.RowValue(types.BigIntValue(-5), types.DecimalValue(-12345, 2)), types.ArrayValue(types.StringValue("x\x00"))),
			types.RowValue(types.RowValue(types.BigIntValue(-5), types.NullValue()), types.ArrayValue()),
			types.RowValue(),
		)
	case types.KindArray:
		return sortedSamples(
			types.ArrayValue(types.IntValue(1), types.NullValue()),
			types.ArrayValue(),
			types.ArrayValue(types.ArrayValue(types.StringValue("\x00")), types.ArrayValue()),
			types.ArrayValue(types.RowValue(types.TimestampValue(-1), types.BytesValue("\xff\x00"))),
		)
	case types.KindMap:
		var b types.RowBuilder
		b.Begin()
		b.Add(types.StringValue("k"))
		b.Add(types.IntValue(1))
		m1 := b.Finish(types.KindMap)
		b.Add(types.StringValue("k"))
		b.Add(types.ArrayValue(types.DoubleValue(-2.5), types.NullValue()))
		b.Add(types.StringValue("z\x00"))
		b.Add(types.NullValue())
		return sortedSamples(m1, b.Finish(types.KindMap), types.NewComposite(types.KindMap))
	}
	return nil
}

// sortedSamples returns vs in ascending order (composites order by their
// element encoding).
func sortedSamples(vs ...types.Value) []types.Value {
	sort.Slice(vs, func(i, j int) bool { return types.Compare(vs[i], vs[j]) < 0 })
	return vs
}

// TestEncodeEveryKind: every kind types defines encodes without a panic,
// in order, decodes back to its value (with its column's kind through
// WithColumnKind), and HashIntKey agrees with the hash of the encoding.
// TIMESTAMP_LTZ shares TIMESTAMP's encoding (it was a panic: GROUP BY a
// TIMESTAMP_LTZ column reached it through the exchange).
func TestEncodeEveryKind(t *testing.T) {
	for k := types.Kind(0); k < math.MaxUint8; k++ {
		if k.String() == "" || strings.HasPrefix(k.String(), "Kind(") {
			continue // not a kind types defines
		}
		samples := kindSamples(k)
		if samples == nil {
			t.Errorf("kind %v: no sample values in this test; add them (and the kind to AppendValue)", k)
			continue
		}
		var prev []byte
		for i, v := range samples {
			enc, err := encodeNoPanic(v)
			if err != nil {
				t.Errorf("kind %v: %v", k, err)
				break
			}
			if i > 0 && bytes.Compare(prev, enc) >= 0 {
				t.Errorf("kind %v: %v encodes as %x, not after %x", k, v, enc, prev)
			}
			prev = enc
			got, rest, err := DecodeValue(enc)
			if err != nil || len(rest) != 0 {
				t.Errorf("kind %v: decode %x: %v, %d bytes left", k, enc, err, len(rest))
				continue
			}
			got = WithColumnKind(got, k)
			if got.Kind() != v.Kind() || types.Compare(got, v) != 0 {
				t.Errorf("kind %v: %v decoded as %v (%v)", k, v, got, got.Kind())
			}
			if h, ok := HashIntKey(k, v.Int()); ok && !v.IsNull() && h != HashKey(enc) {
				t.Errorf("kind %v: HashIntKey(%v) differs from the hash of its encoding", k, v)
			}
		}
	}
}

// TestLTZSharesTimestampKey: a TIMESTAMP_LTZ and a TIMESTAMP of one
// instant are one key (one encoding, one key group).
func TestLTZSharesTimestampKey(t *testing.T) {
	a := AppendValue(nil, types.TimestampLTZValue(1_700_000_000_123))
	b := AppendValue(nil, types.TimestampValue(1_700_000_000_123))
	if !bytes.Equal(a, b) {
		t.Fatalf("LTZ %x, TIMESTAMP %x", a, b)
	}
	h, ok := HashIntKey(types.KindTimestampLTZ, 1_700_000_000_123)
	if !ok || h != HashKey(b) {
		t.Fatalf("HashIntKey of an LTZ: %x, %v; want %x", h, ok, HashKey(b))
	}
}

func encodeNoPanic(v types.Value) (enc []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("AppendValue(%v) panicked: %v", v, p)
		}
	}()
	return AppendValue(nil, v), nil
}
