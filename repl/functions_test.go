package repl

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
)

// TestShowFunctionsTable: the shell shows SHOW FUNCTIONS as a table with
// a row per function (a golden file would change with every new scalar
// function; the full list is checked by session's TestShowFunctions).
func TestShowFunctionsTable(t *testing.T) {
	var out, errOut bytes.Buffer
	sess := session.New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	sh := New(sess, Options{Out: &out, Err: &errOut})
	err := sh.RunScript(context.Background(), strings.NewReader("SHOW FUNCTIONS;\n"))
	sh.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		`\| function name +\| kind +\| forms +\|`,
		`\| COUNT +\| aggregate \| COUNT\(\*\), COUNT\(x\), COUNT\(DISTINCT x\) +\|`,
		`\| UPPER +\| scalar +\| +\|`,
		`\n\d+ rows in set`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("output does not match %s:\n%s", want, got)
		}
	}
}
