package repl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
)

// TestShellGoesOnAfterBadSet runs statements one by one as the interactive
// shell does: a misspelled key and a bad value are reported with line:col
// and stored nowhere, and the next statements still run.
func TestShellGoesOnAfterBadSet(t *testing.T) {
	var out, errOut bytes.Buffer
	sess := session.New(connector.Env{Stdout: &out, Stderr: &out})
	sh := New(sess, Options{Out: &out, Err: &errOut})
	t.Cleanup(sh.Close)
	ctx := context.Background()
	stmts := []string{
		"SET 'execution.checkpointing.intervall' = '1 s';",
		"SET 'parallelism.default' = 'two';",
		"SET 'table.exec.source.cdc-events-duplicate' = 'true';",
		"SET 'parallelism.default' = '3';",
	}
	var errs []error
	for _, s := range stmts {
		errs = append(errs, sh.runStatement(ctx, located{text: s, src: s, line: 1, col: 1}))
	}
	if errs[0] == nil || errs[1] == nil || errs[2] != nil || errs[3] != nil {
		t.Fatalf("errors %v: want the first two statements to fail and the others to succeed", errs)
	}
	for _, want := range []string{
		"[ERROR] line 1:1: SET: unknown key 'execution.checkpointing.intervall' (did you mean 'execution.checkpointing.interval'?)",
		"[ERROR] line 1:1: SET 'parallelism.default' = 'two': expected a whole number from 1 to 128",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("errors lack %q:\n%s", want, errOut.String())
		}
	}
	if want := "[WARNING] 'table.exec.source.cdc-events-duplicate' is a Flink option that Weir does not use; it is ignored\n"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	if _, ok := sess.Config["execution.checkpointing.intervall"]; ok || sess.Config["parallelism.default"] != "3" {
		t.Fatalf("config after the statements: %v", sess.Config)
	}
}
