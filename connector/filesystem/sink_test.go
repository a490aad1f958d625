package filesystem

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/")

func ts(s string) types.Value {
	ms, err := parseScalar([]byte(s), types.Timestamp, tsAny)
	if err != nil {
		panic(err)
	}
	return ms
}

// sinkRows is a changelog with every type, NULLs and characters that need
// quoting or escaping.
func sinkRows() *types.Batch {
	b := types.NewBatch(len(typedCols), 8)
	b.Append(types.Insert, []types.Value{types.IntValue(1), types.BigIntValue(1 << 40), types.DoubleValue(1.5), types.BoolValue(true), types.StringValue("plain"), ts("2024-01-01 12:00:00.5")})
	b.Append(types.Insert, []types.Value{types.IntValue(-2), types.NullValue(), types.DoubleValue(math.NaN()), types.BoolValue(false), types.StringValue("a,\"b\"\nc\té\x01"), types.NullValue()})
	b.Append(types.Insert, []types.Value{types.NullValue(), types.BigIntValue(0), types.DoubleValue(1e7), types.NullValue(), types.NullValue(), ts("1970-01-01 00:00:00")})
	return b
}

func updateRows() *types.Batch {
	b := types.NewBatch(len(typedCols), 8)
	row := func(i int64, s string) []types.Value {
		return []types.Value{types.IntValue(i), types.NullValue(), types.NullValue(), types.NullValue(), types.StringValue(s), types.NullValue()}
	}
	b.Append(types.Insert, row(1, "a"))
	b.Append(types.UpdateBefore, row(1, "a"))
	b.Append(types.UpdateAfter, row(1, "b"))
	b.Append(types.UpdateBefore, row(1, "b")) // not followed by +U: a delete
	b.Append(types.Delete, row(2, "x"))
	b.Append(types.UpdateAfter, row(3, "y")) // alone: a create
	return b
}

func newSinkWriter(t *testing.T, opts map[string]string, subtask, parallelism int) (connector.SinkWriter, *Sink) {
	t.Helper()
	s, err := NewSink(connectortest.Table("out", typedCols, opts), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Open(subtask, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	return w, s.(*Sink)
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestSinkFormats(t *testing.T) {
	tests := []struct {
		golden string
		opts   map[string]string
		batch  *types.Batch
		final  string
	}{
		{"sink.csv", map[string]string{"format": "csv"}, sinkRows(), "part-1-1-0.csv"},
		{"sink-semicolon.csv", map[string]string{"format": "csv", "csv.field-delimiter": ";", "csv.null-literal": "\\N"}, sinkRows(), "part-1-1-0.csv"},
		{"sink.json", map[string]string{"format": "json"}, sinkRows(), "part-1-1-0.json"},
		{"sink-iso.json", map[string]string{"format": "json", "json.timestamp-format.standard": "ISO-8601"}, sinkRows(), "part-1-1-0.json"},
		{"sink-debezium.json", map[string]string{"format": "debezium-json"}, updateRows(), "part-1-1-0.json"},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out") // created by Open
			tc.opts["path"] = dir
			w, _ := newSinkWriter(t, tc.opts, 1, 2)
			if err := w.Write(tc.batch); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			inprogress := filepath.Join(dir, ".part-1-0.inprogress")
			flushed, err := os.ReadFile(inprogress)
			if err != nil {
				t.Fatalf("after Flush: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(inprogress); !os.IsNotExist(err) {
				t.Errorf("in-progress file still there after Close: %v", err)
			}
			got, err := os.ReadFile(filepath.Join(dir, tc.final))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(flushed) {
				t.Error("the final file differs from what Flush wrote")
			}
			checkGolden(t, tc.golden, got)
			// The bytes, golden or not, decoded in the test, hold the
			// batch (Debezium: with its lone -U as a delete, lone +U as
			// a create).
			var want []string
			for i := range tc.batch.Len() {
				kind := tc.batch.Kinds[i]
				if tc.opts["format"] == "debezium-json" {
					if kind == types.UpdateBefore && (i+1 == tc.batch.Len() || tc.batch.Kinds[i+1] != types.UpdateAfter) {
						kind = types.Delete
					} else if kind == types.UpdateAfter && tc.batch.Kinds[i-1] != types.UpdateBefore {
						kind = types.Insert
					}
				}
				want = append(want, canonBatchRow(kind, tc.batch.Row(i)))
			}
			if decoded := decodeSinkFolder(t, dir, tc.opts); !slices.Equal(decoded, want) {
				t.Errorf("decoded in the test:\ngot  %q\nwant %q", decoded, want)
			}
		})
	}
}

// canonRow renders a row of typedCols (i INT, n BIGINT, d DOUBLE, b
// BOOLEAN, s VARCHAR, ts TIMESTAMP) as the test compares it: kind, then
// each value as NULL, a decimal integer, a float in %g, a bool, a quoted
// string, or a timestamp in ms since the epoch.
func canonRow(kind string, vals []any) string {
	parts := []string{kind}
	for _, v := range vals {
		switch v := v.(type) {
		case nil:
			parts = append(parts, "NULL")
		case float64:
			parts = append(parts, strconv.FormatFloat(v, 'g', -1, 64))
		case string:
			parts = append(parts, strconv.Quote(v))
		case time.Time:
			parts = append(parts, fmt.Sprintf("ts:%d", v.UnixMilli()))
		default:
			parts = append(parts, fmt.Sprint(v))
		}
	}
	return strings.Join(parts, " ")
}

// canonBatchRow is canonRow of row i of b, from its Go values.
func canonBatchRow(kind types.RowKind, row []types.Value) string {
	vals := make([]any, len(row))
	for c, v := range row {
		switch {
		case v.IsNull():
		case c == 2:
			vals[c] = v.Float()
		case c == 3:
			vals[c] = v.Bool()
		case c == 4:
			vals[c] = v.Str()
		case c == 5:
			vals[c] = time.UnixMilli(v.Int())
		default:
			vals[c] = v.Int()
		}
	}
	return canonRow(kind.String(), vals)
}

// parseTestTime parses a timestamp as the sink writes it (SQL or ISO-8601).
func parseTestTime(t *testing.T, s string) time.Time {
	t.Helper()
	for _, layout := range []string{"2006-01-02 15:04:05.000", "2006-01-02T15:04:05.000Z"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts
		}
	}
	t.Fatalf("timestamp %q in neither layout", s)
	return time.Time{}
}

// decodeJSONImage decodes a JSON object of typedCols with encoding/json.
func decodeJSONImage(t *testing.T, raw json.RawMessage) []any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(m) != len(typedCols) {
		t.Fatalf("%s: %d fields, want %d", raw, len(m), len(typedCols))
	}
	vals := make([]any, len(typedCols))
	for c, col := range typedCols {
		v, ok := m[col.Name]
		if !ok {
			t.Fatalf("%s: no field %q", raw, col.Name)
		}
		var err error
		switch v := v.(type) {
		case nil:
		case json.Number:
			if c == 2 {
				vals[c], err = v.Float64()
			} else {
				vals[c], err = v.Int64()
			}
		case bool:
			vals[c] = v
		case string:
			switch c {
			case 2:
				vals[c], err = strconv.ParseFloat(v, 64) // NaN and infinities are strings
			case 5:
				vals[c] = parseTestTime(t, v)
			default:
				vals[c] = v
			}
		default:
			t.Fatalf("%s: field %q is %T", raw, col.Name, v)
		}
		if err != nil {
			t.Fatalf("%s: field %q: %v", raw, col.Name, err)
		}
	}
	return vals
}

// decodeSinkFolder decodes the part files in dir with encoding/json and
// encoding/csv (not with the source) into canonRow lines, file by file.
func decodeSinkFolder(t *testing.T, dir string, opts map[string]string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "part-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no part file in %s (%v)", dir, err)
	}
	slices.Sort(files)
	var rows []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch opts["format"] {
		case "csv":
			r := csv.NewReader(bytes.NewReader(data))
			if d := opts["csv.field-delimiter"]; d != "" {
				r.Comma = rune(d[0])
			}
			recs, err := r.ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, rec := range recs {
				if len(rec) != len(typedCols) {
					t.Fatalf("%s: record %q has %d fields", f, rec, len(rec))
				}
				vals := make([]any, len(rec))
				for c, field := range rec {
					if field == opts["csv.null-literal"] {
						continue
					}
					var err error
					switch c {
					case 0, 1:
						vals[c], err = strconv.ParseInt(field, 10, 64)
					case 2:
						vals[c], err = strconv.ParseFloat(field, 64)
					case 3:
						vals[c], err = strconv.ParseBool(field)
					case 4:
						vals[c] = field
					case 5:
						vals[c] = parseTestTime(t, field)
					}
					if err != nil {
						t.Fatalf("%s: field %d of %q: %v", f, c, rec, err)
					}
				}
				rows = append(rows, canonRow("+I", vals))
			}
		case "json":
			for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				rows = append(rows, canonRow("+I", decodeJSONImage(t, json.RawMessage(line))))
			}
		case "debezium-json":
			for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				var rec struct {
					Before, After json.RawMessage
					Op            string
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("%s: %q: %v", f, line, err)
				}
				null := func(m json.RawMessage) bool { return len(m) == 0 || string(m) == "null" }
				switch {
				case rec.Op == "c" && null(rec.Before) && !null(rec.After):
					rows = append(rows, canonRow("+I", decodeJSONImage(t, rec.After)))
				case rec.Op == "u" && !null(rec.Before) && !null(rec.After):
					rows = append(rows, canonRow("-U", decodeJSONImage(t, rec.Before)), canonRow("+U", decodeJSONImage(t, rec.After)))
				case rec.Op == "d" && !null(rec.Before) && null(rec.After):
					rows = append(rows, canonRow("-D", decodeJSONImage(t, rec.Before)))
				default:
					t.Fatalf("%s: malformed record %q", f, line)
				}
			}
		default:
			t.Fatalf("no decoder for format %q", opts["format"])
		}
	}
	return rows
}

// TestSinkRoundTrip writes with the sink, decodes the files in the test
// (encoding/json, encoding/csv) and reads them back with the source: both
// must give the input batch's values (a Debezium lone -U is a delete, a
// lone +U a create).
func TestSinkRoundTrip(t *testing.T) {
	tests := []struct {
		opts  map[string]string
		batch *types.Batch
	}{
		{map[string]string{"format": "json"}, sinkRows()},
		{map[string]string{"format": "json", "json.timestamp-format.standard": "ISO-8601"}, sinkRows()},
		{map[string]string{"format": "csv", "csv.null-literal": "NULL"}, sinkRows()},
		{map[string]string{"format": "debezium-json"}, updateRows()},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		tc.opts["path"] = dir
		w, _ := newSinkWriter(t, tc.opts, 0, 1)
		if err := w.Write(tc.batch); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		src, err := openSource(t, typedCols, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readRows(t, src, 100)
		if err != nil {
			t.Fatal(err)
		}
		var want, wantCanon []string
		for i := range tc.batch.Len() {
			kind := tc.batch.Kinds[i]
			if tc.opts["format"] == "debezium-json" && (kind == types.UpdateBefore && (i+1 == tc.batch.Len() || tc.batch.Kinds[i+1] != types.UpdateAfter)) {
				kind = types.Delete // a lone -U is written as a delete
			}
			if tc.opts["format"] == "debezium-json" && kind == types.UpdateAfter && tc.batch.Kinds[i-1] != types.UpdateBefore {
				kind = types.Insert
			}
			want = append(want, types.FormatRow(kind, tc.batch.Row(i)))
			wantCanon = append(wantCanon, canonBatchRow(kind, tc.batch.Row(i)))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v:\ngot  %q\nwant %q", tc.opts, got, want)
		}
		if decoded := decodeSinkFolder(t, dir, tc.opts); !slices.Equal(decoded, wantCanon) {
			t.Errorf("%v, decoded in the test:\ngot  %q\nwant %q", tc.opts, decoded, wantCanon)
		}
	}
}

func TestSinkAppendOnly(t *testing.T) {
	for _, format := range []string{"csv", "json"} {
		w, s := newSinkWriter(t, map[string]string{"format": format, "path": t.TempDir()}, 0, 1)
		if s.AcceptsUpdates() {
			t.Errorf("%s: AcceptsUpdates", format)
		}
		err := w.Write(updateRows())
		if err == nil || !strings.Contains(err.Error(), "accepts only inserts, got a -U row") {
			t.Errorf("%s: got %v", format, err)
		}
		w.Close()
	}
}

// TestSinkPartNumbers checks that a second run does not overwrite the
// first one's files, and that a writer with no rows leaves no file.
func TestSinkPartNumbers(t *testing.T) {
	dir := t.TempDir()
	opts := map[string]string{"format": "csv", "path": dir, "sink.parallelism": "2"}
	for range 2 {
		w, s := newSinkWriter(t, opts, 0, 2)
		if s.Parallelism() != 2 {
			t.Errorf("Parallelism %d", s.Parallelism())
		}
		if err := w.Write(sinkRows()); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		empty, _ := newSinkWriter(t, opts, 1, 2)
		if err := empty.Close(); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The second run's file takes the next number and, committed without a
	// checkpoint, the checkpoint after the highest in the folder.
	if want := []string{"part-0-1-0.csv", "part-0-2-1.csv"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
}

func TestSinkOptionErrors(t *testing.T) {
	file := writeFile(t, t.TempDir(), "f", "")
	tests := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"format": "csv"}, "missing option 'path'"},
		{map[string]string{"format": "csv", "path": file}, "is not a folder"},
		{map[string]string{"format": "csv", "path": "x", "csv.allow-comments": "true"}, "unsupported option 'csv.allow-comments'"},
		{map[string]string{"format": "csv", "path": "x", "sink.parallelism": "0"}, "expected a positive integer"},
		{map[string]string{"format": "csv", "path": "x", "pth": "x"}, "did you mean 'path'?"},
	}
	for _, tc := range tests {
		_, err := NewSink(connectortest.Table("out", typedCols, tc.opts), connector.Env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
}
