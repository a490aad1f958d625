package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chzyer/readline"

	"github.com/weir-sql/weir/session"
)

// Prompts of the interactive shell.
const (
	Prompt             = "weir> "
	ContinuationPrompt = "    > "
)

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd int) bool { return readline.IsTerminal(fd) }

// RunInteractive runs the shell on the terminal whose input is inFd and
// output outFd (normally 0 and 1) until Ctrl-D, QUIT or EXIT. Errors in
// statements are printed and the shell goes on; the error returned is a
// failure of the terminal itself. Ctrl-C cancels the input being typed or
// stops the running query; it never leaves the shell.
func (sh *Shell) RunInteractive(ctx context.Context, inFd, outFd int) error {
	t := &terminal{inFd: inFd, outFd: outFd, interrupts: make(chan os.Signal, 1)}
	signal.Notify(t.interrupts, os.Interrupt)
	defer signal.Stop(t.interrupts)

	cfg := &readline.Config{
		Prompt:                 Prompt,
		HistoryFile:            sh.opts.HistoryFile,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           completer{sh: sh},
		InterruptPrompt:        "^C",
		EOFPrompt:              "exit",
		Stdout:                 sh.opts.Out,
		Stderr:                 sh.opts.Err,
		FuncGetWidth:           t.width,
	}
	if f, err := openInput(inFd); err == nil {
		t.keys = startKeyPump(f)
		defer t.keys.Close()
		cfg.Stdin = t.keys
	}
	// Ctrl-C with a completion list open closes the list and cancels the
	// line at once (readline alone would only close the list); Enter tells
	// the notices that the line ends.
	var current atomic.Pointer[readline.Instance] // set once readline runs
	prompt := &promptState{warn: sh.opts.Err}     // how background output reaches the screen
	cfg.FuncFilterInputRune = func(r rune) (rune, bool) {
		rl := current.Load()
		if rl == nil {
			return r, true
		}
		switch {
		case r == readline.CharInterrupt && rl.Operation.IsInCompleteMode():
			rl.Operation.ExitCompleteMode(true)
			rl.Refresh() // erase the list below the line
		case (r == readline.CharEnter || r == readline.CharCtrlJ) && !rl.Operation.IsInCompleteSelectMode():
			prompt.submit() // the line ends: no prompt to draw notices under
		}
		return r, true
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return fmt.Errorf("open terminal: %w", err)
	}
	current.Store(rl)
	sh.term = t
	// What background jobs write (a print sink) goes through readline,
	// which prints it above the prompt and draws the prompt and the input
	// again below it, as database shells show asynchronous notices.
	env := sh.sess.Env
	t.notices = prompt
	sh.sess.Env.Stdout = noticeWriter{rl: rl, through: rl.Stdout(), direct: sh.opts.Out, prompt: prompt}
	sh.sess.Env.Stderr = noticeWriter{rl: rl, through: rl.Stderr(), direct: sh.opts.Err, prompt: prompt}
	defer func() { sh.sess.Env = env }()
	defer func() {
		if t.keys != nil {
			t.keys.Close() // first, so that readline is not left reading
		}
		rl.Close()
		sh.term = nil
	}()
	// A background job that ends by itself says so above the prompt.
	notices := noticeWriter{rl: rl, through: rl.Stderr(), direct: sh.opts.Err, prompt: prompt}
	sh.jobs.SetNotify(func(j session.JobInfo) { fmt.Fprint(notices, jobNotice(j)) })
	defer sh.jobs.SetNotify(nil) // before readline closes

	fmt.Fprintln(sh.opts.Out, "Weir SQL shell. Statements end with ';'. HELP lists them; Ctrl-D leaves.")
	var sp splitter
	for ctx.Err() == nil {
		if sp.pending() {
			rl.SetPrompt(ContinuationPrompt)
		} else {
			rl.SetPrompt(Prompt)
		}
		prompt.enter()
		line, err := rl.Readline()
		prompt.leave()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			sp = splitter{}
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("read input: %w", err)
		}
		if !sp.pending() && isQuit(line) {
			return nil
		}
		stmts := sp.add(line)
		if len(stmts) == 0 {
			continue
		}
		if err := rl.SaveHistory(historyEntry(stmts)); err != nil {
			fmt.Fprintf(sh.opts.Err, "[WARNING] history not saved: %v\n", err)
		}
		for _, st := range stmts {
			if err := sh.runStatement(ctx, st); errors.Is(err, ErrQuit) {
				return nil
			}
		}
		sp.forget()
	}
	return ctx.Err()
}

// historyEntry is the history line of the statements just completed: their
// lines joined into one (whole-line comments dropped), so that the up arrow
// recalls a whole statement.
func historyEntry(stmts []located) string {
	var parts []string
	for _, st := range stmts {
		var lines []string
		for _, l := range strings.Split(st.text, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
				lines = append(lines, l)
			}
		}
		parts = append(parts, strings.Join(lines, " ")+";")
	}
	return strings.Join(parts, " ")
}

// promptState says whether the shell is at its prompt (in Readline) and
// whether a foreground view holds the screen. Its lock orders the writes
// of background jobs with both: a write decides how to print and prints
// under it.
type promptState struct {
	mu   sync.Mutex
	at   bool
	held bool // a live table is on the alternate screen
	// submitting: a line was entered and Readline has not returned it yet
	submitting bool
	pending    []heldNotice // written while held, in order
	size       int          // bytes in pending
	dropped    int          // bytes dropped beyond maxHeldNotices
	warn       io.Writer    // where the dropped bytes are reported (stderr)
}

// heldNotice is background output kept while a view holds the screen.
type heldNotice struct {
	w io.Writer
	b []byte
}

// maxHeldNotices bounds what is kept while a view holds the screen.
const maxHeldNotices = 1 << 20

// enter marks the shell at its prompt (about to read a line).
func (p *promptState) enter() {
	p.mu.Lock()
	p.at, p.submitting = true, false
	p.mu.Unlock()
}

// submit marks the line entered: readline echoes the newline and returns
// it, but would still draw the prompt again under a notice written before
// it returns, so notices wait for leave.
func (p *promptState) submit() {
	p.mu.Lock()
	p.submitting = true
	p.mu.Unlock()
}

// leave marks the shell away from its prompt and prints the notices kept
// since the line was entered.
func (p *promptState) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at, p.submitting = false, false
	if !p.held {
		p.flush()
	}
}

// hold keeps background output from the screen while a view redraws it
// (it would be drawn over and lost with the alternate screen).
func (p *promptState) hold() {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
}

// release prints what was held, in order, and lets output through again.
func (p *promptState) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dropped > 0 && p.warn != nil {
		fmt.Fprintf(p.warn, "[WARNING] %d bytes of background job output came while the table was shown and were dropped; the last %d follow\n", p.dropped, p.size)
	}
	p.flush()
	p.held = false
}

// flush writes the kept notices, in order, and forgets them.
func (p *promptState) flush() {
	for _, n := range p.pending {
		n.w.Write(n.b)
	}
	p.pending, p.size, p.dropped = nil, 0, 0
}

// keep adds b, written to w while held, dropping the oldest output beyond
// maxHeldNotices: the latest lines (a job that failed, say) matter most.
func (p *promptState) keep(w io.Writer, b []byte) {
	if len(b) > maxHeldNotices {
		p.dropped += len(b) - maxHeldNotices
		b = b[len(b)-maxHeldNotices:]
	}
	p.pending = append(p.pending, heldNotice{w: w, b: bytes.Clone(b)})
	p.size += len(b)
	for p.size > maxHeldNotices {
		p.dropped += len(p.pending[0].b)
		p.size -= len(p.pending[0].b)
		p.pending = p.pending[1:]
	}
}

// noticeWriter writes what background jobs print. Away from the prompt it
// writes to the terminal directly: readline's own writer would still draw
// the prompt again for a moment after a line was entered, as its reader
// marks the end of reading only when it loops. At the prompt it writes
// through readline, which erases the prompt line, prints, and draws the
// prompt and the input again; readline does that only once it reads the
// terminal, which it marks right after drawing the prompt, so the write
// waits for that mark.
type noticeWriter struct {
	rl      *readline.Instance
	through io.Writer // rl.Stdout() or rl.Stderr()
	direct  io.Writer // the terminal itself, used away from the prompt
	prompt  *promptState
}

func (w noticeWriter) Write(b []byte) (int, error) {
	w.prompt.mu.Lock()
	defer w.prompt.mu.Unlock()
	if p := w.prompt; p.held || p.submitting {
		p.keep(w.direct, b) // printed away from the prompt
		return len(b), nil
	}
	if !w.prompt.at {
		return w.direct.Write(b)
	}
	// The bound only guards against a readline that never marks it.
	for i := 0; i < 100000 && !w.rl.Terminal.IsReading(); i++ {
		runtime.Gosched()
	}
	return w.through.Write(b)
}

// jobNotice is the line printed when background job j ends by itself: the
// first line of its error if it failed.
func jobNotice(j session.JobInfo) string {
	if j.State == session.JobFailed {
		msg := ""
		if j.Err != nil {
			// The run's error starts "job <name> failed: ", said already.
			msg = strings.TrimPrefix(firstLine(j.Err.Error()), "job "+j.Name+" failed: ")
		}
		return fmt.Sprintf("[ERROR] Job %s (%s) failed: %s\n", j.ID, j.Name, msg)
	}
	return fmt.Sprintf("[INFO] Job %s (%s) finished.\n", j.ID, j.Name)
}
