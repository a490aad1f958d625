package types

import "testing"

func TestRowBuilder(t *testing.T) {
	inner := RowValue(StringValue("a"), IntValue(2))
	arr := ArrayValue(IntValue(1), NullValue(), IntValue(3))
	row := RowValue(BigIntValue(1), inner, arr, DecimalValue(-5, 2), NullValue())
	if got := row.String(); got != "(1, (a, 2), [1, NULL, 3], -0.05, NULL)" {
		t.Errorf("ROW text %q", got)
	}
	if f := row.Field(1).Field(0); f.Kind() != KindVarchar || f.Str() != "a" {
		t.Errorf("row.f1.f0 = %v", f)
	}
	if row.Len() != 5 || row.Field(2).Len() != 3 || !row.Field(9).IsNull() || row.Field(3).String() != "-0.05" {
		t.Errorf("Len/Field: %d %d %v %v", row.Len(), row.Field(2).Len(), row.Field(9), row.Field(3))
	}
	var b RowBuilder
	for _, e := range []Value{StringValue("k"), IntValue(1), StringValue("z"), NullValue()} {
		b.Add(e)
	}
	if m := b.Finish(KindMap); m.String() != "{k=1, z=NULL}" || m.Len() != 2 {
		t.Errorf("MAP text %q", m)
	}
	// Values stay intact while the builder goes on, across chunks, and
	// building allocates only per chunk.
	var vals []Value
	for i := 0; i < 10000; i++ {
		b.Begin()
		b.Add(BigIntValue(int64(i)))
		b.Add(StringValue("some text that takes room"))
		vals = append(vals, b.Finish(KindRow))
	}
	for i, v := range vals {
		if v.Field(0).Int() != int64(i) || v.Field(1).Str() != "some text that takes room" {
			t.Fatalf("value %d changed: %v", i, v)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		b.Begin()
		b.Add(BigIntValue(7))
		b.Add(StringValue("x"))
		v := b.Finish(KindRow)
		if v.Field(1).Str() != "x" || v.Field(0).Int() != 7 {
			t.Fatal("bad field")
		}
	})
	if allocs > 0.05 {
		t.Errorf("%.2f allocations per ROW built and read, want ~0 (one per 64 KiB chunk)", allocs)
	}
	// Key round trip and equality by content.
	got, rest, err := DecodeKey(AppendKey(nil, row))
	if err != nil || len(rest) != 0 || !Equal(got, row) || got.String() != row.String() {
		t.Errorf("key round trip: %v %v", got, err)
	}
	if !Equal(RowValue(IntValue(1)), RowValue(IntValue(1))) || Equal(RowValue(IntValue(1)), RowValue(IntValue(2))) {
		t.Errorf("ROW equality")
	}
}

// TestFieldSkipsEveryKind reads each field of a ROW holding every kind of
// element (narrow and wide DECIMAL, strings shorter and longer than 127
// bytes, NULL, nested values): Field skips the ones before it.
func TestFieldSkipsEveryKind(t *testing.T) {
	wide, err := ParseDecimal("12345678901234567890123.45", 38, 2)
	if err != nil {
		t.Fatal(err)
	}
	long := string(make([]byte, 300))
	fields := []Value{
		IntValue(-7), NullValue(), DecimalValue(-5, 2), wide, StringValue("short"), StringValue(long),
		BytesValue(long[:128]), RowValue(IntValue(1), StringValue(long)), ArrayValue(), TimestampValue(42), BoolValue(true),
	}
	row := RowValue(fields...)
	for i, f := range fields {
		if got := row.Field(i); got.Kind() != f.Kind() || !Equal(got, f) {
			t.Errorf("field %d: %v, want %v", i, got, f)
		}
	}
	if !row.Field(len(fields)).IsNull() || row.Len() != len(fields) {
		t.Errorf("past the end: %v, Len %d", row.Field(len(fields)), row.Len())
	}
}
