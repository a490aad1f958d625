package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/weir-sql/weir/planner"
)

// JobState is the state of a background job, with Flink's names.
type JobState string

// Job states.
const (
	JobRunning  JobState = "RUNNING"
	JobFinished JobState = "FINISHED"
	JobFailed   JobState = "FAILED"
	JobCanceled JobState = "CANCELED"
)

// JobInfo is a snapshot of one background job.
type JobInfo struct {
	ID      string
	Name    string
	State   JobState
	Started time.Time
	// Uptime is how long the job has run (until now, or until it ended).
	Uptime  time.Duration
	RowsIn  int64 // rows read by its sources
	RowsOut int64 // rows written by its sinks
	// LateRows counts the rows its window operators dropped as late.
	LateRows int64
	// Err is the failure of a FAILED job.
	Err error
}

// Jobs runs and tracks the background jobs of a shell session (INSERT
// statements submitted without waiting). It owns their goroutines: Close
// stops the running ones and waits for all.
type Jobs struct {
	mu   sync.Mutex
	jobs []*bgJob
	wg   sync.WaitGroup

	notifyMu sync.Mutex    // held while notify runs, and to change it
	notify   func(JobInfo) // see SetNotify
}

// SetNotify has fn called, from the job's goroutine, when a background job
// that started ends by itself: FINISHED, or FAILED (JobInfo.Err). Jobs
// stopped by Stop, StopWithSavepoint or Close, and jobs that could not
// start (Submit returned the error), are not notified. nil removes it;
// SetNotify returns when no call of the previous fn is running.
func (js *Jobs) SetNotify(fn func(JobInfo)) {
	js.notifyMu.Lock()
	js.notify = fn
	js.notifyMu.Unlock()
}

type bgJob struct {
	id, name string
	control  *JobControl
	cancel   context.CancelFunc
	started  time.Time
	recorded chan struct{} // closed once the end state below is set
	decided  chan struct{} // closed once start has returned or failed
	ok       bool          // start returned the job's id (set before decided)

	// guarded by Jobs.mu
	ended    time.Time
	state    JobState
	err      error
	stopping bool
	stopped  JobState // the state a requested stop ends in
}

// NewJobs returns an empty job list.
func NewJobs() *Jobs { return &Jobs{} }

// Submit starts plan as a background job of session s and returns its id,
// 8 hex digits. The job runs as `weir run` runs one: with checkpoints,
// restarts and restore as the session's configuration says (a restore
// from 'execution.savepoint.path', for example). query is its SQL text.
//
// The job runs with a copy of the session's configuration as it is now, so
// later SETs do not reach it. 'execution.savepoint.path', if set, is used
// by this job only: Submit removes it from the session (restored says
// which folder the job resumes), so that the next INSERT does not restore
// the same savepoint by mistake. If the job cannot start, the key stays.
func (js *Jobs) Submit(s *Session, plan *planner.Plan, query string, opts RunOptions) (id string, err error) {
	return js.submit(s, plan, query, opts)
}

// SubmitRestoring is Submit that also reports the savepoint or checkpoint
// folder the job resumes from 'execution.savepoint.path' ("" for none).
func (js *Jobs) SubmitRestoring(s *Session, plan *planner.Plan, query string, opts RunOptions) (id, restored string, err error) {
	if opts.Restore == "" {
		restored = s.Config[KeySavepointPath]
	}
	id, err = js.submit(s, plan, query, opts)
	if err != nil {
		return "", "", err
	}
	return id, restored, nil
}

func (js *Jobs) submit(s *Session, plan *planner.Plan, query string, opts RunOptions) (string, error) {
	own := *s
	own.Config = maps.Clone(s.Config)
	if opts.Restore == "" && own.Config[KeySavepointPath] != "" {
		opts.Restore = own.Config[KeySavepointPath]
	}
	delete(own.Config, KeySavepointPath)
	id, err := js.start(&own, plan, query, opts)
	if err != nil {
		return "", err
	}
	delete(s.Config, KeySavepointPath)
	return id, nil
}

// start runs the job in the background with session s (the job's own).
func (js *Jobs) start(s *Session, plan *planner.Plan, query string, opts RunOptions) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ctl := NewJobControl()
	opts.Control = ctl
	opts.Quiet = true
	b := &bgJob{id: js.newID(), name: plan.Graph.Name, control: ctl, cancel: cancel, started: time.Now(),
		state: JobRunning, recorded: make(chan struct{}), decided: make(chan struct{})}
	js.mu.Lock()
	js.jobs = append(js.jobs, b)
	js.mu.Unlock()
	js.wg.Add(1)
	go func() {
		defer js.wg.Done()
		defer cancel()
		err := s.runJob(ctx, plan, query, opts)
		js.mu.Lock()
		b.ended = time.Now()
		switch {
		case err != nil:
			b.state, b.err = JobFailed, err
		case b.stopping:
			b.state = b.stopped
		default:
			b.state = JobFinished
		}
		stopped := b.stopping
		js.mu.Unlock()
		close(b.recorded)
		<-b.decided
		if b.ok && !stopped {
			js.notifyEnd(b)
		}
	}()
	// A job that cannot start (a bad restore path, say) fails at once:
	// report that here rather than as a FAILED job later.
	defer close(b.decided)
	select {
	case <-ctl.started():
	case <-b.recorded:
		js.mu.Lock()
		err := b.err
		js.mu.Unlock()
		if err != nil {
			return "", err
		}
	}
	b.ok = true
	return b.id, nil
}

// notifyEnd calls the notify function for job b, which has ended.
func (js *Jobs) notifyEnd(b *bgJob) {
	js.notifyMu.Lock()
	defer js.notifyMu.Unlock()
	if js.notify == nil {
		return
	}
	for _, j := range js.List() {
		if j.ID == b.id {
			js.notify(j)
		}
	}
}

// newID returns an id no job of the list has.
func (js *Jobs) newID() string {
	var buf [4]byte
	for {
		if _, err := rand.Read(buf[:]); err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on supported platforms
		}
		id := hex.EncodeToString(buf[:])
		if js.find(id) == nil {
			return id
		}
	}
}

func (js *Jobs) find(id string) *bgJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, b := range js.jobs {
		if b.id == id {
			return b
		}
	}
	return nil
}

// List returns all jobs in submission order.
func (js *Jobs) List() []JobInfo {
	js.mu.Lock()
	defer js.mu.Unlock()
	out := make([]JobInfo, 0, len(js.jobs))
	now := time.Now()
	for _, b := range js.jobs {
		m := b.control.Metrics()
		end := now
		if !b.ended.IsZero() {
			end = b.ended
		}
		out = append(out, JobInfo{
			ID: b.id, Name: b.name, State: b.state, Started: b.started,
			Uptime: end.Sub(b.started), RowsIn: m.RowsRead, RowsOut: m.RowsWritten, LateRows: m.LateRows, Err: b.err,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// Stop stops the job with the given id cleanly (sources stop, sinks are
// flushed) and waits until it has ended. Stopping an ended job is an error.
func (js *Jobs) Stop(id string) error {
	b, err := js.beginStop(id, JobCanceled)
	if err != nil {
		return err
	}
	b.cancel()
	<-b.recorded
	return nil
}

// StopWithSavepoint takes a savepoint of the job with the given id, stops
// it right after (nothing is processed after the savepoint), waits until it
// has ended and returns the savepoint's folder.
func (js *Jobs) StopWithSavepoint(id string) (string, error) {
	b, err := js.beginStop(id, JobFinished)
	if err != nil {
		return "", err
	}
	path, err := b.control.Savepoint(true, b.recorded)
	if err != nil {
		b.cancel()
		<-b.recorded
		return "", fmt.Errorf("stop job '%s' with savepoint: %w", id, err)
	}
	<-b.recorded
	return path, nil
}

func (js *Jobs) beginStop(id string, end JobState) (*bgJob, error) {
	b := js.find(id)
	if b == nil {
		return nil, fmt.Errorf("no job with id '%s' (SHOW JOBS lists them)", id)
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if b.state != JobRunning {
		return nil, fmt.Errorf("job '%s' is not running (it is %s)", id, b.state)
	}
	b.stopping, b.stopped = true, end
	return b, nil
}

// Ended returns a channel that is closed when the job with the given id
// has ended (its state is then final), or nil if there is no such job.
func (js *Jobs) Ended(id string) <-chan struct{} {
	b := js.find(id)
	if b == nil {
		return nil
	}
	return b.recorded
}

// Running returns the number of running jobs.
func (js *Jobs) Running() int {
	js.mu.Lock()
	defer js.mu.Unlock()
	n := 0
	for _, b := range js.jobs {
		if b.state == JobRunning {
			n++
		}
	}
	return n
}

// Wait waits until every job has ended by itself.
func (js *Jobs) Wait() { js.wg.Wait() }

// Close stops every running job and waits for all of them.
func (js *Jobs) Close() {
	js.mu.Lock()
	for _, b := range js.jobs {
		if b.state == JobRunning {
			b.stopping, b.stopped = true, JobCanceled
			b.cancel()
		}
	}
	js.mu.Unlock()
	js.wg.Wait()
}
