package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/weir-sql/weir/confval"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/planner"
)

// Defaults of the checkpointing configuration.
const (
	DefaultCheckpointDir     = "weir-checkpoints"
	DefaultCheckpointTimeout = 10 * time.Minute
	DefaultNumRetained       = 1
	DefaultSavepointDir      = "weir-savepoints"
)

// RestoreLatest, as RunOptions.Restore, restores the job's latest complete
// checkpoint, or starts from the beginning when there is none.
const RestoreLatest = "latest"

// checkpointing builds the runtime's checkpoint options from the session's
// configuration for a job, or nil when checkpointing is off and nothing is
// restored. It reports what it restores on stderr.
func (s *Session) checkpointing(plan *planner.Plan, query string, opts RunOptions) (*exec.CheckpointOptions, error) {
	interval, err := s.duration(KeyCheckpointInterval, 0)
	if err != nil {
		return nil, err
	}
	if interval == 0 && opts.Restore == "" && !opts.StopWithSavepoint {
		return nil, nil
	}
	timeout, err := s.duration(KeyCheckpointTimeout, DefaultCheckpointTimeout)
	if err != nil {
		return nil, err
	}
	minPause, err := s.duration(KeyCheckpointMinPause, 0)
	if err != nil {
		return nil, err
	}
	retain := DefaultNumRetained
	if v, ok := s.Config[KeyNumRetained]; ok {
		if retain, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || retain < 1 {
			return nil, fmt.Errorf("SET '%s' = '%s': expected a whole number of at least 1", KeyNumRetained, v)
		}
	}
	var cache int64 // 'auto': sized by the runtime from the memory (exec.CheckpointOptions)
	if v, ok := s.Config[KeyStateCacheSize]; ok && !isAuto(v) {
		if cache, err = confval.MemorySize(v); err != nil {
			return nil, fmt.Errorf("SET '%s': %w", KeyStateCacheSize, err)
		}
	}
	dir := s.Config[KeyCheckpointDir]
	if dir == "" {
		dir = DefaultCheckpointDir
	}
	dir = strings.TrimPrefix(dir, "file://")
	storage, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, plan.Graph.Name)
	if err != nil {
		return nil, err
	}
	c := &exec.CheckpointOptions{
		Interval:        interval,
		Timeout:         timeout,
		MinPause:        minPause,
		Storage:         storage,
		Retain:          retain,
		StateCacheBytes: cache,
		WorkDir:         filepath.Join(storage.Dir(), "_work"),
		Query:           query,

		AllowNonRestoredState: opts.AllowNonRestoredState,
	}
	if !opts.Quiet {
		c.Report = func(r exec.CheckpointReport) { s.reportCheckpoint(r) }
	}
	return c, nil
}

// CheckpointOptions returns the runtime's checkpoint options for a planned
// job as the session's configuration and opts say (the same that RunScript
// uses), with opts.Restore resolved to a checkpoint; nil when checkpointing
// is off and nothing is restored.
func (s *Session) CheckpointOptions(plan *planner.Plan, query string, opts RunOptions) (*exec.CheckpointOptions, error) {
	c, err := s.checkpointing(plan, query, opts)
	if err != nil || c == nil {
		return c, err
	}
	if c.Restore, err = s.findRestore(c, opts.Restore, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// findRestore resolves RunOptions.Restore ("latest" or a folder) to a
// checkpoint; nil means start from the beginning. "latest" skips the
// checkpoints in bad (whose restore failed in this run of the job).
func (s *Session) findRestore(c *exec.CheckpointOptions, restore string, bad map[int64]error) (*checkpoint.Checkpoint, error) {
	switch restore {
	case "":
		return nil, nil
	case RestoreLatest:
		latest, skipped, err := c.Storage.LatestExcept(bad)
		for _, sk := range skipped {
			fmt.Fprintf(s.Env.Stderr, "weir: skipping checkpoint %d: %v\n", sk.ID, sk.Reason)
		}
		if errors.Is(err, checkpoint.ErrNoCheckpoint) {
			fmt.Fprintf(s.Env.Stderr, "weir: no complete checkpoint in %s: starting from the beginning\n", c.Storage.Dir())
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("find latest checkpoint: %w", err)
		}
		fmt.Fprintf(s.Env.Stderr, "weir: restoring checkpoint %d from %s\n", latest.Meta.CheckpointID, latest.Path)
		return latest, nil
	default:
		cp, err := checkpoint.Load(checkpoint.OSFS{}, restore)
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", restore, err)
		}
		fmt.Fprintf(s.Env.Stderr, "weir: restoring %s %d from %s\n", cp.Meta.Kind, cp.Meta.CheckpointID, cp.Path)
		return cp, nil
	}
}

func (s *Session) reportCheckpoint(r exec.CheckpointReport) {
	if !r.Completed {
		fmt.Fprintf(s.Env.Stderr, "weir: checkpoint %d aborted after %s: %s\n", r.ID, r.Duration.Round(time.Millisecond), r.Reason)
		return
	}
	final := ""
	switch {
	case r.Final:
		final = "final, the job's state at its end; "
	case r.Savepoint:
		final = "for a savepoint; "
	}
	finished := ""
	switch {
	case r.Finished == 1:
		finished = ", 1 finished operator: no state to keep"
	case r.Finished > 1:
		finished = fmt.Sprintf(", %d finished operators: no state to keep", r.Finished)
	}
	fmt.Fprintf(s.Env.Stderr, "weir: checkpoint %d complete in %s (%sstate %s, about %d keys%s, alignment %s, sync %s)\n",
		r.ID, r.Duration.Round(time.Millisecond), final, formatBytes(r.StateSize), r.Keys, finished, r.Alignment.Round(time.Microsecond), r.Sync.Round(time.Microsecond))
}

// reportStateBudget tells how much state a job with stateful operators
// keeps in memory before it spills, and where the figure comes from.
func (s *Session) reportStateBudget(job string, b exec.StateBudget) {
	if b.Subtasks == 0 {
		return
	}
	from := "set by 'state.cache.size'"
	if b.Auto && b.Memory > 0 {
		from = fmt.Sprintf("'state.cache.size' auto: a quarter of %s", formatBytes(b.Memory))
	} else if b.Auto {
		from = "'state.cache.size' auto, memory unknown"
	}
	fmt.Fprintf(s.Env.Stderr, "weir: job %s: state in memory up to %s per stateful operator subtask (%d of them; %s)\n",
		job, formatBytes(b.PerSubtask), b.Subtasks, from)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (s *Session) duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := s.Config[key]
	if !ok {
		return def, nil
	}
	d, err := confval.Duration(v)
	if err != nil {
		return 0, fmt.Errorf("SET '%s': %w", key, err)
	}
	return d, nil
}

// restartStrategy decides whether a failed job restarts (Flink's
// restart-strategy.* keys).
type restartStrategy struct {
	kind     string // none, fixed-delay, failure-rate
	attempts int
	delay    time.Duration
	interval time.Duration // failure-rate: the window
	failures []time.Time
}

func (s *Session) restartStrategy(checkpointing bool) (*restartStrategy, error) {
	kind := strings.ToLower(strings.TrimSpace(s.Config[KeyRestartType]))
	if kind == "" {
		kind = "none"
		if checkpointing {
			kind = "fixed-delay"
		}
	}
	r := &restartStrategy{kind: kind}
	var err error
	switch kind {
	case "none", "off", "disable":
		r.kind = "none"
	case "fixed-delay", "fixeddelay":
		r.kind = "fixed-delay"
		if r.attempts, err = s.intKey("restart-strategy.fixed-delay.attempts", 3); err != nil {
			return nil, err
		}
		if r.delay, err = s.duration("restart-strategy.fixed-delay.delay", time.Second); err != nil {
			return nil, err
		}
	case "failure-rate", "failurerate":
		r.kind = "failure-rate"
		if r.attempts, err = s.intKey("restart-strategy.failure-rate.max-failures-per-interval", 1); err != nil {
			return nil, err
		}
		if r.interval, err = s.duration("restart-strategy.failure-rate.failure-rate-interval", time.Minute); err != nil {
			return nil, err
		}
		if r.delay, err = s.duration("restart-strategy.failure-rate.delay", time.Second); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("SET '%s' = '%s': expected none, fixed-delay or failure-rate", KeyRestartType, kind)
	}
	return r, nil
}

// allow records a failure at now and reports whether the job may restart.
func (r *restartStrategy) allow(now time.Time) bool {
	switch r.kind {
	case "fixed-delay":
		r.failures = append(r.failures, now)
		return len(r.failures) <= r.attempts
	case "failure-rate":
		r.failures = append(r.failures, now)
		recent := 0
		for _, f := range r.failures {
			if now.Sub(f) <= r.interval {
				recent++
			}
		}
		return recent <= r.attempts
	}
	return false
}

func (s *Session) intKey(key string, def int) (int, error) {
	v, ok := s.Config[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("SET '%s' = '%s': expected a whole number", key, v)
	}
	return n, nil
}

// sleepCtx waits d or until ctx is done; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// removeWorkDir removes the working state folder after a job; a failure
// is reported, not fatal (the next run of the job clears it first).
func (s *Session) removeWorkDir(c *exec.CheckpointOptions) {
	if c == nil {
		return
	}
	if err := os.RemoveAll(c.WorkDir); err != nil {
		fmt.Fprintf(s.Env.Stderr, "weir: could not remove the working state folder: %v\n", err)
	}
}
