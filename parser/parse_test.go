package parser

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected outputs of testdata/*.txt")

// goldenCase is one case of a testdata file: "=== title", the SQL input,
// a "---" line, then the expected output. A title starting with "expr"
// parses the input with ParseExpr instead of Parse.
type goldenCase struct {
	title, input, want string
}

func readGolden(t testing.TB, path string) (header string, cases []goldenCase) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	lines := strings.Split(string(data), "\n")
	i := 0
	var head []string
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "=== "); i++ {
		head = append(head, lines[i])
	}
	for i < len(lines) {
		c := goldenCase{title: strings.TrimPrefix(lines[i], "=== ")}
		i++
		var in, want []string
		for ; i < len(lines) && lines[i] != "---"; i++ {
			in = append(in, lines[i])
		}
		i++ // skip "---"
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "=== "); i++ {
			want = append(want, lines[i])
		}
		c.input = strings.Join(in, "\n")
		c.want = strings.TrimRight(strings.Join(want, "\n"), "\n")
		cases = append(cases, c)
	}
	return strings.Join(head, "\n"), cases
}

func writeGolden(t *testing.T, path, header string, cases []goldenCase) {
	t.Helper()
	var b strings.Builder
	if header != "" {
		b.WriteString(strings.TrimRight(header, "\n"))
		b.WriteString("\n\n")
	}
	for _, c := range cases {
		b.WriteString("=== " + c.title + "\n" + c.input + "\n---\n" + c.want + "\n\n")
	}
	if err := os.WriteFile(path, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}

func isExprCase(c goldenCase) bool { return strings.HasPrefix(c.title, "expr") }

// runGolden renders what the parser makes of a case's input.
func runGolden(c goldenCase) string {
	var b strings.Builder
	if isExprCase(c) {
		e, err := ParseExpr(c.input)
		if err != nil {
			return "error: " + err.Error()
		}
		b.WriteString(dump(e, true))
		b.WriteString("format: " + Format(e))
		return b.String()
	}
	stmts, err := Parse(c.input)
	if err != nil {
		return "error: " + err.Error()
	}
	if len(stmts) == 0 {
		return "(no statements)"
	}
	for _, s := range stmts {
		b.WriteString(dump(s, true))
		b.WriteString("format: " + strings.ReplaceAll(Format(s), "\n", "\n  ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func goldenFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	return files
}

func TestGolden(t *testing.T) {
	for _, path := range goldenFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			header, cases := readGolden(t, path)
			for i := range cases {
				got := runGolden(cases[i])
				if *rewrite {
					cases[i].want = got
					continue
				}
				if got != cases[i].want {
					t.Errorf("%s: case %q\ninput:\n%s\ngot:\n%s\nwant:\n%s", path, cases[i].title, cases[i].input, got, cases[i].want)
				}
			}
			if *rewrite {
				writeGolden(t, path, header, cases)
			}
		})
	}
}

// checkRoundTrip verifies Parse(Format(x)) == x (ignoring positions and
// text) for every statement of src, and that Format is a fixed point.
func checkRoundTrip(t testing.TB, src string, expr bool) {
	t.Helper()
	if expr {
		e, err := ParseExpr(src)
		if err != nil {
			return
		}
		text := Format(e)
		e2, err := ParseExpr(text)
		if err != nil {
			t.Fatalf("re-parsing %q (formatted from %q): %v", text, src, err)
		}
		if a, b := dump(e, false), dump(e2, false); a != b {
			t.Fatalf("round trip of %q via %q changed the AST:\n%s\nvs\n%s", src, text, a, b)
		}
		return
	}
	stmts, err := Parse(src)
	if err != nil {
		return
	}
	for _, s := range stmts {
		text := Format(s)
		again, err := Parse(text)
		if err != nil {
			t.Fatalf("re-parsing %q (formatted from %q): %v", text, src, err)
		}
		if len(again) != 1 {
			t.Fatalf("formatted %q parsed into %d statements", text, len(again))
		}
		if a, b := dump(s, false), dump(again[0], false); a != b {
			t.Fatalf("round trip of %q via %q changed the AST:\n%s\nvs\n%s", src, text, a, b)
		}
		if text2 := Format(again[0]); text2 != text {
			t.Fatalf("Format is not a fixed point: %q then %q", text, text2)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, path := range goldenFiles(t) {
		_, cases := readGolden(t, path)
		for _, c := range cases {
			checkRoundTrip(t, c.input, isExprCase(c))
		}
	}
}

func TestStatementText(t *testing.T) {
	src := "-- lead\nSET 'a' = 'b' ;\n\n  SELECT a /* inner */ FROM t -- tail\n;;"
	stmts, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SET 'a' = 'b'", "SELECT a /* inner */ FROM t"}
	if len(stmts) != len(want) {
		t.Fatalf("got %d statements, want %d", len(stmts), len(want))
	}
	for i, s := range stmts {
		if s.SQL() != want[i] {
			t.Errorf("statement %d text %q, want %q", i, s.SQL(), want[i])
		}
		if p := s.Position(); src[p.Offset:p.Offset+len(want[i])] != want[i] {
			t.Errorf("statement %d offset %d does not point at its text", i, p.Offset)
		}
	}
}

func TestErrorType(t *testing.T) {
	src := "SELECT 1;\nSELECT FROM t"
	_, err := Parse(src)
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %T %v is not *Error", err, err)
	}
	if e.Source != src || e.Pos.Line != 2 || e.Pos.Col != 8 || e.Pos.Offset != 17 {
		t.Fatalf("error at %+v with source %q", e.Pos, e.Source)
	}
}

func TestConcurrentParse(t *testing.T) {
	const workers = 4
	errs := make(chan error, workers)
	for i := 0; i < workers; i++ {
		go func() {
			var err error
			for j := 0; j < 20 && err == nil; j++ {
				_, err = Parse("SELECT a, COUNT(*) FROM t WHERE b > 1 GROUP BY a")
				if err == nil {
					_, perr := Parse("SELECT a FROM")
					if perr == nil {
						err = errNoError
					}
				}
			}
			errs <- err
		}()
	}
	for i := 0; i < workers; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

var errNoError = Errorf(Pos{}, "bad input parsed without error")
