package repl

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
// error, what print sinks wrote (when kept apart) and the exit status.
func transcript(stdout, stderr, sinks string, failed bool) string {
	status := "ok"
	if failed {
		status = "error"
	}
	t := "-- stdout --\n" + normalize(stdout) + "-- stderr --\n" + normalize(stderr)
	if sinks != "" {
		t += "-- print sinks --\n" + sinks
	}
	return t + "-- status --\n" + status + "\n"
}

// syncBuffer is a buffer that jobs' print sinks may write to concurrently.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
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
			// Print sinks write from their jobs' goroutines: their output
			// is kept apart so that the transcript does not depend on timing.
			var out, errOut bytes.Buffer
			var sinks syncBuffer
			sess := session.New(connector.Env{Stdout: &sinks, Stderr: &sinks})
			sh := New(sess, Options{Out: &out, Err: &errOut})
			runErr := sh.RunScript(context.Background(), bytes.NewReader(src))
			sh.Close()
			checkGolden(t, name, transcript(out.String(), errOut.String(), sinks.String(), runErr != nil))
		})
	}
}
