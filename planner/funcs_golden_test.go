package planner

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// TestScalarFunctionGolden evaluates the expressions of
// testdata/scalar/funcs.txt over literals and compares each with the answer
// written beside it by hand (from Flink's documentation):
//
//	expression → value :: TYPE     the value ('text' for strings, NULL) and the result type
//	expression → error: text       evaluation fails with an error containing text
//	expression → plan error: L:C text   binding fails at line:column with text
func TestScalarFunctionGolden(t *testing.T) {
	f, err := os.Open("testdata/scalar/funcs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	n := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		src, want, ok := strings.Cut(text, " → ")
		if !ok {
			t.Fatalf("scalar/funcs.txt:%d: no ' → ' in %q", line, text)
		}
		n++
		got := evalGolden(src)
		if strings.HasPrefix(want, "error: ") || strings.HasPrefix(want, "plan error: ") {
			prefix, msg, _ := strings.Cut(want, ": ")
			if !strings.HasPrefix(got, prefix+": ") || !strings.Contains(got, msg) {
				t.Errorf("scalar/funcs.txt:%d: %s\n got: %s\nwant: %s", line, src, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("scalar/funcs.txt:%d: %s\n got: %s\nwant: %s", line, src, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d cases read", n)
	}
}

// evalGolden binds src with no columns in scope and evaluates it.
func evalGolden(src string) string {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return "plan error: " + err.Error()
	}
	b := &exprBinder{sc: &scope{}}
	x, err := b.bind(e)
	if err != nil {
		if pe, ok := err.(*parser.Error); ok {
			return "plan error: " + pe.Error()
		}
		return "plan error: " + err.Error()
	}
	v, err := x.Eval(nil)
	if err != nil {
		return "error: " + err.Error()
	}
	s := v.String()
	switch {
	case v.IsNull():
		s = "NULL"
	case v.Kind() == types.KindVarchar:
		s = "'" + s + "'"
	}
	return s + " :: " + x.Type().String()
}
