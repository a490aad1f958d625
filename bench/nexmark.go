package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weir-sql/weir/udf"
)

// NexmarkConfig says how to run `weir bench nexmark`: each query of the
// Nexmark example folder over a bounded event count, from its example
// file as written (blackhole sinks), at parallelism 2, with a checkpoint
// every 10 s and an unthrottled generator.
type NexmarkConfig struct {
	// Dir is the folder of ddl.sql and q*.sql (examples/nexmark).
	Dir string
	// Queries to run (q0, q5, ...); empty for every q*.sql of Dir.
	Queries []string
	// Events per query run (default 10,000,000).
	Events int64
	// Runs of each query; the figures are those of the median run by
	// events/s (default 1).
	Runs int
	// Functions are the Go functions CREATE FUNCTION can bind (q14's
	// count_char).
	Functions *udf.Registry
	// Scratch is the folder for checkpoints; a temporary folder when
	// empty. What the runs write there is removed at the end.
	Scratch string
	// Progress, if set, receives rows/s once a second while a query runs.
	Progress io.Writer
	// CheckpointEvery, if > 0, takes a checkpoint every CheckpointEvery
	// events read instead of every 10 s, so that builds of different speed
	// take the same checkpoints (A/B comparisons).
	CheckpointEvery int64
	// ROW runs the queries over the reference's table with ROW columns
	// and its views (ddl_gen.sql and ddl_views.sql) instead of ddl.sql.
	ROW bool
}

// NexmarkResult is what one query measured.
type NexmarkResult struct {
	Query  string `json:"query"`
	Events int64  `json:"events"`
	Runs   int    `json:"runs"`
	// EventsPerSec is Events over the wall time from start to the end of
	// the bounded input; EventsPerCoreSec Events over the process's CPU
	// time (all cores) in that time.
	EventsPerSec     float64       `json:"events_per_sec"`
	EventsPerCoreSec float64       `json:"events_per_core_sec"`
	Elapsed          time.Duration `json:"elapsed_ns"`
	CPU              time.Duration `json:"cpu_ns"`
	Checkpoints      int           `json:"checkpoints"`
	CkptP99          time.Duration `json:"checkpoint_p99_ns,omitempty"`
	PeakGo           uint64        `json:"peak_go_bytes"`
	PeakRSS          uint64        `json:"peak_rss_bytes"`
	// Err is why the query did not run (a feature Weir lacks yet).
	Err string `json:"error,omitempty"`
}

// nexmarkSetup goes before ddl.sql in the init script: the benchmark's
// settings (the query files keep their own lines, so errors point at them);
// the mini-batch ones are the reference suite's Flink configuration.
const nexmarkSetup = `SET 'parallelism.default' = '2';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2 s';
SET 'table.exec.mini-batch.size' = '50000';
`

var (
	// outputPath matches the output folders of the queries' own
	// filesystem sinks (q10's), which each run writes to a fresh folder
	// of its own: the sink refuses to write again where a finished run
	// committed its output.
	outputPath      = regexp.MustCompile(`'path' = '/tmp/weir-nexmark/([^']*)'`)
	eventsNumOption = regexp.MustCompile(`'events\.num' = '\d+'`)
	rateOption      = regexp.MustCompile(`'(first|next)-event\.rate' = '\d+'`)
)

// nexmarkDDL returns ddl.sql (row: ddl_gen.sql and ddl_views.sql) with
// events.num set to events and the rates set to the reference suite's
// 10,000,000 events a second (the event times of 10M events span 1 s),
// which the generator does not wait for.
func nexmarkDDL(dir string, events int64, row bool) (string, error) {
	files := []string{"ddl.sql"}
	if row {
		files = []string{"ddl_gen.sql", "ddl_views.sql"}
	}
	var ddl string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", fmt.Errorf("nexmark: %w", err)
		}
		ddl += string(b) + "\n"
	}
	if !eventsNumOption.MatchString(ddl) {
		return "", fmt.Errorf("nexmark: %s has no 'events.num' option to set", filepath.Join(dir, files[0]))
	}
	ddl = eventsNumOption.ReplaceAllString(ddl, fmt.Sprintf("'events.num' = '%d'", events))
	ddl = rateOption.ReplaceAllString(ddl, "'$1-event.rate' = '10000000'")
	return ddl, nil
}

// NexmarkQueries lists the queries of dir (q0, q1, ...), in number order.
func NexmarkQueries(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "q*.sql"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if _, err := strconv.Atoi(name[1:]); err == nil {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return queryNum(out[i]) < queryNum(out[j]) })
	return out, nil
}

func queryNum(q string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(q, "q"))
	return n
}

// RunNexmark runs the Nexmark queries. A query that fails (one that needs
// a feature Weir lacks yet) gets its error in its result, and the others
// still run; an error is returned only for bad configuration or when ctx
// is cancelled.
func RunNexmark(ctx context.Context, cfg NexmarkConfig) ([]NexmarkResult, error) {
	if cfg.Events <= 0 {
		cfg.Events = 10_000_000
	}
	cfg.Runs = max(cfg.Runs, 1)
	all, err := NexmarkQueries(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("nexmark: no q*.sql in %s", cfg.Dir)
	}
	queries := all
	if len(cfg.Queries) > 0 {
		queries = nil
		for _, q := range cfg.Queries {
			q = strings.ToLower(strings.TrimSpace(q))
			if !strings.HasPrefix(q, "q") {
				q = "q" + q
			}
			found := false
			for _, a := range all {
				found = found || a == q
			}
			if !found {
				return nil, fmt.Errorf("nexmark: unknown query %q (%s has %s)", q, cfg.Dir, strings.Join(all, ", "))
			}
			queries = append(queries, q)
		}
	}
	ddl, err := nexmarkDDL(cfg.Dir, cfg.Events, cfg.ROW)
	if err != nil {
		return nil, err
	}
	scratch := cfg.Scratch
	if scratch == "" {
		tmp, err := os.MkdirTemp("", "weir-bench-nexmark-")
		if err != nil {
			return nil, fmt.Errorf("nexmark: %w", err)
		}
		scratch = tmp
		defer os.RemoveAll(tmp)
	} else {
		scratch = filepath.Join(scratch, fmt.Sprintf("weir-bench-nexmark-%d", os.Getpid()))
		defer os.RemoveAll(scratch)
	}
	var out []NexmarkResult
	for _, q := range queries {
		text, err := os.ReadFile(filepath.Join(cfg.Dir, q+".sql"))
		if err != nil {
			return out, fmt.Errorf("nexmark: %w", err)
		}
		var runs []NexmarkResult
		for i := range cfg.Runs {
			if cfg.Progress != nil {
				every := "10 s"
				if cfg.CheckpointEvery > 0 {
					every = fmt.Sprintf("%d events", cfg.CheckpointEvery)
				}
				fmt.Fprintf(cfg.Progress, "%s run %d/%d: %d events, p=2, checkpoint every %s\n", q, i+1, cfg.Runs, cfg.Events, every)
			}
			debug.FreeOSMemory()
			outDir := filepath.Join(scratch, "output", fmt.Sprintf("%s-%d", q, i))
			script := outputPath.ReplaceAllLiteralString(string(text), "'path' = '"+outDir+"'")
			spec := jobSpec{name: "nexmark-" + q, init: nexmarkSetup + ddl, script: script, interval: 10 * time.Second, everyRows: cfg.CheckpointEvery,
				dir: scratch, duration: 24 * time.Hour, progress: cfg.Progress, label: q, functions: cfg.Functions}
			r := NexmarkResult{Query: q, Events: cfg.Events, Runs: 1}
			run, err := runJob(ctx, spec)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			if err != nil {
				r.Err = err.Error()
				runs = append(runs, r)
				break // it fails the same way every time
			}
			r.Elapsed, r.CPU = run.elapsed, run.cpu
			r.EventsPerSec = float64(cfg.Events) / run.elapsed.Seconds()
			r.EventsPerCoreSec = float64(cfg.Events) / max(run.cpu.Seconds(), 1e-9)
			r.Checkpoints = len(run.checkpoints)
			r.CkptP99 = percentile(run.checkpoints, 99)
			r.PeakGo, r.PeakRSS = run.peakGo, run.peakRSS
			runs = append(runs, r)
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i].EventsPerSec < runs[j].EventsPerSec })
		m := runs[len(runs)/2]
		m.Runs = len(runs)
		out = append(out, m)
	}
	return out, nil
}

// nexmarkPublished are published per-core figures (events/s per core) to
// compare with, by query.
var nexmarkPublished = map[string]string{
	"q0": "Flink 155K, RisingWave 118K, Feldera 436K",
	"q5": "Flink 22K, Feldera 412K, Hazelcast Jet 1.4M/vCPU (a sliding window)",
}

// nexmarkTarget is the target for a query on 2 cores.
func nexmarkTarget(q string) float64 {
	switch q {
	case "q0", "q1", "q2", "q10", "q14", "q21", "q22":
		return 4e6
	}
	return 1e6
}

// WriteNexmarkJSON writes the results as a JSON array.
func WriteNexmarkJSON(w io.Writer, results []NexmarkResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// WriteNexmarkTable writes the results as an aligned table, with the
// published per-core figures beside them.
func WriteNexmarkTable(w io.Writer, results []NexmarkResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "query\tevents\tevents/s\tevents/s/core\tckpts\tckpt p99\tpeak Go\tpeak RSS\ttarget (2 cores)\tpublished per core\tnote")
	mem := func(b uint64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	for _, r := range results {
		target := formatRate(nexmarkTarget(r.Query))
		if r.Err != "" {
			msg, _, _ := strings.Cut(r.Err, "\n")
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t-\t-\t-\t%s: not met\t%s\tfails: %s\n", r.Query, r.Events, target, nexmarkPublished[r.Query], msg)
			continue
		}
		met := "met"
		if r.EventsPerSec < nexmarkTarget(r.Query) {
			met = "not met"
		}
		ckpt := dur(r.CkptP99)
		if r.Checkpoints == 0 {
			ckpt = "none"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s: %s\t%s\t\n", r.Query, r.Events, formatRate(r.EventsPerSec),
			formatRate(r.EventsPerCoreSec), r.Checkpoints, ckpt, mem(r.PeakGo), mem(r.PeakRSS), target, met, nexmarkPublished[r.Query])
	}
	return tw.Flush()
}
