// Command weir is Weir's command line: it runs SQL query files, explains
// them, and (with no arguments) opens the interactive shell.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/repl"
	"github.com/weir-sql/weir/session"
)

const usage = `Weir: a streaming SQL engine.

Usage:
  weir                           open the interactive SQL shell (piped input: run it)
  weir -f FILE.sql               run a file through the shell, without prompts
  weir run [--quiet] [--restore latest|PATH] [--allow-non-restored-state]
           [--stop-with-savepoint] [--allow-duplicate-output] [-i INIT.sql] FILE.sql
                                 run a query file (bounded input runs to completion;
                                 unbounded input runs until Ctrl-C or SIGTERM);
                                 --restore latest continues from the job's latest
                                 complete checkpoint (or starts from the beginning
                                 if there is none), --restore PATH from that folder
                                 (a checkpoint or a savepoint); SIGUSR1 writes a
                                 savepoint to state.savepoints.dir while it runs;
                                 a run that would write again output a sink folder
                                 already holds is refused unless
                                 --allow-duplicate-output; -i runs INIT.sql's SET
                                 and DDL statements first (as Flink's SQL client)
  weir explain [-i INIT.sql] FILE.sql
                               print the plan of a query file's INSERT statements
  weir checkpoints list DIR      list the checkpoints in DIR (a job's checkpoint
                                 folder, or state.checkpoints.dir with --job NAME);
                                 given state.checkpoints.dir, list its jobs
  weir checkpoints inspect PATH  show one checkpoint or savepoint (or a job's
                                 latest valid checkpoint, given its folder)
  weir bench [--duration D] [--runs N] [--json]
                                 run the benchmark suite (see README, Benchmarks)
  weir bench nexmark [--queries q0,q5,...] [--events N]
                                 run the Nexmark queries of examples/nexmark
  weir kafka serve [--port N]    run a local Kafka-compatible broker for trying
                                 and testing (in memory; not for production data)
  weir help                      show this help
  weir version                   print the versions of weir, Go and Pebble

Each command's --help lists its flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	env := connector.Env{Stdout: stdout, Stderr: stderr}
	if len(args) == 0 {
		return runShell(args, env)
	}
	switch args[0] {
	case "-f", "--file":
		return runShell(args, env)
	case "run":
		return runFile(args[1:], env)
	case "explain":
		return explainFile(args[1:], env)
	case "checkpoints":
		return checkpoints(args[1:], env)
	case "bench":
		return runBench(args[1:], env)
	case "kafka":
		return kafkaCmd(args[1:], env)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "--version":
		fmt.Fprint(stdout, versionText())
		return 0
	default:
		fmt.Fprintf(stderr, "weir: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

const runUsage = `usage: weir run [flags] FILE.sql

Runs a file of statements: SET, DDL and EXPLAIN in order, then all its
INSERT INTO statements together as one job. Bounded input runs to its end;
unbounded input until Ctrl-C or SIGTERM. SIGUSR1 writes a savepoint.
With -i INIT.sql (or --init), the SET and DDL statements of INIT.sql run
first, as the Flink SQL client's -i does: weir run -i ddl.sql q5.sql.`

func runFile(args []string, env connector.Env) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	quiet := fs.Bool("quiet", false, "do not report progress on stderr")
	restore := fs.String("restore", "", "restore from `latest|PATH`: 'latest' is the job's latest complete checkpoint (or none), PATH a checkpoint or savepoint folder")
	allowNonRestored := fs.Bool("allow-non-restored-state", false, "when restoring, drop state that matches no operator of the query")
	stopWithSavepoint := fs.Bool("stop-with-savepoint", false, "on Ctrl-C or SIGTERM, write a savepoint before stopping")
	allowDup := fs.Bool("allow-duplicate-output", false, "start although a sink's folder holds output committed after the checkpoint the job starts from (those rows are written again)")
	initPath := initFlag(fs)
	path, code, done := parseOneArg(fs, args, runUsage,
		"usage: weir run [flags] FILE.sql (weir run --help lists the flags)", env.Stdout, env.Stderr)
	if done {
		return code
	}
	fault, err := session.ParseFaults(os.Getenv(session.FaultsEnv), os.Getenv(session.FaultLogEnv))
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: %v\n", err)
		return 2
	}
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: %v\n", err)
		return 1
	}
	ropts := session.RunOptions{JobName: session.JobNameFromPath(path), Quiet: *quiet, Restore: *restore,
		AllowNonRestoredState: *allowNonRestored, StopWithSavepoint: *stopWithSavepoint, AllowDuplicateOutput: *allowDup}
	ropts.Exec.Fault = fault
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// SIGUSR1 takes a savepoint while the job runs.
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	savepoints := make(chan struct{})
	ropts.Savepoints = savepoints
	forwardDone, forwardExited := make(chan struct{}), make(chan struct{})
	defer func() {
		close(forwardDone)
		<-forwardExited
	}()
	go func() {
		defer close(forwardExited)
		for {
			select {
			case <-usr1:
				select {
				case savepoints <- struct{}{}:
				case <-forwardDone:
					return
				}
			case <-forwardDone:
				return
			}
		}
	}()
	s := newSession(env)
	if !runInit(s, initPath, env) {
		return 1
	}
	err = s.RunScript(ctx, string(src), ropts)
	if err != nil {
		reportError(env.Stderr, path, err)
		return 1
	}
	return 0
}

func explainFile(args []string, env connector.Env) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	initPath := initFlag(fs)
	path, code, done := parseOneArg(fs, args, "usage: weir explain FILE.sql\n       weir explain -i INIT.sql FILE.sql\n\nPrints the plan of the file's INSERT statements: the logical plan, the\noptimized physical plan and the job graph.",
		"usage: weir explain FILE.sql", env.Stdout, env.Stderr)
	if done {
		return code
	}
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: %v\n", err)
		return 1
	}
	s := newSession(env)
	if !runInit(s, initPath, env) {
		return 1
	}
	if err := s.ExplainScript(string(src), session.RunOptions{JobName: session.JobNameFromPath(path)}); err != nil {
		reportError(env.Stderr, path, err)
		return 1
	}
	return 0
}

// initFiles are the files of -i, in order.
type initFiles []string

// String lists the files.
func (f *initFiles) String() string { return strings.Join(*f, ",") }

// Set adds a file.
func (f *initFiles) Set(v string) error { *f = append(*f, v); return nil }

// initFlag defines -i and its long form --init on fs: files of SET and
// DDL statements to run before the query file, in order (-i may repeat:
// -i ddl_gen.sql -i ddl_views.sql).
func initFlag(fs *flag.FlagSet) *initFiles {
	p := new(initFiles)
	fs.Var(p, "i", "run the SET and DDL statements of `INIT.sql` before the file (may repeat)")
	fs.Var(p, "init", "the same as -i `INIT.sql`")
	return p
}

// runInit runs the init files in s, in order, reporting an error on
// env.Stderr; it returns false on error.
func runInit(s *session.Session, paths *initFiles, env connector.Env) bool {
	for _, path := range *paths {
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: init file: %v\n", err)
			return false
		}
		if err := s.InitScript(string(src)); err != nil {
			reportError(env.Stderr, path, err)
			return false
		}
	}
	return true
}

func reportError(w io.Writer, path string, err error) {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(w, "weir: stopped")
		return
	}
	fmt.Fprintf(w, "weir: %s: %v\n", path, err)
}

// runShell opens the SQL shell on the terminal, or runs it without prompts
// over `-f FILE` or piped standard input (exit code 1 on the first error).
func runShell(args []string, env connector.Env) int {
	fs := flag.NewFlagSet("weir", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // not Go's "Usage of weir:": the line below says it
	file := fs.String("f", "", "run the statements of `FILE` through the shell and exit")
	fs.StringVar(file, "file", "", "the same as -f") // run sends --file here too
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
		}
		fmt.Fprintln(env.Stderr, "usage: weir [-f FILE.sql] (weir --help lists the commands)")
		return 2
	}
	opts := repl.Options{Out: env.Stdout, Err: env.Stderr}
	if home, err := os.UserHomeDir(); err == nil {
		opts.HistoryFile = filepath.Join(home, ".weir_history")
	}
	sh := repl.New(newSession(env), opts)
	defer sh.Close()
	if *file == "" && repl.IsTerminal(int(os.Stdin.Fd())) {
		if err := sh.RunInteractive(context.Background(), int(os.Stdin.Fd()), int(os.Stdout.Fd())); err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
		return 0
	}
	in := io.Reader(os.Stdin)
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sh.RunScript(ctx, in); err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(env.Stderr, "weir: stopped")
		}
		return 1
	}
	return 0
}
