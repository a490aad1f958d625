package repl

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
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

// TestKeyScan: the bytes on which readline stops reading the terminal are
// found where readline's terminal reader makes them keys: Enter, Ctrl-J,
// Ctrl-C, Ctrl-D, also after ESC, and the ~ of Delete (ESC [ 3 ~); not a
// CR that ends an ESC [ or ESC O sequence (readline swallows it), nor the
// ~ of other sequences. One scan runs over each input, as over the reads
// of a session.
func TestKeyScan(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"SELECT 1;", nil},
		{"SELECT 1;\r", []int{9}},
		{"\rSELECT", []int{0}},
		{"a\nb\r", []int{1, 3}},
		{"ab\x03", []int{2}},
		{"\x04", []int{0}},
		{"ab\x1b[3~c", []int{5}},
		{"\x1b[A\x1b[D\x1b[3", nil}, // arrows; a Delete cut short
		{"\x1b[A\r", []int{3}},
		{"\x1b[\r", nil},                 // ESC [ CR is one key to readline
		{"\x1b[\r\r", []int{3}},          // ... the next CR is Enter
		{"\x1b[1;5\r\r", []int{6}},       // parameters, then a swallowed CR
		{"\x1bO\rx\r", []int{4}},         // SS3 swallows the CR too
		{"\x1b\r", []int{1}},             // ESC CR: readline passes the CR on
		{"\x1b\x1b\x03", []int{2}},       // ESC ESC is still an escape
		{"\x1b[33~\x1b[3;5~\x1b[~", nil}, // other ~ sequences are not Delete
		{"\x1b[3~\x1b[3~", []int{3, 7}},
		{"é\x1bé\r", []int{5}},
	} {
		var s keyScan
		var got []int
		for i := 0; i < len(c.in); i++ {
			if s.step(c.in[i]) {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("keyScan over %q stops at %v; want %v", c.in, got, c.want)
		}
	}
}

// TestPumpHandsStopKeysAlone: Read gives readline what precedes a key it
// stops on, then that byte alone, marking it as it goes, whatever the
// chunks the terminal delivered (a Delete split across two reads is still
// found; an ESC [ CR is not marked).
func TestPumpHandsStopKeysAlone(t *testing.T) {
	marks := 0
	p := &keyPump{chunks: make(chan []byte, 8), quit: make(chan struct{}), lineEnd: func() { marks++ }}
	for _, c := range []string{"SELECT 1;\rab", "\x1b[3", "~x\x1b[", "\r\x03"} {
		p.chunks <- []byte(c)
	}
	close(p.chunks)
	type read struct {
		got   string
		marks int
	}
	want := []read{{"SELECT 1;", 0}, {"\r", 1}, {"ab", 1}, {"\x1b[3", 1}, {"~", 2}, {"x\x1b[", 2}, {"\r", 2}, {"\x03", 3}}
	buf := make([]byte, 64)
	for i, w := range want {
		n, err := p.Read(buf)
		if err != nil || string(buf[:n]) != w.got || marks != w.marks {
			t.Fatalf("read %d: %q, %v, %d marks; want %q, %d marks", i, buf[:n], err, marks, w.got, w.marks)
		}
	}
	if n, err := p.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("read after the input: %d, %v; want io.EOF", n, err)
	}
}
