package filesystem

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestFormatsRoundTripNewTypes writes random rows of DECIMAL (narrow and
// wide), TINYINT, SMALLINT, FLOAT, DATE, TIME and BYTES with the json and
// csv formats, reads them back, writes them again, and checks both reads
// give the original values and both writes the same text.
func TestFormatsRoundTripNewTypes(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	cols := []types.Column{
		{Name: "d", Type: types.Decimal(10, 2)},
		{Name: "w", Type: types.Decimal(38, 4)},
		{Name: "ti", Type: types.Type{Kind: types.KindTinyInt}},
		{Name: "si", Type: types.Type{Kind: types.KindSmallInt}},
		{Name: "f", Type: types.Type{Kind: types.KindFloat}},
		{Name: "dt", Type: types.Type{Kind: types.KindDate}},
		{Name: "tm", Type: types.Type{Kind: types.KindTime}},
		{Name: "b", Type: types.Type{Kind: types.KindBytes}},
	}
	rows := make([][]types.Value, 200)
	for i := range rows {
		wide := "-"[:r.IntN(2)] + "1234567890123456789012345" + string(rune('0'+r.IntN(10))) + ".1234"
		w, err := types.ParseDecimal(wide, 38, 4)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, r.IntN(6))
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		rows[i] = []types.Value{
			types.DecimalValue(r.Int64N(2e10)-1e10, 2), w,
			types.TinyIntValue(r.Int64N(256) - 128), types.SmallIntValue(r.Int64N(65536) - 32768),
			types.FloatValue(float64(r.IntN(2000)-1000) / 8),
			types.DateValue(r.Int64N(40000) - 10000), types.TimeValue(r.Int64N(86400) * 1000),
			types.BytesValue(string(b)),
		}
		if i%7 == 0 {
			rows[i][r.IntN(len(cols))] = types.NullValue()
		}
	}
	for _, name := range []string{"json", "csv"} {
		// A csv NULL is written as csv.null-literal (default: an empty
		// field, which for BYTES, as for VARCHAR, reads back as empty).
		f, _, err := ParseRecordFormat(map[string]string{"format": name, "csv.null-literal": "NULL"}, true)
		if err != nil {
			t.Fatal(err)
		}
		enc, dec := f.NewEncoder(cols), f.NewDecoder(cols)
		for _, row := range rows {
			rec, err := enc.Encode(nil, types.Insert, row)
			if err != nil {
				t.Fatalf("%s: encode %v: %v", name, row, err)
			}
			if _, err := dec.Decode(rec); err != nil {
				t.Fatalf("%s: decode %s: %v", name, rec, err)
			}
			_, got := dec.Row(0)
			for c := range cols {
				if got[c].Kind() != row[c].Kind() || !types.Equal(got[c], row[c]) {
					t.Fatalf("%s: column %s: wrote %v, read %v from %s", name, cols[c].Name, row[c], got[c], rec)
				}
			}
			again, _ := enc.Encode(nil, types.Insert, got)
			if string(again) != string(rec) {
				t.Fatalf("%s: rewrite %s != %s", name, again, rec)
			}
		}
	}
	// What Flink's formats write: DECIMAL as a plain number, DATE and TIME
	// as text, BYTES as base64.
	f, _, _ := ParseRecordFormat(map[string]string{"format": "json"}, true)
	rec, _ := f.NewEncoder(cols).Encode(nil, types.Insert, []types.Value{
		types.DecimalValue(-5, 2), types.DecimalValue(123456, 4), types.TinyIntValue(-1), types.SmallIntValue(300),
		types.FloatValue(0.5), types.DateValue(20454), types.TimeValue(45296000), types.BytesValue("hi"),
	})
	want := `{"d":-0.05,"w":12.3456,"ti":-1,"si":300,"f":0.5,"dt":"2026-01-01","tm":"12:34:56","b":"aGk="}`
	if string(rec) != want {
		t.Errorf("json record %s, want %s", rec, want)
	}
	// Bad input is an error naming the column, never a wrong value.
	dec := f.NewDecoder(cols)
	for _, bad := range []string{`{"d":123456789.123}`, `{"ti":128}`, `{"dt":"2026-02-30"}`, `{"tm":"25:00:00"}`, `{"b":"%%%"}`, `{"d":"x"}`} {
		if _, err := dec.Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "column") {
			t.Errorf("decode %s: %v, want an error naming the column", bad, err)
		}
	}
}
