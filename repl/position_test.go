package repl

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
)

// positionCases are scripts with one error each, at the token marked by
// the first occurrence of mark: the error must name its line and column
// counted from the start of the script and show that line of the script.
var positionCases = []struct {
	name, script, mark, msg string
}{
	{"syntax error on a later line of a statement", "SHOW TABLES;\nCREATE TABLE t (\n  n BIGINT,\n  m BIGINT,,\n) WITH ('connector' = 'datagen');\n",
		",\n) WITH", `unexpected ","`},
	{"syntax error on the first line, after another statement", "CREATE TABLE t (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n\nSHOW TABLES;  SELECT k k2 k3 FROM t;\n",
		"k3", `unexpected "k3"`},
	{"syntax error deep in a file", "-- one\n-- two\n\nSHOW TABLES;\n\n\nSELECT\n  1 +\n  FROM t;\n",
		"FROM t", `unexpected "FROM"`},
	{"unknown column", "CREATE TABLE t (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\nSHOW TABLES; SELECT k,\n  kk FROM t;\n",
		"kk", "unknown column 'kk'"},
}

// wantPosition returns the "line L:C:" prefix and the caret display for the
// first occurrence of mark in script, computed from the script alone.
func wantPosition(t *testing.T, script, mark string) (string, string) {
	t.Helper()
	off := strings.Index(script, mark)
	if off < 0 {
		t.Fatalf("mark %q not in the script", mark)
	}
	line := strings.Count(script[:off], "\n") + 1
	start := strings.LastIndexByte(script[:off], '\n') + 1
	col := off - start + 1
	text := script[start:]
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	return fmt.Sprintf("line %d:%d: ", line, col), "\n  " + text + "\n  " + strings.Repeat(" ", col-1) + "^"
}

// TestErrorPositionsCountFromScript runs scripts as `weir -f` does: a
// syntax error, like an error of a later stage, names the line and column
// in the script (not in its statement) and shows that line of the script.
func TestErrorPositionsCountFromScript(t *testing.T) {
	for _, c := range positionCases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			sess := session.New(connector.Env{Stdout: &out, Stderr: &errOut})
			sh := New(sess, Options{Out: &out, Err: &errOut})
			err := sh.RunScript(context.Background(), strings.NewReader(c.script))
			sh.Close()
			if err == nil {
				t.Fatalf("no error; stdout:\n%s", out.String())
			}
			pos, caret := wantPosition(t, c.script, c.mark)
			got := errOut.String()
			if !strings.Contains(got, "[ERROR] "+pos) || !strings.Contains(got, c.msg) || !strings.Contains(got, caret) {
				t.Fatalf("stderr:\n%s\nwant %q, %q and the line with its caret:%s", got, pos, c.msg, caret)
			}
		})
	}
}
