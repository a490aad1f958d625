package types

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestValueText(t *testing.T) {
	cases := []struct {
		v    Value
		want string
	}{
		{NullValue(), "<NULL>"},
		{BoolValue(true), "true"},
		{IntValue(-7), "-7"},
		{BigIntValue(1 << 40), "1099511627776"},
		{DoubleValue(3), "3.0"},
		{DoubleValue(2.5), "2.5"},
		{DoubleValue(1e7), "1.0E7"},
		{DoubleValue(1.25e-4), "1.25E-4"},
		{DoubleValue(-3.5e20), "-3.5E20"},
		{DoubleValue(0), "0.0"},
		{DoubleValue(math.NaN()), "NaN"},
		{DoubleValue(math.Inf(-1)), "-Infinity"},
		{StringValue("héllo"), "héllo"},
		{TimestampValue(1714554000250), "2024-05-01 09:00:00.250"},
		{IntervalValue(90061001), "+1 01:01:01.001"},
	}
	for _, c := range cases {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestCompareAndEqual(t *testing.T) {
	cases := []struct {
		a, b Value
		want int
	}{
		{IntValue(1), BigIntValue(2), -1},
		{BigIntValue(2), DoubleValue(2), 0},
		{DoubleValue(2.5), IntValue(2), 1},
		{NullValue(), IntValue(0), -1},
		{NullValue(), NullValue(), 0},
		{StringValue("a"), StringValue("b"), -1},
		{BoolValue(true), BoolValue(false), 1},
		{DoubleValue(math.NaN()), DoubleValue(1), 1},
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Equal(c.a, c.b); got != (c.want == 0) {
			t.Errorf("Equal(%v, %v) = %v", c.a, c.b, got)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	vals := []Value{NullValue(), BoolValue(true), IntValue(-3), BigIntValue(1 << 50), DoubleValue(-0.0),
		StringValue(""), StringValue("key with spaces"), TimestampValue(123), IntervalValue(-5)}
	var buf []byte
	for _, v := range vals {
		buf = AppendKey(buf, v)
	}
	rest := buf
	for i, want := range vals {
		got, r, err := DecodeKey(rest)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if !Equal(got, want) || got.Kind() != want.Kind() {
			t.Errorf("value %d: got %#v, want %#v", i, got, want)
		}
		rest = r
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes left over", len(rest))
	}
	if _, _, err := DecodeKey([]byte{byte(KindVarchar), 9, 'a'}); err == nil {
		t.Error("truncated key decoded without error")
	}
	// 0 and -0 group together.
	if string(AppendKey(nil, DoubleValue(0))) != string(AppendKey(nil, DoubleValue(math.Copysign(0, -1)))) {
		t.Error("0.0 and -0.0 encode differently")
	}
}

// TestKeySize checks KeySize against AppendKey for every kind, strings
// across the varint lengths and both decimal forms.
func TestKeySize(t *testing.T) {
	wide, err := DecimalFromBig(new(big.Int).Lsh(big.NewInt(1), 100), 3)
	if err != nil {
		t.Fatal(err)
	}
	vals := []Value{NullValue(), BoolValue(false), IntValue(-3), BigIntValue(1 << 50), DoubleValue(-0.0),
		FloatValue(1.5), StringValue(""), StringValue(strings.Repeat("x", 127)), StringValue(strings.Repeat("\x00", 128)),
		BytesValue(strings.Repeat("y", 20000)), TimestampValue(123), TimestampLTZValue(-9), IntervalValue(-5),
		DateValue(19000), TimeValue(1000), TinyIntValue(7), SmallIntValue(-300), DecimalValue(-12345, 2), wide,
		RowValue(IntValue(1), StringValue("a")), ArrayValue(BigIntValue(2), BigIntValue(3))}
	for _, v := range vals {
		if got, want := KeySize(v), len(AppendKey(nil, v)); got != want {
			t.Errorf("KeySize(%v) = %d, AppendKey appends %d", v, got, want)
		}
	}
}

func TestKeyGroups(t *testing.T) {
	// Every key group maps to exactly one subtask, contiguous ranges, for any parallelism.
	for _, p := range []int{1, 2, 3, 4, 7, 128} {
		last := -1
		for kg := 0; kg < DefaultMaxParallelism; kg++ {
			s := SubtaskForKeyGroup(kg, p, DefaultMaxParallelism)
			if s < last || s >= p {
				t.Fatalf("p=%d: key group %d → subtask %d after %d", p, kg, s, last)
			}
			last = s
		}
		if last != p-1 {
			t.Fatalf("p=%d: last subtask %d", p, last)
		}
	}
	// The hash is stable across processes: pin one value.
	// Restored state depends on this value: changing the hash or the key
	// encoding breaks every existing checkpoint.
	if got := HashKey(AppendKey(nil, BigIntValue(42))); got != 17966910732660950768 || KeyGroup(got, 128) != 112 {
		t.Fatalf("hash of key 42 changed: %d (key group %d)", got, KeyGroup(got, 128))
	}
}

func TestBatch(t *testing.T) {
	b := NewBatch(3, 2)
	b.Append(Insert, []Value{IntValue(1), StringValue("a"), NullValue()})
	row := b.AppendEmpty(Delete)
	row[0] = IntValue(2)
	for i := 0; i < 10; i++ {
		b.AppendEmpty(Insert)[2] = BoolValue(true)
	}
	if b.Len() != 12 || len(b.Vals) != 36 {
		t.Fatalf("len %d vals %d", b.Len(), len(b.Vals))
	}
	if got := FormatRow(b.Kinds[1], b.Row(1)); got != "-D[2, <NULL>, <NULL>]" {
		t.Errorf("row 1 = %s", got)
	}
	if got := FormatRow(b.Kinds[0], b.Row(0)); got != "+I[1, a, <NULL>]" {
		t.Errorf("row 0 = %s", got)
	}
	b.Reset()
	if b.Len() != 0 || cap(b.Vals) < 36 {
		t.Fatal("reset lost capacity or rows remain")
	}
}

// TestKeyGroupRange checks the closed form against its definition: the key
// groups SubtaskForKeyGroup maps to the subtask.
func TestKeyGroupRange(t *testing.T) {
	for _, maxPar := range []int{1, 7, 128} {
		for par := 1; par <= 2*maxPar+1 && par <= 300; par++ {
			for s := range par {
				first, last := -1, -1
				for kg := range maxPar {
					if SubtaskForKeyGroup(kg, par, maxPar) == s {
						if first < 0 {
							first = kg
						}
						last = kg
					}
				}
				if f, l := KeyGroupRange(s, par, maxPar); f != first || l != last {
					t.Fatalf("KeyGroupRange(%d, %d, %d) = %d, %d, want %d, %d", s, par, maxPar, f, l, first, last)
				}
			}
		}
	}
}
