package filesystem

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestJSONCompositeRoundTrip writes random rows with ROW (nested), ARRAY
// and MAP columns as JSON, reads them back and writes them again: the
// values read must be the ones written (element by element, compared
// here) and the two writes the same text.
func TestJSONCompositeRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 17))
	inner := types.RowOf(types.Field{Name: "x", Type: types.BigInt}, types.Field{Name: "s", Type: types.Varchar})
	person := types.RowOf(types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.Varchar},
		types.Field{Name: "dateTime", Type: types.Timestamp}, types.Field{Name: "in", Type: inner},
		types.Field{Name: "price", Type: types.Decimal(10, 2)})
	cols := []types.Column{
		{Name: "p", Type: person},
		{Name: "a", Type: types.ArrayOf(types.Int)},
		{Name: "m", Type: types.MapOf(types.Varchar, types.ArrayOf(types.Double))},
		{Name: "rs", Type: types.ArrayOf(inner)},
	}
	str := func() types.Value {
		if r.IntN(8) == 0 {
			return types.NullValue()
		}
		return types.StringValue(fmt.Sprintf("s\"%d\\é", r.IntN(100)))
	}
	mk := func() []types.Value {
		in := types.RowValue(types.BigIntValue(r.Int64N(1e12)-5e11), str())
		p := types.RowValue(types.BigIntValue(r.Int64N(1000)), str(), types.TimestampValue(r.Int64N(2e12)), in, types.DecimalValue(r.Int64N(1e6)-5e5, 2))
		var elems []types.Value
		for range r.IntN(4) {
			elems = append(elems, types.IntValue(r.Int64N(1000)-500))
		}
		if len(elems) > 0 && r.IntN(3) == 0 {
			elems[0] = types.NullValue()
		}
		var mb types.RowBuilder
		for k := range r.IntN(3) {
			mb.Add(types.StringValue(fmt.Sprintf("k%d", k)))
			mb.Add(types.ArrayValue(types.DoubleValue(float64(r.IntN(100))/4), types.DoubleValue(-1.5)))
		}
		rs := types.ArrayValue(in, types.RowValue(types.BigIntValue(1), types.StringValue("b")))
		row := []types.Value{p, types.ArrayValue(elems...), mb.Finish(types.KindMap), rs}
		if r.IntN(5) == 0 {
			row[r.IntN(len(row))] = types.NullValue()
		}
		return row
	}
	f, _, err := ParseRecordFormat(map[string]string{"format": "json"}, true)
	if err != nil {
		t.Fatal(err)
	}
	enc, dec := f.NewEncoder(cols), f.NewDecoder(cols)
	for range 300 {
		row := mk()
		rec, err := enc.Encode(nil, types.Insert, row)
		if err != nil {
			t.Fatalf("encode %v: %v", row, err)
		}
		if _, err := dec.Decode(rec); err != nil {
			t.Fatalf("decode %s: %v", rec, err)
		}
		_, got := dec.Row(0)
		for c := range cols {
			if !sameValue(got[c], row[c]) {
				t.Fatalf("column %s: wrote %v, read %v from %s", cols[c].Name, row[c], got[c], rec)
			}
		}
		again, _ := enc.Encode(nil, types.Insert, got)
		if string(again) != string(rec) {
			t.Fatalf("rewrite %s != %s", again, rec)
		}
	}
	// The JSON Flink's json format writes for nested types.
	row := []types.Value{
		types.RowValue(types.BigIntValue(7), types.StringValue("ann"), types.TimestampValue(0), types.NullValue(), types.DecimalValue(150, 2)),
		types.ArrayValue(types.IntValue(1), types.NullValue()),
		types.NewComposite(types.KindMap, types.StringValue("k"), types.ArrayValue(types.DoubleValue(0.5))),
		types.NullValue(),
	}
	rec, _ := enc.Encode(nil, types.Insert, row)
	want := `{"p":{"id":7,"name":"ann","dateTime":"1970-01-01 00:00:00.000","in":null,"price":1.50},"a":[1,null],"m":{"k":[0.5]},"rs":null}`
	if string(rec) != want {
		t.Errorf("json record\n%s, want\n%s", rec, want)
	}
	// Missing fields are NULL, unknown ones skipped, fields in any order.
	if _, err := dec.Decode([]byte(`{"p":{"extra":[1,{"a":2}],"name":"z","id":3},"a":[]}`)); err != nil {
		t.Fatal(err)
	}
	_, got := dec.Row(0)
	if got[0].String() != "(3, z, NULL, NULL, NULL)" || got[1].String() != "[]" || !got[2].IsNull() {
		t.Errorf("partial record read as %v", got)
	}
	// Bad input is an error naming the column and the field, never a wrong value.
	for _, bad := range []string{`{"p":{"id":"x"}}`, `{"a":[1,"b"]}`, `{"a":{"x":1}}`, `{"p":[1]}`, `{"m":{"k":[true]}}`, `{"rs":[{"x":1},3]}`, `{"a":[1,2`} {
		if _, err := dec.Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "column") {
			t.Errorf("decode %s: %v, want an error naming the column", bad, err)
		}
	}
	// csv refuses nested columns with a clear message.
	if _, err := openSource(t, cols, map[string]string{"format": "csv", "path": t.TempDir()}); err == nil || !strings.Contains(err.Error(), "use format 'json'") {
		t.Errorf("csv with a ROW column: %v", err)
	}
}

// sameValue compares two values element by element (composites
// recursively), with the kinds.
func sameValue(a, b types.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case types.KindRow, types.KindArray, types.KindMap:
		if a.Len() != b.Len() {
			return false
		}
		n := a.Len()
		if a.Kind() == types.KindMap {
			n *= 2
		}
		for i := range n {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return types.Equal(a, b)
}
