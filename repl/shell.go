// Package repl is Weir's interactive SQL shell: line editing and history
// (readline), multi-line statements, tab completion, every statement of the
// file language, queries shown live as their results change, and background
// INSERT jobs. The same shell runs files and piped input without a terminal.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/session"
)

// Result modes of 'sql-client.execution.result-mode', as in Flink's SQL client.
const (
	KeyResultMode = session.KeyResultMode
	ModeTable     = "table"
	ModeChangelog = "changelog"
	ModeTableau   = "tableau"
)

// ErrQuit is returned by a statement that ends the shell (QUIT or EXIT).
var ErrQuit = errors.New("quit")

// Options configure a Shell.
type Options struct {
	// Out receives results, Err receives errors and messages.
	Out, Err io.Writer
	// HistoryFile is where the interactive shell keeps its history; empty
	// means no history.
	HistoryFile string
	// Exec tunes the jobs the shell starts.
	Exec exec.Options
	// LastCheckpoint, if set, describes the last completed checkpoint of a
	// running query for the footer of the live table ("" if none yet).
	LastCheckpoint func(job *exec.Job) string
}

// Shell executes statements for a user, one at a time, against a session.
type Shell struct {
	sess *session.Session
	jobs *session.Jobs
	opts Options
	term *terminal // nil without a terminal
	// setOpen: BEGIN STATEMENT SET was run; the INSERTs since are in
	// setInserts, run as one job at END.
	setOpen    bool
	setInserts []*parser.Insert
}

// New returns a shell over sess. Close it to stop its background jobs.
func New(sess *session.Session, opts Options) *Shell {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Err == nil {
		opts.Err = os.Stderr
	}
	sh := &Shell{sess: sess, jobs: session.NewJobs(), opts: opts}
	if sess.Warn == nil {
		sess.Warn = func(_ parser.Pos, msg string) { fmt.Fprintf(sh.opts.Out, "[WARNING] %s\n", msg) }
	}
	return sh
}

// Close stops the background jobs that are still running and waits for them.
func (sh *Shell) Close() {
	if n := sh.jobs.Running(); n > 0 {
		fmt.Fprintf(sh.opts.Err, "[INFO] Stopping %d running job(s).\n", n)
	}
	sh.jobs.Close()
}

// RunScript runs the statements read from r without a terminal, as
// `weir -f FILE` and piped input do: no prompts, query results in tableau
// mode, and the first failing statement ends the run with its error (which
// has already been printed). After the last statement it waits for the
// INSERT jobs it started to finish; cancelling ctx stops the running query
// and those jobs cleanly and returns ctx's error.
func (sh *Shell) RunScript(ctx context.Context, r io.Reader) error {
	in := newLineReader(r)
	var sp splitter
	for {
		line, err := in.next()
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read input: %w", err)
		}
		eof := errors.Is(err, io.EOF)
		if !eof || line != "" {
			for _, st := range sp.add(line) {
				if err := sh.runStatement(ctx, st); err != nil {
					if errors.Is(err, ErrQuit) {
						return sh.finishScript(ctx)
					}
					return err
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
		if eof {
			break
		}
	}
	if sp.pending() {
		err := fmt.Errorf("incomplete statement at the end of the input (missing ';'): %s", firstLine(sp.rest()))
		sh.printError(err)
		return err
	}
	return sh.finishScript(ctx)
}

// finishScript waits for the script's background jobs to end, or stops
// them when ctx is cancelled.
func (sh *Shell) finishScript(ctx context.Context) error {
	if sh.jobs.Running() == 0 {
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sh.jobs.Wait()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		sh.jobs.Close()
		<-done
		return ctx.Err()
	}
	for _, j := range sh.jobs.List() {
		if j.State == session.JobFailed {
			err := fmt.Errorf("job %s (%s) failed: %w", j.ID, j.Name, j.Err)
			sh.printError(err)
			return err
		}
	}
	return nil
}

// printError shows err as the shell does: "[ERROR] " and the message (a SQL
// error renders its line and a caret).
func (sh *Shell) printError(err error) {
	fmt.Fprintf(sh.opts.Err, "[ERROR] %v\n", err)
}

func (sh *Shell) info(format string, args ...any) {
	fmt.Fprintf(sh.opts.Out, "[INFO] "+format+"\n", args...)
}

// resultMode returns the result mode in effect: always tableau without a
// terminal.
func (sh *Shell) resultMode() string {
	if sh.term == nil {
		return ModeTableau
	}
	if m := strings.ToLower(strings.TrimSpace(sh.sess.Config[KeyResultMode])); m != "" {
		return m
	}
	return ModeTable
}

// width returns the width results are fitted to: the terminal's, or, for a
// script or piped input, no limit (cutting values would lose data that a
// script's reader wants).
func (sh *Shell) width() int {
	if sh.term == nil {
		return unlimitedWidth
	}
	return sh.term.width()
}

// unlimitedWidth is the width of output that goes to no terminal.
const unlimitedWidth = 1 << 20

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
