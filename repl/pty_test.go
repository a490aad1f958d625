package repl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// buildWeir builds the weir command into a temporary folder.
func buildWeir(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weir")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/weir-sql/weir/cmd/weir")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// screen collects what the shell writes to its terminal.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{} // signalled when output arrives or ends
	done bool
}

func readScreen(r io.Reader) *screen {
	s := &screen{more: make(chan struct{}, 1)}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			if err != nil {
				s.done = true
			}
			s.mu.Unlock()
			select {
			case s.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// waitFor waits until the output after offset from contains want and
// returns the offset just past it. It fails the test at the deadline.
func (s *screen) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		text, done := s.buf.String(), s.done
		s.mu.Unlock()
		if i := strings.Index(text[from:], want); i >= 0 {
			return from + i + len(want)
		}
		if done {
			t.Fatalf("terminal closed before %q appeared; screen:\n%s", want, text[from:])
		}
		select {
		case <-s.more:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %q; screen since then:\n%s", want, text[from:])
		}
	}
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

var ansiRe = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// TestShellOnPseudoTerminal drives the real weir binary on a pty: a
// multi-line CREATE TABLE, a grouped query read off the screen, an unbounded
// query stopped with Ctrl-C, history recall with the up arrow, Ctrl-D.
func TestShellOnPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weir binary")
	}
	bin := buildWeir(t)
	home := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "HOME="+home, "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	}()
	scr := readScreen(tty)
	typeIn := func(s string) {
		t.Helper()
		if _, err := tty.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}

	at := scr.waitFor(t, 0, Prompt)
	typeIn("SET 'parallelism.default' = '2';\r")
	at = scr.waitFor(t, at, "Session property has been set.")
	at = scr.waitFor(t, at, Prompt)

	// A multi-line CREATE TABLE: continuation prompts until the ';'.
	for _, line := range []string{
		"CREATE TABLE nums (",
		"  n BIGINT",
		") WITH (",
		"  'connector' = 'datagen', 'fields.n.kind' = 'sequence',",
		"  'fields.n.start' = '1', 'fields.n.end' = '100'",
		");",
	} {
		typeIn(line + "\r")
		if !strings.HasSuffix(line, ";") {
			at = scr.waitFor(t, at, ContinuationPrompt)
		}
	}
	at = scr.waitFor(t, at, "Execute statement succeeded.")
	at = scr.waitFor(t, at, Prompt)

	// A grouped query over bounded input: the final table, then the count.
	typeIn("SELECT n % 3 AS r, COUNT(*) AS c, SUM(n) AS s\r")
	at = scr.waitFor(t, at, ContinuationPrompt)
	typeIn("FROM nums GROUP BY n % 3;\r")
	end := scr.waitFor(t, at, "3 rows in set (")
	final := ansiRe.ReplaceAllString(scr.text()[at:end], "")
	got := map[string]string{}
	rowRe := regexp.MustCompile(`(?m)^\|\s+(\d+) \|\s+(\d+) \|\s+(\d+) \|\r?$`)
	for _, m := range rowRe.FindAllStringSubmatch(final[strings.LastIndex(final, "| r |"):], -1) {
		got[m[1]] = m[2] + "/" + m[3]
	}
	// The batch answer: n in 1..100 by n % 3.
	want := map[string]string{"0": "33/1683", "1": "34/1717", "2": "33/1650"}
	if len(got) != len(want) {
		t.Fatalf("final table rows %v, want %v; screen:\n%s", got, want, final)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("row %s = %s, want %s; screen:\n%s", k, got[k], v, final)
		}
	}
	at = scr.waitFor(t, end, Prompt)

	// An unbounded query runs until Ctrl-C, which brings the prompt back.
	typeIn("CREATE TABLE endless (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');\r")
	at = scr.waitFor(t, at, "Execute statement succeeded.")
	at = scr.waitFor(t, at, Prompt)
	typeIn("SELECT n % 2 AS p, COUNT(*) AS c FROM endless GROUP BY n % 2;\r")
	at = scr.waitFor(t, at, "updates/s") // the live table's footer
	typeIn("\x03")
	at = scr.waitFor(t, at, "stopped)")
	at = scr.waitFor(t, at, Prompt)

	// The same with 'q', in changelog mode.
	typeIn("SET 'sql-client.execution.result-mode' = 'changelog';\r")
	at = scr.waitFor(t, at, Prompt)
	typeIn("SELECT n FROM endless;\r")
	at = scr.waitFor(t, at, "| +I |")
	typeIn("q")
	at = scr.waitFor(t, at, "stopped)")
	at = scr.waitFor(t, at, Prompt)

	// Ctrl-C while typing drops the input, not the shell.
	typeIn("SELECT oops\r")
	at = scr.waitFor(t, at, ContinuationPrompt)
	typeIn("\x03")
	at = scr.waitFor(t, at, Prompt)

	// Errors show line:col and a caret, and the shell goes on.
	typeIn("SELECT nope FROM nums;\r")
	at = scr.waitFor(t, at, "unknown column 'nope'")
	at = scr.waitFor(t, at, "^")
	at = scr.waitFor(t, at, Prompt)

	// The up arrow recalls the last statement, Enter runs it again.
	typeIn("SHOW TABLES;\r")
	at = scr.waitFor(t, at, "2 rows in set")
	at = scr.waitFor(t, at, Prompt)
	typeIn("\x1b[A")
	at = scr.waitFor(t, at, "SHOW TABLES;")
	typeIn("\r")
	at = scr.waitFor(t, at, "2 rows in set")
	at = scr.waitFor(t, at, Prompt)

	// Tab completes a table name.
	typeIn("DESCRIBE end\t")
	at = scr.waitFor(t, at, "less")
	typeIn(";\r")
	at = scr.waitFor(t, at, "1 row in set")
	scr.waitFor(t, at, Prompt)

	// Ctrl-D leaves; the history file holds the statements.
	typeIn("\x04")
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("weir exited with %v; screen:\n%s", err, scr.text())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("weir did not exit on Ctrl-D; screen:\n%s", scr.text())
	}
	hist, err := os.ReadFile(filepath.Join(home, ".weir_history"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"CREATE TABLE nums ( n BIGINT ) WITH ( 'connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '100' );",
		"SELECT n % 3 AS r, COUNT(*) AS c, SUM(n) AS s FROM nums GROUP BY n % 3;",
		"DESCRIBE endless;",
	} {
		if !strings.Contains(string(hist), want+"\n") {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
}

// TestCommandScriptAndPipe runs the weir binary with -f and with piped
// input and checks both against the golden transcript of the script.
func TestCommandScriptAndPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weir binary")
	}
	bin := buildWeir(t)
	for _, name := range []string{"basic", "unknown_column"} {
		path := filepath.Join("testdata", "script", name+".sql")
		want, err := os.ReadFile(goldenPath(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"-f", "pipe"} {
			t.Run(name+"/"+how, func(t *testing.T) {
				cmd := exec.Command(bin)
				if how == "-f" {
					cmd.Args = append(cmd.Args, "-f", path)
				} else {
					f, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					cmd.Stdin = f
				}
				cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				err := cmd.Run()
				var exitErr *exec.ExitError
				if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
					t.Fatalf("run: %v\n%s", err, errOut.String())
				}
				if got := transcript(out.String(), errOut.String(), "", err != nil); got != string(want) {
					t.Errorf("got\n%s\nwant\n%s", got, want)
				}
			})
		}
	}
}
