package filesystem

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestCSVCompositeRoundTrip writes random rows with ROW and ARRAY columns
// of scalars as CSV (elements holding the element delimiter, backslashes,
// quotes and the field delimiter; NULL elements and fields), reads them
// back and writes them again: the values read must be the ones written
// (compared element by element here) and the two writes the same text.
func TestCSVCompositeRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 23))
	person := types.RowOf(types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.Varchar},
		types.Field{Name: "ts", Type: types.Timestamp}, types.Field{Name: "price", Type: types.Decimal(10, 2)})
	cols := []types.Column{
		{Name: "n", Type: types.Int},
		{Name: "p", Type: person},
		{Name: "tags", Type: types.ArrayOf(types.Varchar)},
		{Name: "xs", Type: types.ArrayOf(types.BigInt)},
	}
	texts := []string{"a", "b;c", `back\slash`, `"q"`, "x,y", "é", ";", `\`, "tail\\"}
	// Without a null literal a NULL string is written as an empty field
	// and read back as the empty string, as a top-level VARCHAR and as in
	// Flink: strings are NULL only with a null literal.
	nulls := false
	str := func() types.Value {
		if r.IntN(8) == 0 {
			if nulls {
				return types.NullValue()
			}
			return types.StringValue("")
		}
		return types.StringValue(texts[r.IntN(len(texts))] + fmt.Sprint(r.IntN(10)))
	}
	mk := func() []types.Value {
		p := types.RowValue(types.BigIntValue(r.Int64N(1e12)-5e11), str(), types.TimestampValue(r.Int64N(2e12)), types.DecimalValue(r.Int64N(1e6)-5e5, 2))
		var tags, xs []types.Value
		for range 1 + r.IntN(4) {
			tags = append(tags, str())
			x := types.BigIntValue(r.Int64N(1000) - 500)
			if r.IntN(6) == 0 {
				x = types.NullValue()
			}
			xs = append(xs, x)
		}
		row := []types.Value{types.IntValue(r.Int64N(100)), p, types.ArrayValue(tags...), types.ArrayValue(xs...)}
		if r.IntN(5) == 0 {
			row[1+r.IntN(3)] = types.NullValue()
		}
		return row
	}
	for _, opts := range []map[string]string{
		{"format": "csv"},
		{"format": "csv", "csv.array-element-delimiter": "|", "csv.null-literal": "\\N"},
	} {
		f, _, err := ParseRecordFormat(opts, true)
		if err != nil {
			t.Fatal(err)
		}
		_, nulls = opts["csv.null-literal"]
		enc, dec := f.NewEncoder(cols), f.NewDecoder(cols)
		for range 400 {
			row := mk()
			for c := 2; c <= 3 && !nulls; c++ {
				if row[c].Kind() == types.KindArray && row[c].Len() == 1 && (row[c].Field(0).IsNull() || row[c].Field(0).Str() == "") {
					// A one-element array of NULL or '' is an empty
					// field, which reads as a NULL array without a null
					// literal (documented).
					row[c] = types.ArrayValue(types.StringValue("z"))
					if c == 3 {
						row[c] = types.ArrayValue(types.BigIntValue(7))
					}
				}
			}
			rec, err := enc.Encode(nil, types.Insert, row)
			if err != nil {
				t.Fatalf("encode %v: %v", row, err)
			}
			if _, err := dec.Decode(rec); err != nil {
				t.Fatalf("%v: decode %s: %v", opts, rec, err)
			}
			_, got := dec.Row(0)
			for c := range cols {
				if !sameValue(got[c], row[c]) {
					t.Fatalf("%v: column %s: wrote %v, read %v from %s", opts, cols[c].Name, row[c], got[c], rec)
				}
			}
			again, _ := enc.Encode(nil, types.Insert, got)
			if string(again) != string(rec) {
				t.Fatalf("rewrite %s != %s", again, rec)
			}
		}
	}
}

// TestCSVCompositeText pins the text of ROW and ARRAY fields and the
// errors of malformed ones.
func TestCSVCompositeText(t *testing.T) {
	row := types.RowOf(types.Field{Name: "a", Type: types.Int}, types.Field{Name: "b", Type: types.Varchar})
	cols := []types.Column{{Name: "r", Type: row}, {Name: "xs", Type: types.ArrayOf(types.Int)}}
	f, _, err := ParseRecordFormat(map[string]string{"format": "csv"}, true)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.NewEncoder(cols).Encode(nil, types.Insert, []types.Value{
		types.RowValue(types.IntValue(1), types.StringValue("x;y")), types.ArrayValue(types.IntValue(1), types.NullValue(), types.IntValue(3))})
	if err != nil {
		t.Fatal(err)
	}
	if want := `1;x\;y,1;;3`; string(rec) != want {
		t.Fatalf("wrote %s, want %s", rec, want)
	}
	for _, tc := range []struct{ rec, err string }{
		{`1;a;b,1`, "column r: more than the 2 fields of ROW<`a` INT, `b` VARCHAR>"},
		{`1,1`, "column r: 1 fields, ROW<`a` INT, `b` VARCHAR> has 2"},
		{`x;a,1`, "column r: element 1:"},
		{`1;a,1;two`, "column xs: element 2:"},
	} {
		_, err := f.NewDecoder(cols).Decode([]byte(tc.rec))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("decode %s: error %v, want one containing %q", tc.rec, err, tc.err)
		}
	}
}

// TestCSVCompositeRefused: a MAP and a ROW or ARRAY nested in another are
// refused by the csv format, naming the column, for reading and writing.
func TestCSVCompositeRefused(t *testing.T) {
	f, _, err := parseFormat(map[string]string{"format": "csv"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ  types.Type
		want string
	}{
		{types.MapOf(types.Varchar, types.Int), "column c: a MAP<VARCHAR, INT> cannot be read with format 'csv' (Flink's csv has no MAP either"},
		{types.ArrayOf(types.ArrayOf(types.Int)), "column c: a ARRAY<ARRAY<INT>> cannot be read with format 'csv': csv takes a ROW or ARRAY of scalars"},
		{types.RowOf(types.Field{Name: "in", Type: types.RowOf(types.Field{Name: "x", Type: types.Int})}), "not one nested in another"},
	} {
		err := checkComposite(f, types.Schema{Columns: []types.Column{{Name: "c", Type: tc.typ}}}, "read")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.typ.Name(), err, tc.want)
		}
	}
	if err := checkComposite(f, types.Schema{Columns: []types.Column{{Name: "c", Type: types.ArrayOf(types.Int)}}}, "read"); err != nil {
		t.Errorf("ARRAY<INT>: %v", err)
	}
}
