package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/weir-sql/weir/bench"
	"github.com/weir-sql/weir/connector"
)

const benchUsage = "usage: weir bench [--duration D] [--runs N] [--workloads W1,W2,...] [--json] [--dir DIR] [--cpuprofile FILE] [--memprofile FILE]"

// runBench runs the benchmark suite: progress on stderr, the results table
// (or JSON) on stdout.
func runBench(args []string, env connector.Env) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	duration := fs.Duration("duration", 0, "how long each workload runs (default 10s)")
	runs := fs.Int("runs", 1, "runs of each workload; the figures are the median")
	workloads := fs.String("workloads", "", "comma-separated `LIST` of workloads to run ("+strings.Join(bench.Workloads(), ", ")+"); all by default")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	dir := fs.String("dir", "", "scratch folder `DIR` for checkpoints (default: a temporary folder)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE`")
	memProfile := fs.String("memprofile", "", "write a heap profile at the end to `FILE`")
	rest, code, done := parseArgs(fs, args, benchUsage+"\n\nRuns the benchmark workloads (README, Benchmarks): progress on stderr,\nthe results table (or JSON) on stdout.", env.Stdout, env.Stderr)
	if done {
		return code
	}
	if len(rest) != 0 {
		fmt.Fprintln(env.Stderr, benchUsage)
		return 2
	}
	cfg := bench.Config{Duration: *duration, Runs: *runs, Dir: *dir, Progress: env.Stderr}
	if *workloads != "" {
		cfg.Workloads = strings.Split(*workloads, ",")
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := bench.Run(ctx, cfg)
	if err != nil {
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
	return 0
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
