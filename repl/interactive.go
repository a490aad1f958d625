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
	prompt := &promptState{warn: sh.opts.Err} // how background output reaches the screen
	if f, err := openInput(inFd); err == nil {
		t.keys = startKeyPump(f, prompt.lineEnd)
		defer t.keys.Close()
		cfg.Stdin = t.keys
	}
	rl, err := newLineEditor(cfg, prompt)
	if err != nil {
		return fmt.Errorf("open terminal: %w", err)
	}
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

// newLineEditor opens readline with cfg and an input filter that tells
// prompt about each key that may end the line (see promptState.keySeen),
// and lets Ctrl-C with a completion list open close the list and cancel
// the line at once (readline alone would only close the list).
func newLineEditor(cfg *readline.Config, prompt *promptState) (*readline.Instance, error) {
	var current atomic.Pointer[readline.Instance] // set once readline runs
	cfg.FuncFilterInputRune = func(r rune) (rune, bool) {
		rl := current.Load()
		if rl == nil {
			return r, true
		}
		switch r {
		case readline.CharInterrupt:
			if rl.Operation.IsInCompleteMode() {
				rl.Operation.ExitCompleteMode(true)
				rl.Refresh() // erase the list below the line
			}
			waitStopped(rl.Terminal)
			prompt.keySeen(false)
		case readline.CharEnter, readline.CharCtrlJ:
			// Enter picks a candidate in a completion list; else the line ends.
			ends := !rl.Operation.IsInCompleteSelectMode()
			if !ends {
				waitStopped(rl.Terminal)
			}
			prompt.keySeen(ends)
		case readline.CharDelete:
			waitStopped(rl.Terminal)
			prompt.keySeen(false) // ends the input (EOF) on an empty line only
		}
		return r, true
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return nil, err
	}
	current.Store(rl)
	return rl, nil
}

// maxStopWaits bounds waitStopped: readline marks that it stopped reading
// a few instructions after handing over the key, unless a pending kick
// has it read again at once.
const maxStopWaits = 1000

// waitStopped waits until readline's terminal reader has marked that it
// stopped reading after the key the input filter is handling, before the
// filter clears the key's mark for a key that does not end the line. The
// reader hands the key over and only then marks it: cleared earlier, the
// mark would let a notice writer see readline still reading and print
// through it just as it stops, at the cursor after the input. Readline
// reads again once the filter has returned and the key is handled.
func waitStopped(t *readline.Terminal) {
	for i := 0; i < maxStopWaits && t.IsReading(); i++ {
		runtime.Gosched()
	}
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
	// ended: a key that may end the line went to readline and its input
	// filter has not seen it yet. Readline stops reading the terminal on
	// such a key, and while it does not read, its writer prints at the
	// cursor, right after the input, instead of above the prompt.
	ended   bool
	pending []heldNotice // written while held, in order
	size    int          // bytes in pending
	dropped int          // bytes dropped beyond maxHeldNotices
	warn    io.Writer    // where the dropped bytes are reported (stderr)
}

// heldNotice is background output kept while a view holds the screen or a
// line ends, with the two ways to print it: directly, or through readline
// (above the prompt).
type heldNotice struct {
	direct, through io.Writer
	b               []byte
}

// maxHeldNotices bounds what is kept while a view holds the screen.
const maxHeldNotices = 1 << 20

// enter marks the shell at its prompt (about to read a line).
func (p *promptState) enter() {
	p.mu.Lock()
	p.at, p.submitting, p.ended = true, false, false
	p.mu.Unlock()
}

// lineEnd marks a key that may end the line handed to readline (the key
// pump calls it).
func (p *promptState) lineEnd() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
}

// keySeen is called by readline's input filter for a key that may end the
// line, ends saying whether it does (Enter outside a completion list).
// When it does not, readline reads the terminal again or returns from
// Readline shortly, and notices wait for either.
func (p *promptState) keySeen(ends bool) {
	p.mu.Lock()
	p.ended = false
	if ends {
		p.submitting = true
	}
	p.mu.Unlock()
}

// leave marks the shell away from its prompt and prints the notices kept
// since the line was entered.
func (p *promptState) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at, p.submitting, p.ended = false, false, false
	if !p.held {
		p.flush(false)
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
	p.flush(false)
	p.held = false
}

// flush writes the kept notices, in order, through readline or directly,
// and forgets them.
func (p *promptState) flush(through bool) {
	for _, n := range p.pending {
		if through {
			n.through.Write(n.b)
		} else {
			n.direct.Write(n.b)
		}
	}
	p.pending, p.size, p.dropped = nil, 0, 0
}

// keep adds b, written to direct or through while it cannot be printed,
// dropping the oldest output beyond maxHeldNotices: the latest lines (a job
// that failed, say) matter most.
func (p *promptState) keep(direct, through io.Writer, b []byte) {
	if len(b) > maxHeldNotices {
		p.dropped += len(b) - maxHeldNotices
		b = b[len(b)-maxHeldNotices:]
	}
	p.pending = append(p.pending, heldNotice{direct: direct, through: through, b: bytes.Clone(b)})
	p.size += len(b)
	for p.size > maxHeldNotices {
		p.dropped += len(p.pending[0].b)
		p.size -= len(p.pending[0].b)
		p.pending = p.pending[1:]
	}
}

// noticeWriter writes what background jobs print. Away from the prompt it
// writes to the terminal directly. At the prompt it writes through
// readline, which erases the prompt line, prints, and draws the prompt and
// the input again, but only while readline reads the terminal; otherwise
// readline's writer prints at the cursor, right after the input. Readline
// reads from just after drawing the prompt until it gets a key that may
// end the line, so the write waits for it to read, and a notice written
// after the line was entered waits for leave. A waiting write does not
// hold the lock, which the key pump and readline's input filter need to
// tell it about those keys.
type noticeWriter struct {
	rl      *readline.Instance
	through io.Writer // rl.Stdout() or rl.Stderr()
	direct  io.Writer // the terminal itself, used away from the prompt
	prompt  *promptState
}

// maxNoticeWaits bounds how often a notice write yields while it waits for
// readline to read the terminal; past it the notice is kept and printed
// with the next one or when the line ends. The wait lasts microseconds:
// readline draws the prompt or handles the key and reads again.
const maxNoticeWaits = 100000

func (w noticeWriter) Write(b []byte) (int, error) {
	p := w.prompt
	for waits := 0; ; waits++ {
		p.mu.Lock()
		switch {
		case p.held || p.submitting:
			p.keep(w.direct, w.through, b) // printed away from the prompt
		case !p.at:
			n, err := w.direct.Write(b)
			p.mu.Unlock()
			return n, err
		case !p.ended && w.rl.Terminal.IsReading():
			// Readline cannot stop reading while the lock is held: the
			// key that would stop it waits in the key pump for the lock.
			p.flush(true) // notices kept past maxNoticeWaits go first
			n, err := w.through.Write(b)
			p.mu.Unlock()
			return n, err
		case waits >= maxNoticeWaits:
			p.keep(w.direct, w.through, b)
		default:
			p.mu.Unlock()
			runtime.Gosched()
			continue
		}
		p.mu.Unlock()
		return len(b), nil
	}
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
