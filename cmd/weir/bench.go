package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/weir-sql/weir/bench"
	"github.com/weir-sql/weir/connector"
)

const benchUsage = "usage: weir bench [--duration D] [--runs N] [--workloads W1,W2,...] [--json] [--dir DIR] [--cpuprofile FILE] [--memprofile FILE] [--heapprofile FILE]"

// runBench runs the benchmark suite: progress on stderr, the results table
// (or JSON) on stdout.
func runBench(args []string, env connector.Env) int {
	if len(args) > 0 && args[0] == "nexmark" {
		return runBenchNexmark(args[1:], env)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	duration := fs.Duration("duration", 0, "how long each workload runs (default 10s)")
	runs := fs.Int("runs", 1, "runs of each workload; the figures are the median")
	workloads := fs.String("workloads", "", "comma-separated `LIST` of workloads to run ("+strings.Join(bench.Workloads(), ", ")+"); all by default")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	dir := fs.String("dir", "", "scratch folder `DIR` for checkpoints (default: a temporary folder)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE`")
	memProfile := fs.String("memprofile", "", "write a heap profile at the end to `FILE`")
	heapProfile := fs.String("heapprofile", "", "write in-use heap profiles while each run goes on: `FILE`.30s at 30 s into a longer run, FILE just before it stops")
	rest, code, done := parseArgs(fs, args, benchUsage+"\n       weir bench nexmark --help (the Nexmark queries)\n\nRuns the benchmark workloads (README, Benchmarks): progress on stderr,\nthe results table (or JSON) on stdout.", env.Stdout, env.Stderr)
	if done {
		return code
	}
	if len(rest) != 0 {
		fmt.Fprintln(env.Stderr, benchUsage)
		return 2
	}
	cfg := bench.Config{Duration: *duration, Runs: *runs, Dir: *dir, Progress: env.Stderr, HeapProfile: *heapProfile}
	if *workloads != "" {
		cfg.Workloads = strings.Split(*workloads, ",")
	}
	if *heapProfile != "" {
		// One sample per 64 KiB allocated rather than 512 KiB: the
		// profiles name what holds a few MiB without sampling noise.
		runtime.MemProfileRate = 64 << 10
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(env.Stderr, "weir: cpu profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := stopOnSignal()
	defer stop()
	results, err := bench.Run(ctx, cfg)
	stopped := err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled)
	if err != nil && !stopped {
		fmt.Fprintf(env.Stderr, "weir: bench: %v\n", err)
		return 1
	}
	if *memProfile != "" {
		if err := writeHeapProfile(*memProfile); err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		err = bench.WriteJSON(env.Stdout, results)
	} else {
		err = bench.WriteTable(env.Stdout, results)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: %v\n", err)
		return 1
	}
	if stopped {
		// A requested stop, not a failure: the workloads that finished
		// are printed.
		fmt.Fprintf(env.Stderr, "weir: bench: stopped (%d of the workloads finished)\n", len(results))
	}
	return 0
}

// stopOnSignal returns a context cancelled by the first SIGINT or SIGTERM,
// on which the benchmark cancels its running job without draining it.
// From then on the signals have their default action again, so that a
// second one ends the process at once. The returned function releases the
// signals and waits for the goroutine that watches them.
func stopOnSignal() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-sigs:
			signal.Stop(sigs)
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-exited
		signal.Stop(sigs)
		cancel()
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("memory profile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("memory profile: %w", err)
	}
	return f.Close()
}

const benchNexmarkUsage = "usage: weir bench nexmark [--queries q0,q5,...] [--events N] [--runs N] [--json] [--tables flat|row] [--checkpoint-every N] [--examples DIR] [--dir DIR]"

// runBenchNexmark runs the Nexmark queries of the example folder (README,
// Nexmark): progress on stderr, the table (or JSON) on stdout.
func runBenchNexmark(args []string, env connector.Env) int {
	fs := flag.NewFlagSet("bench nexmark", flag.ContinueOnError)
	queries := fs.String("queries", "", "comma-separated `LIST` of queries (q0,q5,...); all of the folder by default")
	events := fs.Int64("events", 10_000_000, "events per query run")
	runs := fs.Int("runs", 1, "runs of each query; the figures are the median run's")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	examples := fs.String("examples", "examples/nexmark", "the folder `DIR` of ddl.sql and q*.sql")
	dir := fs.String("dir", "", "scratch folder `DIR` for checkpoints (default: a temporary folder)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE`")
	every := fs.Int64("checkpoint-every", 0, "take a checkpoint every `N` events read instead of every 10 s (A/B runs of builds of different speed then take the same checkpoints)")
	tables := fs.String("tables", "flat", "`FORM` of the tables: flat (ddl.sql) or row (the reference's ddl_gen.sql and ddl_views.sql)")
	rest, code, done := parseArgs(fs, args, benchNexmarkUsage+"\n\nRuns each Nexmark query from its example file (ddl.sql with events.num set,\nblackhole sinks) at parallelism 2, a checkpoint every 10 s, the generator\nunthrottled; prints events/s, events/s per core (CPU time), checkpoint p99,\npeak memory and published per-core figures.", env.Stdout, env.Stderr)
	if done {
		return code
	}
	if len(rest) != 0 || (*tables != "flat" && *tables != "row") || *every < 0 {
		fmt.Fprintln(env.Stderr, benchNexmarkUsage)
		return 2
	}
	cfg := bench.NexmarkConfig{Dir: *examples, Events: *events, Runs: *runs, Scratch: *dir,
		Functions: functions(), Progress: env.Stderr, ROW: *tables == "row", CheckpointEvery: *every}
	if *queries != "" {
		cfg.Queries = strings.Split(*queries, ",")
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(env.Stderr, "weir: cpu profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := stopOnSignal()
	defer stop()
	results, runErr := bench.RunNexmark(ctx, cfg)
	if runErr != nil && len(results) == 0 && ctx.Err() == nil {
		fmt.Fprintf(env.Stderr, "weir: bench nexmark: %v\n", runErr)
		return 1
	}
	// Stopped part way (Ctrl-C): the queries that finished are printed.
	var err error
	if *asJSON {
		err = bench.WriteNexmarkJSON(env.Stdout, results)
	} else {
		err = bench.WriteNexmarkTable(env.Stdout, results)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: %v\n", err)
		return 1
	}
	if runErr != nil && ctx.Err() != nil && errors.Is(runErr, context.Canceled) {
		// Ctrl-C or SIGTERM: a requested stop, not a failure.
		fmt.Fprintf(env.Stderr, "weir: bench nexmark: stopped (%d of the queries finished)\n", len(results))
		return 0
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "weir: bench nexmark: %v\n", runErr)
		return 1
	}
	return 0
}
