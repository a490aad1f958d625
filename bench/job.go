package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/session"
	"github.com/weir-sql/weir/udf"
)

// jobSpec is one run of a SQL script through the session, the planner and
// the runtime, in process.
type jobSpec struct {
	name     string        // job name: checkpoints go to <dir>/<name>
	script   string        // SET, CREATE TABLE and one INSERT
	interval time.Duration // checkpoint interval; 0 for off
	// everyRows, if > 0, takes a checkpoint each time the sources have
	// read everyRows more rows, instead of by the clock (interval is then
	// only what turns checkpointing on).
	everyRows int64
	dir       string        // checkpoint folder (state.checkpoints.dir)
	restore   bool          // restore the job's latest checkpoint
	duration  time.Duration // how long to run
	// stopAtFirstRow stops the job once the first row reached a bench sink.
	stopAtFirstRow bool
	progress       io.Writer // rows/s once a second; nil for none
	label          string    // workload name in progress lines
	// init is a script of SET and DDL run before script (weir run -i).
	init string
	// functions are the Go functions CREATE FUNCTION can bind.
	functions *udf.Registry
	// heapProfile, if set, is where in-use heap profiles go while the
	// run goes on (Config.HeapProfile).
	heapProfile string
}

// jobRun is what a run measured.
type jobRun struct {
	rows        int64         // rows read by the sources while measuring
	elapsed     time.Duration // from start to stop
	cpu         time.Duration // process CPU time from start to stop
	checkpoints []time.Duration
	alignments  []time.Duration
	syncs       []time.Duration
	aborted     int
	keys        int64 // keys in the last completed checkpoint
	peakGo      uint64
	peakRSS     uint64
	peakGoMark  uint64 // the peaks over the first memoryMark of a longer run
	peakRSSMark uint64
	peakGoLast  uint64 // the peaks over the last memoryMark of a run of twice that or more
	peakRSSLast uint64
	firstRow    time.Duration // from the call to the first row at a bench sink
	latency     *histogram
}

// runJob plans and runs spec and returns its measurements.
func runJob(ctx context.Context, spec jobSpec) (*jobRun, error) {
	mem := startMemSampler(20 * time.Millisecond)
	col := &collector{clock: clock{base: time.Now()}}
	run, err := runJobWith(ctx, spec, col)
	peaks := mem.finish()
	if err != nil {
		return nil, err
	}
	run.peakGo, run.peakRSS, run.peakGoMark, run.peakRSSMark = peaks.goB, peaks.rss, peaks.goMark, peaks.rssMark
	run.peakGoLast, run.peakRSSLast = peaks.goLast, peaks.rssLast
	return run, nil
}

func runJobWith(ctx context.Context, spec jobSpec, col *collector) (*jobRun, error) {
	s := session.New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	s.Functions = spec.functions
	col.register(s.Connectors)
	// The session builds the job as `weir run` would; only the
	// checkpoint settings of the spec are added to the script's.
	s.Config[session.KeyCheckpointDir] = spec.dir
	s.Config[session.KeyCheckpointTimeout] = "1 min"
	if spec.interval > 0 {
		interval := spec.interval
		if spec.everyRows > 0 {
			interval = 1000 * time.Hour // never due: checkpointByRows triggers them
		}
		s.Config[session.KeyCheckpointInterval] = fmt.Sprintf("%d ms", interval.Milliseconds())
	}
	ropts := session.RunOptions{JobName: spec.name, Quiet: true}
	if spec.restore {
		ropts.Restore = session.RestoreLatest
	}
	if spec.init != "" {
		if err := s.InitScript(spec.init); err != nil {
			return nil, fmt.Errorf("%s: init: %w", spec.label, err)
		}
	}
	plan, query, err := s.PlanScript(spec.script, ropts)
	if err == nil && plan == nil {
		err = fmt.Errorf("the script has no INSERT")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.label, err)
	}
	ck, err := s.CheckpointOptions(plan, query, ropts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.label, err)
	}
	if spec.restore && (ck == nil || ck.Restore == nil) {
		return nil, fmt.Errorf("%s: no checkpoint to restore in %s", spec.label, spec.dir)
	}
	run := &jobRun{latency: &col.latencies}
	opts := jobOptions(s, ck)
	var mu sync.Mutex
	if ck != nil {
		ck.Report = func(r exec.CheckpointReport) {
			mu.Lock()
			defer mu.Unlock()
			if !r.Completed {
				run.aborted++
				return
			}
			run.checkpoints = append(run.checkpoints, r.Duration)
			run.alignments = append(run.alignments, r.Alignment)
			run.syncs = append(run.syncs, r.Sync)
			run.keys = r.Keys
		}
	}
	start, cpu0 := time.Now(), cputime.Process()
	job, err := exec.Start(ctx, plan.Graph, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: start: %w", spec.label, err)
	}
	byRows := make(chan error, 1)
	if spec.everyRows > 0 && ck != nil {
		go func() { byRows <- checkpointByRows(ctx, job, spec.everyRows) }()
	} else {
		byRows <- nil
	}
	stopped, profErr := watch(ctx, job, spec, col, start)
	err = job.Wait()
	if rowsErr := <-byRows; err == nil && rowsErr != nil {
		err = rowsErr
	}
	run.rows, run.elapsed, run.cpu = stopped.rows, stopped.at.Sub(start), stopped.cpu-cpu0
	if first := col.firstRow.Load(); first > 0 {
		run.firstRow = time.Duration(first)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.label, err)
	}
	if profErr != nil {
		return nil, fmt.Errorf("%s: %w", spec.label, profErr)
	}
	mu.Lock()
	defer mu.Unlock()
	return run, nil
}

// checkpointByRows takes a checkpoint of job each time its sources have read
// every more rows, so that two builds compared on one input take the same
// checkpoints whatever their speed (by the clock, the faster build takes
// fewer). It polls the row count every 2 ms and returns when the job ends.
func checkpointByRows(ctx context.Context, job *exec.Job, every int64) error {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	next := every
	for {
		select {
		case <-job.Done():
			return nil
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		m := job.Metrics()
		if m.SourcesFinished || m.RowsRead < next {
			continue
		}
		if _, err := job.Checkpoint(ctx); err != nil {
			select {
			case <-job.Done():
				return nil // the job ended while it was pending
			default:
			}
			if job.Metrics().SourcesFinished {
				return nil // the input ended first: no checkpoint to take
			}
			return fmt.Errorf("checkpoint at %d rows: %w", m.RowsRead, err)
		}
		for next <= m.RowsRead {
			next += every
		}
	}
}

// stopPoint is where the measurement ended.
type stopPoint struct {
	rows int64
	at   time.Time
	cpu  time.Duration
}

// watch reports progress once a second and stops the job after the
// duration (or at the first sink row). When ctx is cancelled (Ctrl-C,
// SIGTERM) it cancels the job at once, without draining: a benchmark run
// cut short measures nothing, and Stop alone would not end a job whose
// sources have finished while its operators still work. It returns when
// the job is stopped or cancelled, with the error of writing a heap
// profile (spec.heapProfile), if any.
func watch(ctx context.Context, job *exec.Job, spec jobSpec, col *collector, start time.Time) (stopPoint, error) {
	deadline := time.NewTimer(spec.duration)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var poll, mark <-chan time.Time
	if spec.stopAtFirstRow {
		p := time.NewTicker(time.Millisecond)
		defer p.Stop()
		poll = p.C
	}
	var profErr error
	if spec.heapProfile != "" && spec.duration > memoryMark {
		m := time.NewTimer(memoryMark)
		defer m.Stop()
		mark = m.C
	}
	var last progress
	last.at = start
	stop := func() stopPoint {
		sp := stopPoint{rows: job.Metrics().RowsRead, at: time.Now(), cpu: cputime.Process()}
		if spec.heapProfile != "" && profErr == nil {
			profErr = writeHeapProfile(spec.heapProfile)
		}
		job.Stop()
		return sp
	}
	for {
		select {
		case <-job.Done():
			return stopPoint{rows: job.Metrics().RowsRead, at: time.Now(), cpu: cputime.Process()}, profErr
		case <-ctx.Done():
			sp := stopPoint{rows: job.Metrics().RowsRead, at: time.Now(), cpu: cputime.Process()}
			job.Cancel()
			return sp, profErr
		case <-deadline.C:
			return stop(), profErr
		case <-poll:
			if col.firstRow.Load() > 0 {
				return stop(), profErr
			}
		case <-mark:
			profErr = writeHeapProfile(spec.heapProfile + ".30s")
		case now := <-tick.C:
			cur := takeProgress(job.Metrics(), now)
			if spec.progress != nil {
				fmt.Fprintf(spec.progress, "  %s %4.0fs  %s\n", spec.label, now.Sub(start).Seconds(), cur.line(last))
			}
			last = cur
		}
	}
}

// writeHeapProfile writes the in-use heap profile (as of the last garbage
// collection) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// progress is a sample of a job's counters for the progress lines.
type progress struct {
	at                  time.Time
	read, in, out, sunk int64
	queued              int64
	sourcesDone         bool
}

func takeProgress(m exec.Metrics, now time.Time) progress {
	p := progress{at: now, read: m.RowsRead, sunk: m.RowsWritten, queued: m.Queued, sourcesDone: m.SourcesFinished}
	for _, v := range m.Vertices {
		p.in += v.RowsIn
		p.out += v.RowsOut
	}
	return p
}

// line renders the rates since prev: the sources' rows/s while they read;
// once they have finished, what the operators downstream still do (rows
// received and emitted, rows written by the sinks, batches queued between
// tasks), so that a job busy after its input is told from a stuck one.
func (p progress) line(prev progress) string {
	secs := max(p.at.Sub(prev.at).Seconds(), 1e-9)
	rate := func(cur, old int64) string { return formatRate(float64(cur-old) / secs) }
	if !p.sourcesDone {
		return rate(p.read, prev.read) + " rows/s"
	}
	return fmt.Sprintf("input done (%d rows read); operators %s rows/s in, %s rows/s out; sinks %s rows/s; %d batches queued",
		p.read, rate(p.in, prev.in), rate(p.out, prev.out), rate(p.sunk, prev.sunk), p.queued)
}

// jobOptions are the runtime options of a benchmark job: the script's
// mini-batch, watermark interval, source idle timeout and state TTL, as
// weir run takes them, and the checkpoint options.
func jobOptions(s *session.Session, ck *exec.CheckpointOptions) exec.Options {
	return s.JobOptions(exec.Options{Checkpoint: ck})
}
