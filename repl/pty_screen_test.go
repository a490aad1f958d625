package repl

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyShell is the weir shell running on a pseudo-terminal of rows x cols.
type ptyShell struct {
	t          *testing.T
	scr        *screen
	tty        *os.File
	rows, cols int
	exited     chan error
}

func startPTYShell(t *testing.T, rows, cols int) *ptyShell {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the weir binary")
	}
	bin := buildWeir(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyShell{t: t, scr: readScreen(tty), tty: tty, rows: rows, cols: cols, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		tty.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *ptyShell) typeIn(s string) {
	p.t.Helper()
	if _, err := p.tty.Write([]byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

// run types each statement and waits for its [INFO] line and the next
// prompt, from screen offset at on; it returns the offset after them.
func (p *ptyShell) run(at int, statements ...string) int {
	p.t.Helper()
	for _, st := range statements {
		p.typeIn(st + "\r")
		at = p.scr.waitFor(p.t, at, "[INFO]")
		at = p.scr.waitFor(p.t, at, Prompt)
	}
	return at
}

// quit leaves the shell with Ctrl-D and waits for it to exit.
func (p *ptyShell) quit() {
	p.t.Helper()
	p.typeIn("\x04")
	select {
	case err := <-p.exited:
		if err != nil {
			p.t.Fatalf("weir exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		p.t.Fatalf("weir did not exit on Ctrl-D; screen:\n%s", p.scr.text())
	}
}

// seen returns what the user sees: the scrollback, then the screen.
func (p *ptyShell) seen() []string {
	v := newVT(p.rows, p.cols)
	v.write([]byte(p.scr.text()))
	return v.lines()
}

// TestLiveTableLeavesNoCopies runs a query whose live table is taller than
// the terminal for many redraws, stops it, and reads the terminal as a
// user would, scrollback included: the table is there once, the final one,
// with every row.
func TestLiveTableLeavesNoCopies(t *testing.T) {
	for _, size := range [][2]int{{30, 100}, {6, 80}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) { liveTableNoCopies(t, size[0], size[1]) })
	}
}

func liveTableNoCopies(t *testing.T, height, width int) {
	p := startPTYShell(t, height, width)
	at := p.scr.waitFor(t, 0, Prompt)
	p.typeIn("CREATE TABLE endless (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5000');\r")
	at = p.scr.waitFor(t, at, "Execute statement succeeded.")
	at = p.scr.waitFor(t, at, Prompt)
	p.typeIn("SELECT n % 91 AS k, COUNT(*) AS c FROM endless GROUP BY n % 91;\r")
	for range 10 { // ten redraws at least
		at = p.scr.waitFor(t, at, "updates/s")
	}
	p.typeIn("\x03")
	at = p.scr.waitFor(t, at, "stopped)")
	p.scr.waitFor(t, at, Prompt)
	lines := p.seen()
	header := regexp.MustCompile(`^\|\s+k \|\s+c \|$`)
	row := regexp.MustCompile(`^\|\s+-?\d+ \|\s+\d+ \|$`)
	border := regexp.MustCompile(`^\+-+\+-+\+$`)
	headers, rows, borders := 0, 0, 0
	for _, l := range lines {
		switch {
		case header.MatchString(l):
			headers++
		case row.MatchString(l):
			rows++
		case border.MatchString(l):
			borders++
		}
	}
	if headers != 1 || rows != 181 || borders != 3 {
		t.Fatalf("the terminal shows %d table headers, %d rows and %d borders, want the final table once: 1 header, "+
			"181 rows (k in -90..90), 3 borders; scrollback and screen:\n%s", headers, rows, borders, strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), "181 rows in set (") {
		t.Fatalf("no summary line:\n%s", strings.Join(lines, "\n"))
	}
	p.quit()
}

// TestBackgroundOutputAbovePrompt runs a background INSERT into a print
// sink while the user types at the prompt: each printed row appears on a
// line of its own above the prompt, which is drawn again below it with
// what was typed so far.
func TestBackgroundOutputAbovePrompt(t *testing.T) {
	p := startPTYShell(t, 40, 100)
	at := p.scr.waitFor(t, 0, Prompt)
	at = p.run(at,
		"SET 'parallelism.default' = '1';",
		"CREATE TABLE slow (n BIGINT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '6', 'rows-per-second' = '4');",
		"CREATE TABLE p (n BIGINT) WITH ('connector' = 'print');",
		"INSERT INTO p SELECT n * 100 FROM slow;")
	p.typeIn("SHOW")
	at = p.scr.waitFor(t, at, "+I[600]")
	// The bounded job then ends, and its notice is printed above the
	// prompt too: wait for it, so the screen is not read between the
	// notice and the prompt drawn again below it.
	at = p.scr.waitFor(t, at, ") finished.")
	at = p.scr.waitFor(t, at, "SHOW") // the prompt and the input drawn again
	lines := p.seen()
	printed := 0
	for _, l := range lines {
		if strings.Contains(l, "+I[") {
			printed++
			if !regexp.MustCompile(`^\+I\[\d+\]$`).MatchString(l) {
				t.Fatalf("a printed row shares its line: %q; terminal:\n%s", l, strings.Join(lines, "\n"))
			}
		}
	}
	if printed != 6 {
		t.Fatalf("%d printed rows on the terminal, want 6:\n%s", printed, strings.Join(lines, "\n"))
	}
	if last := lines[len(lines)-1]; last != Prompt+"SHOW" {
		t.Fatalf("last line %q, want the prompt with the input %q; terminal:\n%s", last, Prompt+"SHOW", strings.Join(lines, "\n"))
	}
	p.typeIn(" TABLES;\r")
	at = p.scr.waitFor(t, at, "2 rows in set")
	p.scr.waitFor(t, at, Prompt)
	p.quit()
}

// TestCtrlCClosesCompletionList opens a completion list with Tab and
// presses Ctrl-C once: the list goes and the line is cancelled, so the
// next statement runs alone.
func TestCtrlCClosesCompletionList(t *testing.T) {
	p := startPTYShell(t, 40, 100)
	at := p.scr.waitFor(t, 0, Prompt)
	p.typeIn("CREATE TABLE orders (order_id BIGINT, order_total INT) WITH ('connector' = 'datagen');\r")
	at = p.scr.waitFor(t, at, "Execute statement succeeded.")
	at = p.scr.waitFor(t, at, Prompt)
	p.typeIn("SELECT ord\t\t") // two candidates: the second Tab lists them
	at = p.scr.waitFor(t, at, "order_total")
	p.typeIn("\x03")
	at = p.scr.waitFor(t, at, Prompt)
	p.typeIn("SHOW TABLES;\r")
	at = p.scr.waitFor(t, at, "1 row in set")
	p.scr.waitFor(t, at, Prompt)
	lines := p.seen()
	for _, l := range lines {
		if strings.Contains(l, "order_id") && strings.Contains(l, "order_total") && !strings.Contains(l, "CREATE") {
			t.Fatalf("the completion list is still on the screen: %q\n%s", l, strings.Join(lines, "\n"))
		}
		if strings.Contains(l, "[ERROR]") {
			t.Fatalf("the cancelled line ran with the next one: %q\n%s", l, strings.Join(lines, "\n"))
		}
	}
	p.quit()
}

// TestBackgroundOutputDuringLiveTable runs a background INSERT into a print
// sink while a table-mode query holds the screen: what the job prints while
// the table is shown is not drawn over and lost with the alternate screen,
// but printed when the query ends.
func TestBackgroundOutputDuringLiveTable(t *testing.T) {
	p := startPTYShell(t, 30, 100)
	at := p.scr.waitFor(t, 0, Prompt)
	at = p.run(at,
		"SET 'parallelism.default' = '1';",
		"CREATE TABLE slow (n BIGINT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '8', 'rows-per-second' = '8');",
		"CREATE TABLE p (n BIGINT) WITH ('connector' = 'print');",
		"CREATE TABLE endless (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');",
		"INSERT INTO p SELECT n * 100 FROM slow;")
	p.typeIn("SELECT n % 3 AS k, COUNT(*) AS c FROM endless GROUP BY n % 3;\r")
	submitted := at
	for range 15 { // 1.5 s of redraws: the job prints its 8 rows meanwhile
		at = p.scr.waitFor(t, at, "updates/s")
	}
	p.typeIn("\x03")
	at = p.scr.waitFor(t, at, "stopped)") // held rows print before the final table
	p.scr.waitFor(t, at, Prompt)
	// On a loaded machine the job may still run: its notice comes after
	// its last row, held or not.
	p.scr.waitFor(t, submitted, ") finished.")
	lines := p.seen()
	printed := 0
	for _, l := range lines {
		if regexp.MustCompile(`^\+I\[\d+00\]$`).MatchString(l) {
			printed++
		}
	}
	if printed != 8 {
		t.Fatalf("%d of the job's 8 printed rows are on the terminal:\n%s", printed, strings.Join(lines, "\n"))
	}
	p.quit()
}
