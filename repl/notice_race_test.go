package repl

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chzyer/readline"
)

// TestNoticesWhileLinesEnd runs the shell's line editor (readline with the
// key pump, the input filter and the notice writer, in process over a pipe)
// while a background writer prints notices without pause and lines are
// typed and entered: every notice ends up on a line of its own, above the
// prompt or after the entered line, none after the typed input on its line
// (a notice written just as Enter reached readline once did), none lost or
// doubled, and every line reaches Readline whole.
func TestNoticesWhileLinesEnd(t *testing.T) {
	noticesWhileTyping(t, 500, func(want string) string { return want + "\r" })
}

// TestNoticesAroundDelete is TestNoticesWhileLinesEnd with a key that stops
// readline reading the terminal without ending the line in each line: a
// Ctrl-D that deletes a character (readline reads again once it has handled
// it). A notice written as readline stops must not land after the input.
func TestNoticesAroundDelete(t *testing.T) {
	noticesWhileTyping(t, 500, func(want string) string { return want + "x\x1b[D\x04\r" })
}

// noticesWhileTyping runs TestNoticesWhileLinesEnd's check with each line
// "SELECT i;" typed as keys(line).
func noticesWhileTyping(t *testing.T, lines int, keys func(line string) string) {
	t.Helper()
	in, typist, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer typist.Close()
	prompt := &promptState{}
	pump := startKeyPump(in, prompt.lineEnd)
	out := &lockedBuffer{}
	cfg := &readline.Config{
		Prompt:                 Prompt,
		Stdin:                  pump,
		Stdout:                 out,
		Stderr:                 out,
		DisableAutoSaveHistory: true,
		FuncGetWidth:           func() int { return 100 },
		FuncIsTerminal:         func() bool { return true },
		FuncMakeRaw:            func() error { return nil },
		FuncExitRaw:            func() error { return nil },
		FuncOnWidthChanged:     func(func()) {},
		ForceUseInteractive:    true,
	}
	rl, err := newLineEditor(cfg, prompt)
	if err != nil {
		t.Fatal(err)
	}
	w := noticeWriter{rl: rl, through: rl.Stdout(), direct: out, prompt: prompt}

	got := make(chan string)
	readErr := make(chan error, 1)
	go func() { // the shell's loop: Readline between enter and leave
		defer close(got)
		for range lines {
			prompt.enter()
			line, err := rl.Readline()
			prompt.leave()
			if err != nil {
				readErr <- err
				return
			}
			got <- line
		}
	}()
	stop := make(chan struct{})
	written := make(chan int)
	go func() { // a background job printing rows
		n := 0
		for {
			select {
			case <-stop:
				written <- n
				return
			default:
			}
			n++
			fmt.Fprintf(w, "+I[%d]\n", n)
		}
	}()
	for i := range lines {
		want := fmt.Sprintf("SELECT %d;", i)
		if _, err := typist.Write([]byte(keys(want))); err != nil {
			t.Fatal(err)
		}
		line, ok := <-got
		if !ok {
			t.Fatalf("Readline failed: %v", <-readErr)
		}
		if line != want {
			t.Fatalf("Readline returned %q, want %q", line, want)
		}
	}
	close(stop)
	n := <-written
	pump.Close()
	rl.Close()

	screen := newVT(40, 100)
	// The terminal's output processing turns each LF into CR LF (ONLCR).
	screen.write([]byte(strings.ReplaceAll(out.String(), "\n", "\r\n")))
	seen := map[int]int{}
	notice := regexp.MustCompile(`^\+I\[(\d+)\]$`)
	all := screen.lines()
	for _, l := range all {
		if !strings.Contains(l, "+I[") {
			continue
		}
		m := notice.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("a notice shares its line: %q (%d notices, %d lines)", l, n, lines)
		}
		var k int
		fmt.Sscan(m[1], &k)
		seen[k]++
	}
	for k := 1; k <= n; k++ {
		if seen[k] != 1 {
			t.Fatalf("notice %d is on the terminal %d times, want once (%d notices)", k, seen[k], n)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct notices on the terminal, %d written", len(seen), n)
	}
	entered := 0
	for _, l := range all {
		if strings.HasPrefix(l, Prompt+"SELECT ") {
			entered++
		}
	}
	if entered < lines {
		t.Fatalf("%d entered lines on the terminal, want %d at least", entered, lines)
	}
	t.Logf("%d notices around %d lines", n, lines)
}

// TestLineEndKey: the keys after which readline stops reading the terminal
// are found where they are, escape sequences other than Delete are not.
func TestLineEndKey(t *testing.T) {
	for _, c := range []struct {
		in       string
		at, size int
	}{
		{"", -1, 0},
		{"SELECT 1;", -1, 0},
		{"SELECT 1;\r", 9, 1},
		{"\rSELECT", 0, 1},
		{"a\nb\r", 1, 1},
		{"ab\x03", 2, 1},
		{"\x04", 0, 1},
		{"ab\x1b[3~c", 2, 4},
		{"\x1b[A\x1b[D\x1b[3", -1, 0}, // arrows; a Delete cut short
		{"\x1b[A\r", 3, 1},
	} {
		at, size := lineEndKey([]byte(c.in))
		if at != c.at || size != c.size {
			t.Errorf("lineEndKey(%q) = %d, %d; want %d, %d", c.in, at, size, c.at, c.size)
		}
	}
}
