// Package bench is Weir's benchmark suite: workloads written in SQL and run
// in process through the real session, planner and runtime, with a datagen
// source (unthrottled) and a blackhole sink, measuring throughput,
// checkpoint duration and alignment, restore time, end-to-end latency and
// peak memory. `weir bench` runs it; `go test -bench . ./bench` runs the
// same workloads as Go benchmarks. Benchmarks are never run by `go test`
// without -bench.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/weir-sql/weir/internal/cputime"
)

// Config says how to run the suite.
type Config struct {
	// Workloads to run, by name (W1..W5, REF); empty for all.
	Workloads []string
	// Duration of each workload run (default 10 s).
	Duration time.Duration
	// Runs of each workload; the results are the median over runs (default 1).
	Runs int
	// Dir is the scratch folder for checkpoints; a temporary folder when
	// empty. It is removed at the end.
	Dir string
	// Progress, if set, receives rows/s once a second while a workload runs.
	Progress io.Writer
	// HeapProfile, if set, names the in-use heap profiles written while
	// each run goes on: HeapProfile.30s at memoryMark into a longer run,
	// and HeapProfile just before the run stops (each run of a workload
	// overwrites the last one's). With the peaks at 30 s and at the end
	// they show what holds memory that grows.
	HeapProfile string
}

// Result is what one workload measured: the median over its runs of each
// figure. Durations are in nanoseconds in JSON.
type Result struct {
	Workload    string  `json:"workload"`
	Description string  `json:"description"`
	Runs        int     `json:"runs"`
	RowsPerSec  float64 `json:"rows_per_sec"`
	Rows        int64   `json:"rows"`
	// CPUNsPerRow is the process CPU time (all cores) per row: the cost
	// of a row whatever else runs on the machine.
	CPUNsPerRow float64 `json:"cpu_ns_per_row,omitempty"`
	// Checkpoints completed per run, and their duration (trigger to
	// complete) and alignment (longest of any task) percentiles.
	Checkpoints int           `json:"checkpoints,omitempty"`
	CkptP50     time.Duration `json:"checkpoint_p50_ns,omitempty"`
	CkptP99     time.Duration `json:"checkpoint_p99_ns,omitempty"`
	AlignP50    time.Duration `json:"alignment_p50_ns,omitempty"`
	AlignP99    time.Duration `json:"alignment_p99_ns,omitempty"`
	// Sync percentiles: the longest time any task spent on its snapshot
	// before forwarding the barrier (exec.CheckpointReport.Sync).
	SyncP50   time.Duration `json:"sync_p50_ns,omitempty"`
	SyncP99   time.Duration `json:"sync_p99_ns,omitempty"`
	StateKeys int64         `json:"state_keys,omitempty"`
	// PeakGo is the peak memory mapped by the Go runtime (heap, stacks,
	// metadata; not released to the OS); PeakRSS the peak resident set of
	// the process, which includes Pebble's caches and memtables.
	PeakGo  uint64 `json:"peak_go_bytes"`
	PeakRSS uint64 `json:"peak_rss_bytes"`
	// PeakGo30s and PeakRSS30s are the peaks over the first 30 s of a
	// longer run (0 for a shorter one): with PeakGo and PeakRSS they show
	// whether memory keeps growing (W6's criterion: within 10% after 5 min).
	PeakGo30s  uint64 `json:"peak_go_30s_bytes,omitempty"`
	PeakRSS30s uint64 `json:"peak_rss_30s_bytes,omitempty"`
	// PeakGoLast30s and PeakRSSLast30s are the peaks over the last 30 s
	// of a run of a minute or more (0 otherwise): against PeakGo30s and
	// PeakRSS30s they tell memory that still grows from a spike that the
	// whole run's peak took in.
	PeakGoLast30s  uint64 `json:"peak_go_last_30s_bytes,omitempty"`
	PeakRSSLast30s uint64 `json:"peak_rss_last_30s_bytes,omitempty"`
	// Restore (W4): from the call to the first output row after restore.
	Restore time.Duration `json:"restore_ns,omitempty"`
	// Latency (W5): source stamp to sink.
	LatP50  time.Duration `json:"latency_p50_ns,omitempty"`
	LatP99  time.Duration `json:"latency_p99_ns,omitempty"`
	LatP999 time.Duration `json:"latency_p999_ns,omitempty"`
	// Ratio is the throughput as a fraction of the reference (W1 and W3),
	// or W1 over W3 (the checkpointing overhead, on W3's row).
	Ratio float64 `json:"ratio,omitempty"`
	Note  string  `json:"note,omitempty"`
}

// Names of the workloads, in the order they run.
var workloadNames = []string{"REF", "W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W10", "W11", "W12", "W13", "N0"}

// Descriptions of the workloads.
var descriptions = map[string]string{
	"REF": "plain Go: generate, hash, add to a map (1,000 keys, 2 goroutines)",
	"W1":  "SUM GROUP BY 1,000 keys, p=2, checkpoint 1 s",
	"W2":  "SUM GROUP BY 1,000,000 random keys, p=2, checkpoint 1 s",
	"W3":  "W1 with checkpoints off",
	"W4":  "restore a 1,000,000-key checkpoint: call to first row",
	"W5":  "W1 at half its peak rate: source-to-sink latency",
	"W6":  "TUMBLE 1 s COUNT, SUM by 10,000 keys, event time, checkpoint 1 s",
	"W7":  "HOP 10 s / 1 s COUNT, SUM by 10,000 keys, event time, checkpoint 1 s",
	"W8":  "SESSION gap 1 s COUNT, SUM by 100,000 keys, event time, checkpoint 1 s",
	"W9":  "inner join of two streams on 100,000 keys, one with a primary key, p=2, checkpoint 1 s",
	"W10": "interval join within 10 s on 100,000 keys, sources aligned (max drift 1 s), p=2, checkpoint 1 s",
	"W11": "topic -> SUM GROUP BY 1,000 keys -> exactly-once upsert-kafka, JSON, in-process broker, p=2, checkpoint 1 s",
	"N0":  "nexmark bids (the generator alone) into blackhole, p=2",
	"W12": "Top-10 per key (ROW_NUMBER) over 10,000 keys, append-only, p=2, checkpoint 1 s",
	"W13": "keep-last deduplication (proctime) over 1,000,000 keys, p=2, checkpoint 1 s, state.cache.size 256mb",
}

// Workloads returns the names of the workloads, in run order.
func Workloads() []string { return slices.Clone(workloadNames) }

// Run runs the selected workloads and returns their results in run order.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	cfg.Runs = max(cfg.Runs, 1)
	selected := map[string]bool{}
	for _, w := range cfg.Workloads {
		w = strings.ToUpper(strings.TrimSpace(w))
		if !slices.Contains(workloadNames, w) {
			return nil, fmt.Errorf("unknown workload %q (known: %s)", w, strings.Join(workloadNames, ", "))
		}
		selected[w] = true
	}
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "weir-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		dir = tmp
		defer os.RemoveAll(tmp)
	} else {
		dir = filepath.Join(dir, fmt.Sprintf("weir-bench-%d", os.Getpid()))
		defer os.RemoveAll(dir)
	}
	s := &suite{cfg: cfg, dir: dir, results: map[string]*Result{}}
	var out []Result
	for _, name := range workloadNames {
		if len(selected) > 0 && !selected[name] {
			continue
		}
		r, err := s.run(ctx, name)
		if ctx.Err() != nil {
			// Ctrl-C or SIGTERM: the workloads that finished are returned.
			return out, ctx.Err()
		}
		if err != nil {
			return out, err
		}
		s.results[name] = r
		out = append(out, *r)
	}
	s.ratios(out)
	return out, nil
}

// suite runs workloads and keeps what later ones need (W5 needs W1's rate,
// W4 W2's checkpoint).
type suite struct {
	cfg     Config
	dir     string
	results map[string]*Result
	w2Ready bool // a W2 checkpoint is in dir
	// kafkaRuns counts W11's runs, whose topics and ids are their own.
	kafkaRuns int
}

// run runs workload name cfg.Runs times and returns the medians.
func (s *suite) run(ctx context.Context, name string) (*Result, error) {
	var runs []*Result
	for i := range s.cfg.Runs {
		if s.cfg.Progress != nil {
			fmt.Fprintf(s.cfg.Progress, "%s run %d/%d: %s\n", name, i+1, s.cfg.Runs, descriptions[name])
		}
		debug.FreeOSMemory()
		r, err := s.once(ctx, name)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
		if ctx.Err() != nil {
			break
		}
	}
	return medianResult(name, runs), nil
}

func (s *suite) once(ctx context.Context, name string) (*Result, error) {
	d := s.cfg.Duration
	switch name {
	case "REF":
		return s.reference(ctx, d), nil
	case "W1":
		return s.throughput(ctx, name, w1Script, time.Second, d)
	case "W2":
		r, err := s.throughput(ctx, name, w2Script, time.Second, d)
		if err == nil && r.Checkpoints > 0 {
			s.w2Ready = true
		}
		return r, err
	case "W3":
		return s.throughput(ctx, name, w1Script, 0, d)
	case "W4":
		return s.restore(ctx, d)
	case "W5":
		return s.latency(ctx, d)
	case "W6":
		return s.throughput(ctx, name, fmt.Sprintf(w6Script, 9999), time.Second, d)
	case "W7":
		return s.throughput(ctx, name, fmt.Sprintf(w7Script, 9999), time.Second, d)
	case "W8":
		return s.throughput(ctx, name, fmt.Sprintf(w8Script, 99999), time.Second, d)
	case "W9":
		return s.throughput(ctx, name, w9Script, time.Second, d)
	case "W10":
		return s.throughput(ctx, name, w10Script, time.Second, d)
	case "W11":
		return s.kafkaBench(ctx, d)
	case "N0":
		return s.throughput(ctx, name, n0Script, 0, d)
	case "W12":
		return s.throughput(ctx, name, w12Script, time.Second, d)
	case "W13":
		return s.throughput(ctx, name, w13Script, time.Second, d)
	}
	panic("bench: unknown workload " + name)
}

func (s *suite) spec(name, script string, interval, d time.Duration) jobSpec {
	return jobSpec{name: "bench-" + strings.ToLower(name), script: script, interval: interval,
		dir: s.dir, duration: d, progress: s.cfg.Progress, label: name, heapProfile: s.cfg.HeapProfile}
}

func (s *suite) reference(ctx context.Context, d time.Duration) *Result {
	cpu0 := cputime.Process()
	rows, elapsed := runReference(ctx, parallelism, 1000, d)
	return &Result{Workload: "REF", Rows: rows, RowsPerSec: float64(rows) / elapsed.Seconds(),
		CPUNsPerRow: float64(cputime.Process()-cpu0) / float64(max(rows, 1))}
}

func (s *suite) throughput(ctx context.Context, name, script string, interval, d time.Duration) (*Result, error) {
	run, err := runJob(ctx, s.spec(name, script, interval, d))
	if err != nil {
		return nil, err
	}
	return run.result(name), nil
}

// restore restores W2's latest checkpoint (running W2 first if this
// invocation has not) and measures the time to the first output row.
func (s *suite) restore(ctx context.Context, d time.Duration) (*Result, error) {
	if !s.w2Ready {
		prep := s.spec("W2", w2Script, time.Second, max(d, 5*time.Second))
		prep.label = "W4 (writing W2's checkpoint)"
		run, err := runJob(ctx, prep)
		if err != nil {
			return nil, err
		}
		if len(run.checkpoints) == 0 {
			return nil, fmt.Errorf("W4: W2 completed no checkpoint in %s", prep.duration)
		}
		s.w2Ready = true
	}
	spec := s.spec("W2", w4Script, 0, time.Minute)
	spec.label, spec.restore, spec.stopAtFirstRow, spec.progress = "W4", true, true, nil
	run, err := runJob(ctx, spec)
	if err != nil {
		return nil, err
	}
	if run.firstRow == 0 {
		return nil, fmt.Errorf("W4: no row reached the sink after the restore")
	}
	r := run.result("W4")
	r.Restore = run.firstRow
	r.RowsPerSec, r.Rows, r.CPUNsPerRow = 0, 0, 0
	return r, nil
}

// latency runs W1's query at half of W1's measured rate (measuring it first
// if this invocation has not) with stamped rows.
func (s *suite) latency(ctx context.Context, d time.Duration) (*Result, error) {
	w1, ok := s.results["W1"]
	if !ok {
		run, err := runJob(ctx, s.spec("W1", w1Script, time.Second, min(d, 5*time.Second)))
		if err != nil {
			return nil, err
		}
		w1 = run.result("W1")
		s.results["W1"] = w1
	}
	rate := w1.RowsPerSec / 2
	run, err := runJob(ctx, s.spec("W5", fmt.Sprintf(w5Script, rate), time.Second, d))
	if err != nil {
		return nil, err
	}
	r := run.result("W5")
	r.LatP50, r.LatP99, r.LatP999 = run.latency.quantile(0.50), run.latency.quantile(0.99), run.latency.quantile(0.999)
	r.Note = fmt.Sprintf("target rate %s rows/s", formatRate(rate))
	return r, nil
}

// result turns a run's measurements into a Result.
func (r *jobRun) result(name string) *Result {
	res := &Result{
		Workload:    name,
		Rows:        r.rows,
		RowsPerSec:  float64(r.rows) / r.elapsed.Seconds(),
		CPUNsPerRow: float64(r.cpu) / float64(max(r.rows, 1)),
		Checkpoints: len(r.checkpoints),
		CkptP50:     percentile(r.checkpoints, 50),
		CkptP99:     percentile(r.checkpoints, 99),
		AlignP50:    percentile(r.alignments, 50),
		AlignP99:    percentile(r.alignments, 99),
		SyncP50:     percentile(r.syncs, 50),
		SyncP99:     percentile(r.syncs, 99),
		StateKeys:   r.keys,
		PeakGo:      r.peakGo,
		PeakRSS:     r.peakRSS,
		PeakGo30s:   r.peakGoMark,
		PeakRSS30s:  r.peakRSSMark,

		PeakGoLast30s:  r.peakGoLast,
		PeakRSSLast30s: r.peakRSSLast,
	}
	if r.aborted > 0 {
		res.Note = fmt.Sprintf("%d checkpoint(s) aborted", r.aborted)
	}
	return res
}

// ratios fills in the throughput ratios once all results are known.
func (s *suite) ratios(out []Result) {
	ref := s.results["REF"]
	for i := range out {
		r := &out[i]
		switch r.Workload {
		case "W1", "W3":
			if ref != nil && ref.RowsPerSec > 0 {
				r.Ratio = r.RowsPerSec / ref.RowsPerSec
			}
		}
	}
	w1, w3 := s.results["W1"], s.results["W3"]
	if w1 != nil && w3 != nil && w3.RowsPerSec > 0 {
		for i := range out {
			if out[i].Workload == "W1" {
				out[i].Note = strings.TrimSpace(fmt.Sprintf("%s W1/W3 = %.1f%%", out[i].Note, 100*w1.RowsPerSec/w3.RowsPerSec))
			}
		}
	}
}

// medianResult combines runs: each figure is the median over the runs.
func medianResult(name string, runs []*Result) *Result {
	r := *runs[0]
	r.Workload, r.Description, r.Runs = name, descriptions[name], len(runs)
	med := func(f func(*Result) float64) float64 {
		xs := make([]float64, len(runs))
		for i, x := range runs {
			xs[i] = f(x)
		}
		return median(xs)
	}
	medD := func(f func(*Result) time.Duration) time.Duration {
		return time.Duration(med(func(x *Result) float64 { return float64(f(x)) }))
	}
	r.RowsPerSec = med(func(x *Result) float64 { return x.RowsPerSec })
	r.Rows = int64(med(func(x *Result) float64 { return float64(x.Rows) }))
	r.CPUNsPerRow = med(func(x *Result) float64 { return x.CPUNsPerRow })
	r.Checkpoints = int(med(func(x *Result) float64 { return float64(x.Checkpoints) }))
	r.CkptP50 = medD(func(x *Result) time.Duration { return x.CkptP50 })
	r.CkptP99 = medD(func(x *Result) time.Duration { return x.CkptP99 })
	r.AlignP50 = medD(func(x *Result) time.Duration { return x.AlignP50 })
	r.AlignP99 = medD(func(x *Result) time.Duration { return x.AlignP99 })
	r.SyncP50 = medD(func(x *Result) time.Duration { return x.SyncP50 })
	r.SyncP99 = medD(func(x *Result) time.Duration { return x.SyncP99 })
	r.StateKeys = int64(med(func(x *Result) float64 { return float64(x.StateKeys) }))
	r.PeakGo = uint64(med(func(x *Result) float64 { return float64(x.PeakGo) }))
	r.PeakRSS = uint64(med(func(x *Result) float64 { return float64(x.PeakRSS) }))
	r.PeakGo30s = uint64(med(func(x *Result) float64 { return float64(x.PeakGo30s) }))
	r.PeakRSS30s = uint64(med(func(x *Result) float64 { return float64(x.PeakRSS30s) }))
	r.PeakGoLast30s = uint64(med(func(x *Result) float64 { return float64(x.PeakGoLast30s) }))
	r.PeakRSSLast30s = uint64(med(func(x *Result) float64 { return float64(x.PeakRSSLast30s) }))
	r.Restore = medD(func(x *Result) time.Duration { return x.Restore })
	r.LatP50 = medD(func(x *Result) time.Duration { return x.LatP50 })
	r.LatP99 = medD(func(x *Result) time.Duration { return x.LatP99 })
	r.LatP999 = medD(func(x *Result) time.Duration { return x.LatP999 })
	return &r
}
