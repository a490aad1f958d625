package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

var typedCols = []types.Column{
	{Name: "i", Type: types.Int},
	{Name: "n", Type: types.BigInt},
	{Name: "d", Type: types.Double},
	{Name: "b", Type: types.Boolean},
	{Name: "s", Type: types.Varchar},
	{Name: "ts", Type: types.Timestamp},
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func openSource(t testing.TB, cols []types.Column, opts map[string]string) (*Source, error) {
	t.Helper()
	s, err := NewSource(connectortest.Table("t", cols, opts), connector.Env{})
	if err != nil {
		return nil, err
	}
	return s.(*Source), nil
}

// readRows reads the source at parallelism 1 in batches of batchMax rows.
func readRows(t *testing.T, s *Source, batchMax int) ([]string, error) {
	t.Helper()
	r, err := s.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return connectortest.Drain(context.Background(), r, s.schema.Len(), batchMax, -1)
}

func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		opts    map[string]string
		content string
		want    []string
	}{
		{
			name: "csv types and nulls",
			opts: map[string]string{"format": "csv"},
			content: "1,10000000000,1.5,true,abc,2024-01-01 12:00:00\n" +
				"-2,-3,1e3,FALSE,,2024-01-01 12:00:00.123\r\n" +
				",,,,\"\",\n" +
				" 7 , 8 ,NaN,true,x,2024-02-29T23:59:59.5", // no final newline
			want: []string{
				"+I[1, 10000000000, 1.5, true, abc, 2024-01-01 12:00:00.000]",
				"+I[-2, -3, 1000.0, false, , 2024-01-01 12:00:00.123]",
				"+I[<NULL>, <NULL>, <NULL>, <NULL>, , <NULL>]",
				"+I[7, 8, NaN, true, x, 2024-02-29 23:59:59.500]",
			},
		},
		{
			name:    "csv quoting",
			opts:    map[string]string{"format": "csv"},
			content: "1,2,3,true,\"a,b\",\n1,2,3,true,\"say \"\"hi\"\"\",\n1,2,3,true,\"two\nlines\",\n",
			want: []string{
				"+I[1, 2, 3.0, true, a,b, <NULL>]",
				"+I[1, 2, 3.0, true, say \"hi\", <NULL>]",
				"+I[1, 2, 3.0, true, two\nlines, <NULL>]",
			},
		},
		{
			name: "csv delimiter, quote, comments, null literal",
			opts: map[string]string{"format": "csv", "csv.field-delimiter": ";", "csv.quote-character": "'",
				"csv.allow-comments": "true", "csv.null-literal": "N/A"},
			content: "# a comment, with 'quotes\n1;2;3;true;'x;y';N/A\n\n1;N/A;3;true;N/A;2024-01-01 00:00:00\n",
			want: []string{
				"+I[1, 2, 3.0, true, x;y, <NULL>]",
				"+I[1, <NULL>, 3.0, true, <NULL>, 2024-01-01 00:00:00.000]",
			},
		},
		{
			name: "json types, missing, nested, escapes",
			opts: map[string]string{"format": "json"},
			content: `{"i":1,"n":10000000000,"d":1.5,"b":true,"s":"a\"b\u00e9\n","ts":"2024-01-01 12:00:00.000"}` + "\n" +
				`{"s":{"x":[1,"}"]},"extra":[1,2],"n":"42","d":null}` + "\n" +
				"\n" +
				`  {"i":-1, "s": 12.5, "b": "false", "d": -2}  ` + "\n",
			want: []string{
				"+I[1, 10000000000, 1.5, true, a\"bé\n, 2024-01-01 12:00:00.000]",
				`+I[<NULL>, 42, <NULL>, <NULL>, {"x":[1,"}"]}, <NULL>]`,
				"+I[-1, <NULL>, -2.0, false, 12.5, <NULL>]",
			},
		},
		{
			name:    "json iso timestamps",
			opts:    map[string]string{"format": "json", "json.timestamp-format.standard": "ISO-8601"},
			content: `{"ts":"2024-01-01T12:00:00.000Z"}` + "\n" + `{"ts":"2024-01-01T12:00:01"}`,
			want: []string{
				"+I[<NULL>, <NULL>, <NULL>, <NULL>, <NULL>, 2024-01-01 12:00:00.000]",
				"+I[<NULL>, <NULL>, <NULL>, <NULL>, <NULL>, 2024-01-01 12:00:01.000]",
			},
		},
		{
			name: "debezium changelog",
			opts: map[string]string{"format": "debezium-json"},
			content: `{"before":null,"after":{"i":1,"s":"a"},"op":"c"}` + "\n" +
				`{"op":"u","before":{"i":1,"s":"a"},"after":{"i":1,"s":"b"},"source":{}}` + "\n" +
				`{"before":{"i":1,"s":"b"},"after":null,"op":"d"}` + "\n",
			want: []string{
				"+I[1, <NULL>, <NULL>, <NULL>, a, <NULL>]",
				"-U[1, <NULL>, <NULL>, <NULL>, a, <NULL>]",
				"+U[1, <NULL>, <NULL>, <NULL>, b, <NULL>]",
				"-D[1, <NULL>, <NULL>, <NULL>, b, <NULL>]",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts["path"] = writeFile(t, t.TempDir(), "in", tc.content)
			s, err := openSource(t, typedCols, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, batch := range []int{1, 2, 100} {
				got, err := readRows(t, s, batch)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("batch %d:\ngot  %q\nwant %q", batch, got, tc.want)
				}
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	cols := []types.Column{{Name: "id", Type: types.Int}, {Name: "amount", Type: types.BigInt.Nullable()}, {Name: "k", Type: types.Varchar}}
	tests := []struct {
		format  string
		content string
		want    string // after "<path>: "
		good    int    // rows read with ignore-parse-errors
	}{
		{"csv", "1,2,a\n2,12x,b\n3,4,c\n", `offset 6 (line 2): column amount: cannot parse "12x" as BIGINT`, 2},
		{"csv", "1,2,a\n2,3\n", "offset 6 (line 2): expected 3 fields, found 2", 1},
		{"csv", "1,2,a\n99999999999,1,a\n", `offset 6 (line 2): column id: cannot parse "99999999999" as INT`, 1},
		{"csv", "1,2,\"a\"b\n5,6,x\n", `offset 0 (line 1): field 3: unexpected 'b' after the closing quote`, 1},
		{"csv", "1,2,a\n3,4,\"open\n5,6,x\n", "offset 6 (line 2): unterminated quoted field", 1},
		{"json", "{\"id\":1}\n{\"id\":true}\n", `offset 9 (line 2): column id: cannot parse "true" as INT`, 1},
		{"json", "{\"id\":1}\n{\"id\":1,}\n", `offset 9 (line 2): invalid JSON at byte 9 of the record: expected a field name, found '}'`, 1},
		{"json", "{\"id\":1}\n[1]\n", `offset 9 (line 2): invalid JSON at byte 1 of the record: expected a JSON object, found '['`, 1},
		{"json", "{\"id\":1,\"amount\":\"1.5\"}\n", `offset 0 (line 1): column amount: cannot parse "1.5" as BIGINT`, 0},
		{"json", "{\"id\":1,\"k\":\"a\n", `offset 0 (line 1): invalid JSON at byte 13 of the record: unterminated string`, 0},
		{"json", "{\"id\":null}\n", `offset 0 (line 1): column id: NULL in a NOT NULL column`, 0},
		{"debezium-json", `{"op":"x","after":{"id":1}}` + "\n", `offset 0 (line 1): unknown op 'x'`, 0},
		{"debezium-json", `{"op":"c","after":null}` + "\n", `offset 0 (line 1): op 'c' needs a non-null "after"`, 0},
		// Invalid UTF-8 in VARCHAR values: a stray byte, a cut sequence,
		// an overlong encoding, an encoded surrogate.
		{"csv", "1,2,a\n2,3,b\xffc\n", `offset 6 (line 2): column k: invalid UTF-8 (byte 0xff at byte 2 of the value)`, 1},
		{"csv", "1,2,\"\xc3\"\n5,6,x\n", `offset 0 (line 1): column k: invalid UTF-8 (byte 0xc3 at byte 1 of the value)`, 1},
		{"json", "{\"id\":1,\"k\":\"a\xe2\x82\"}\n", `offset 0 (line 1): column k: invalid UTF-8 (byte 0xe2 at byte 2 of the value)`, 0},
		{"json", "{\"id\":1,\"k\":{\"x\":\"\xed\xa0\x80\"}}\n", `offset 0 (line 1): column k: invalid UTF-8 (byte 0xed at byte 7 of the value)`, 0},
		{"debezium-json", "{\"op\":\"c\",\"after\":{\"id\":1,\"k\":\"\xc0\xaf\"}}\n", `offset 0 (line 1): after: column k: invalid UTF-8 (byte 0xc0 at byte 1 of the value)`, 0},
		// ... and in what no column reads: a field name, an ignored
		// field's value, a Debezium event's other fields.
		{"json", "{\"id\":1,\"n\xffme\":\"x\"}\n{\"id\":2}\n", `offset 0 (line 1): invalid UTF-8 at byte 11 of the record (byte 0xff)`, 1},
		{"json", "{\"id\":1}\n{\"id\":2,\"extra\":[\"\xe2\x82\"]}\n", `offset 9 (line 2): invalid UTF-8 at byte 19 of the record (byte 0xe2)`, 1},
		{"debezium-json", "{\"op\":\"c\",\"source\":{\"db\":\"\xc3(\"},\"after\":{\"id\":1}}\n", `offset 0 (line 1): invalid UTF-8 at byte 27 of the record (byte 0xc3)`, 0},
	}
	cols[0].Type.NotNull = true
	for _, tc := range tests {
		path := writeFile(t, t.TempDir(), "in."+tc.format, tc.content)
		s, err := openSource(t, cols, map[string]string{"format": tc.format, "path": path})
		if err != nil {
			t.Fatal(err)
		}
		_, err = readRows(t, s, 10)
		if want := path + ": " + tc.want; err == nil || err.Error() != want {
			t.Errorf("%s %q:\ngot  %v\nwant %s", tc.format, tc.content, err, want)
		}
		for _, key := range []string{"ignore-parse-errors", tc.format + ".ignore-parse-errors"} {
			s, err := openSource(t, cols, map[string]string{"format": tc.format, "path": path, key: "true"})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := s.Open(0, 1)
			rows, err := connectortest.Drain(context.Background(), r, len(cols), 10, -1)
			if err != nil {
				t.Errorf("%s %q with %s: %v", tc.format, tc.content, key, err)
			}
			if len(rows) != tc.good || r.(connector.Stats).Skipped() != 1 {
				t.Errorf("%s %q with %s: %d rows and %d skipped, want %d and 1", tc.format, tc.content, key, len(rows), r.(connector.Stats).Skipped(), tc.good)
			}
		}
	}
}

// TestValidUTF8 reads multi-byte UTF-8, raw and (JSON) escaped, unchanged.
func TestValidUTF8(t *testing.T) {
	cols := []types.Column{{Name: "s", Type: types.Varchar}, {Name: "t", Type: types.Varchar}}
	want := []string{"+I[é日本🙂, \u0000x\U0010ffff]"}
	for format, content := range map[string]string{
		"csv":  "é日本🙂,\"\x00x\xf4\x8f\xbf\xbf\"\n",
		"json": `{"s":"\u00e9日\u672c\ud83d\ude42","t":"\u0000x` + "\xf4\x8f\xbf\xbf\"}\n",
	} {
		s, err := openSource(t, cols, map[string]string{"format": format, "path": writeFile(t, t.TempDir(), "in", content)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readRows(t, s, 10)
		if err != nil || len(got) != 1 || got[0] != fmt.Sprintf("+I[%s, %s]", "é日本🙂", "\x00x\U0010ffff") {
			t.Errorf("%s: got %q, %v; want %q", format, got, err, want)
		}
	}
}

func TestFailOnMissingField(t *testing.T) {
	path := writeFile(t, t.TempDir(), "in.json", "{\"i\":1}\n")
	s, err := openSource(t, typedCols[:2], map[string]string{"format": "json", "path": path, "json.fail-on-missing-field": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readRows(t, s, 10); err == nil || !strings.HasSuffix(err.Error(), "offset 0 (line 1): missing field 'n'") {
		t.Errorf("got %v", err)
	}
}

func TestFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b.csv", "3\n4\n")
	writeFile(t, dir, "a.csv", "1\n2\n")
	writeFile(t, dir, "c.csv", "5\n")
	writeFile(t, dir, ".hidden", "x\n")
	writeFile(t, dir, "_SUCCESS", "x\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := openSource(t, []types.Column{{Name: "x", Type: types.Int}}, map[string]string{"format": "csv", "path": dir})
	if err != nil {
		t.Fatal(err)
	}
	per, err := connectortest.ReadAll(context.Background(), s, 1, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"+I[1]", "+I[2]", "+I[5]"}, {"+I[3]", "+I[4]"}}
	if !slices.EqualFunc(per, want, slices.Equal) {
		t.Errorf("got %v, want %v", per, want)
	}
}

// TestSeek cuts the input after every row count and checks that a reader
// restored at the cut reads exactly the rest.
func TestSeek(t *testing.T) {
	tests := []struct {
		opts  map[string]string
		files map[string]string
		want  []string // the rows of the files, in order, written out by hand
	}{
		{map[string]string{"format": "debezium-json"}, map[string]string{
			"a.json": `{"op":"c","after":{"i":1}}` + "\n" + `{"op":"u","before":{"i":1},"after":{"i":2}}` + "\n\n",
			"b.json": `{"op":"u","before":{"i":2},"after":{"i":3}}` + "\n" + `{"op":"d","before":{"i":3}}`,
			"c.json": `{"op":"c","after":{"i":9,"s":"x"}}` + "\n",
		}, []string{
			"+I[1, <NULL>, <NULL>, <NULL>, <NULL>, <NULL>]",
			"-U[1, <NULL>, <NULL>, <NULL>, <NULL>, <NULL>]",
			"+U[2, <NULL>, <NULL>, <NULL>, <NULL>, <NULL>]",
			"-U[2, <NULL>, <NULL>, <NULL>, <NULL>, <NULL>]",
			"+U[3, <NULL>, <NULL>, <NULL>, <NULL>, <NULL>]",
			"-D[3, <NULL>, <NULL>, <NULL>, <NULL>, <NULL>]",
			"+I[9, <NULL>, <NULL>, <NULL>, x, <NULL>]",
		}},
		{map[string]string{"format": "csv", "csv.allow-comments": "true"}, map[string]string{
			"a.csv": "# comment\n1,,,,\"multi\nline\",\n\n2,,,,x,\r\n",
			"b.csv": "3,,,,\"\"\"\",\n4,,,,y,",
		}, []string{
			"+I[1, <NULL>, <NULL>, <NULL>, multi\nline, <NULL>]",
			"+I[2, <NULL>, <NULL>, <NULL>, x, <NULL>]",
			"+I[3, <NULL>, <NULL>, <NULL>, \", <NULL>]",
			"+I[4, <NULL>, <NULL>, <NULL>, y, <NULL>]",
		}},
	}
	ctx := context.Background()
	for _, tc := range tests {
		dir := t.TempDir()
		for name, content := range tc.files {
			writeFile(t, dir, name, content)
		}
		tc.opts["path"] = dir
		s, err := openSource(t, typedCols, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range []int{1, 2, 3} {
			whole, err := readRows(t, s, batch)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(whole, tc.want) {
				t.Fatalf("%s, batch %d: read\n%q\nwant\n%q", tc.opts["format"], batch, whole, tc.want)
			}
			for cut := 0; cut <= len(whole); cut++ {
				r, _ := s.Open(0, 1)
				head, err := connectortest.Drain(ctx, r, s.schema.Len(), batch, cut)
				if err != nil {
					t.Fatal(err)
				}
				pos, _ := r.Position()
				r.Close()
				r2, _ := s.Open(0, 1)
				if err := r2.Seek(pos); err != nil {
					t.Fatal(err)
				}
				tail, err := connectortest.Drain(ctx, r2, s.schema.Len(), batch, -1)
				r2.Close()
				if err != nil {
					t.Fatal(err)
				}
				if got := append(head, tail...); !slices.Equal(got, tc.want) {
					t.Errorf("%s, batch %d, cut %d:\ngot  %q\nwant %q", tc.opts["format"], batch, cut, got, tc.want)
				}
			}
		}
	}
}

// TestLongLine reads a record longer than the read buffer.
func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", readBufferSize+readBufferSize/2)
	path := writeFile(t, t.TempDir(), "in.csv", "1,"+long+"\n2,\""+long+"\n\"\n3,z")
	s, err := openSource(t, []types.Column{{Name: "i", Type: types.Int}, {Name: "s", Type: types.Varchar}}, map[string]string{"format": "csv", "path": path})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readRows(t, s, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[1, " + long + "]", "+I[2, " + long + "\n]", "+I[3, z]"}
	if !slices.Equal(got, want) {
		t.Errorf("got %d rows, lengths differ or content differs", len(got))
	}
}

func TestSeekErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "1\n")
	writeFile(t, dir, "b.csv", "2\n")
	cols := []types.Column{{Name: "x", Type: types.Int}}
	s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r, _ := s.Open(1, 2)
	pos, _ := r.Position()
	writeFile(t, dir, "a0.csv", "0\n")
	s2, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r2, _ := s2.Open(1, 2)
	if err := r2.Seek(pos); err == nil || !strings.Contains(err.Error(), `file 1 was "b.csv", now "a0.csv"`) {
		t.Errorf("got %v", err)
	}
	if err := r2.Seek(pos[:3]); err == nil {
		t.Error("truncated position accepted")
	}
}

func TestSourceOptionErrors(t *testing.T) {
	path := writeFile(t, t.TempDir(), "in.csv", "")
	tests := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"path": path}, "missing option 'format'"},
		{map[string]string{"format": "csv"}, "missing option 'path'"},
		{map[string]string{"format": "xml", "path": path}, "option 'format': invalid value 'xml'"},
		{map[string]string{"format": "csv", "path": path + ".nope"}, "option 'path': stat"},
		{map[string]string{"format": "csv", "path": path, "json.fail-on-missing-field": "true"}, "unsupported option 'json.fail-on-missing-field'"},
		{map[string]string{"format": "csv", "path": path, "csv.field-delimiter": "ab"}, "expected a single ASCII character"},
		{map[string]string{"format": "csv", "path": path, "csv.allow-comments": "yes"}, "expected 'true' or 'false'"},
		{map[string]string{"format": "json", "path": path, "json.timestamp-format.standard": "RFC"}, "expected one of 'SQL', 'ISO-8601'"},
	}
	for _, tc := range tests {
		_, err := openSource(t, typedCols, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func BenchmarkCSVParse(b *testing.B) {
	benchmarkParse(b, "csv", "12345,9876543210,3.25,true,some text here,2024-01-01 12:00:00.123\n")
}

func BenchmarkJSONParse(b *testing.B) {
	benchmarkParse(b, "json", `{"i":12345,"n":9876543210,"d":3.25,"b":true,"s":"some text here","ts":"2024-01-01 12:00:00.123","other":[1,2]}`+"\n")
}

// benchmarkParse reads a file of 10,000 copies of line in format, whole,
// per iteration.
func benchmarkParse(b *testing.B, format, line string) {
	content := strings.Repeat(line, 10000)
	path := writeFile(b, b.TempDir(), "in."+format, content)
	s, err := openSource(b, typedCols, map[string]string{"format": format, "path": path})
	if err != nil {
		b.Fatal(err)
	}
	batch := types.NewBatch(len(typedCols), 1024)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(content)))
	total := 0
	for b.Loop() {
		r, err := s.Open(0, 1)
		if err != nil {
			b.Fatal(err)
		}
		for err == nil {
			batch.Reset()
			err = r.Next(ctx, batch, 1024)
			total += batch.Len()
		}
		if !errors.Is(err, io.EOF) {
			b.Fatal(err)
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
}
