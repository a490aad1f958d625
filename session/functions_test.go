package session

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/parser"
)

// TestShowFunctions runs SHOW FUNCTIONS as a query file does and checks
// that it lists, once each and sorted, every aggregate (with its call
// forms) and every scalar function, the expected sets written out here.
func TestShowFunctions(t *testing.T) {
	s := New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	stmts, err := parser.Parse("SHOW FUNCTIONS;")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := s.Exec(stmts[0], &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("line %q: want name, kind and forms", line)
		}
		if _, dup := got[f[0]]; dup {
			t.Errorf("%s listed twice", f[0])
		}
		got[f[0]] = f[1] + " " + f[2]
		names = append(names, f[0])
	}
	want := map[string]string{
		"COUNT": "aggregate COUNT(*), COUNT(x), COUNT(DISTINCT x)",
		"SUM":   "aggregate SUM(numeric), SUM(DISTINCT numeric)",
		"AVG":   "aggregate AVG(numeric), AVG(DISTINCT numeric)",
		"MIN":   "aggregate MIN(x), MIN(DISTINCT x)",
		"MAX":   "aggregate MAX(x), MAX(DISTINCT x)",

		"STDDEV_POP":     "aggregate STDDEV_POP(numeric), STDDEV_POP(DISTINCT numeric)",
		"VAR_SAMP":       "aggregate VAR_SAMP(numeric), VAR_SAMP(DISTINCT numeric)",
		"FIRST_VALUE":    "aggregate FIRST_VALUE(x)",
		"LAST_VALUE":     "aggregate LAST_VALUE(x)",
		"LISTAGG":        "aggregate LISTAGG(string [, separator])",
		"BOOL_AND":       "aggregate BOOL_AND(boolean)",
		"REGEXP_EXTRACT": "scalar REGEXP_EXTRACT(s, regex [, i])",
		"SPLIT_INDEX":    "scalar SPLIT_INDEX(s, sep, i)",
		"POSITION":       "scalar POSITION(x IN s)",
		"JSON_VALUE":     "scalar JSON_VALUE(json, path)",
		"ROUND":          "scalar ROUND(x [, d])",
		"IF":             "scalar IF(cond, a, b)",
		"UUID":           "scalar UUID()",
		"TRIM":           "scalar TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) or TRIM(s)",
		"LTRIM":          "scalar LTRIM(s [, chars])",
		"RTRIM":          "scalar RTRIM(s [, chars])",
	}
	for _, n := range []string{"UPPER", "LOWER", "CHAR_LENGTH", "CHARACTER_LENGTH", "SUBSTRING", "SUBSTR",
		"CONCAT", "ABS", "MOD", "FLOOR", "CEIL", "CEILING", "COALESCE"} {
		want[n] = "scalar "
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: got %q, want %q", n, got[n], w)
		}
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("not sorted: %s before %s", names[i-1], names[i])
		}
	}
}
