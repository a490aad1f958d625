package repl

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

var (
	elapsedRe = regexp.MustCompile(`\(\d+\.\d\d seconds`)
	jobIDRe   = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
)

// normalize replaces what changes from run to run: elapsed times and job ids.
func normalize(s string) string {
	s = elapsedRe.ReplaceAllString(s, "(N.NN seconds")
	return jobIDRe.ReplaceAllStringFunc(s, func(id string) string {
		if id == "a1b2c3d4" || id == "ffffffff" { // ids written in the scripts
			return id
		}
		return "<job-id>"
	})
}

// transcript is what the golden files hold: standard output, standard
// error and the exit status of a run.
func transcript(stdout, stderr string, failed bool) string {
	status := "ok"
	if failed {
		status = "error"
	}
	return "-- stdout --\n" + normalize(stdout) + "-- stderr --\n" + normalize(stderr) + "-- status --\n" + status + "\n"
}

// scriptCases are the golden scripts: testdata/script/*.sql and the
// example meant for `weir -f`.
func scriptCases(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("testdata/script/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"example_shell_session": "../examples/shell_session.sql"}
	for _, f := range files {
		cases[strings.TrimSuffix(filepath.Base(f), ".sql")] = f
	}
	return cases
}

func goldenPath(name string) string { return filepath.Join("testdata", "script", name+".golden") }

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := goldenPath(name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: output differs from %s\n--- got ---\n%s--- want ---\n%s", name, path, got, want)
	}
}

// TestScriptGolden runs each script through Shell.RunScript, as `weir -f`
// and piped input do, and compares the transcript with its golden file.
func TestScriptGolden(t *testing.T) {
	for name, path := range scriptCases(t) {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			sess := session.New(connector.Env{Stdout: &out, Stderr: &errOut})
			sh := New(sess, Options{Out: &out, Err: &errOut})
			runErr := sh.RunScript(context.Background(), bytes.NewReader(src))
			sh.Close()
			checkGolden(t, name, transcript(out.String(), errOut.String(), runErr != nil))
		})
	}
}
