package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/weir-sql/weir/exec"
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
}

type bgJob struct {
	id, name string
	job      *exec.Job
	started  time.Time
	recorded chan struct{} // closed once the end state below is set

	// guarded by Jobs.mu
	ended    time.Time
	state    JobState
	err      error
	stopping bool
}

// NewJobs returns an empty job list.
func NewJobs() *Jobs { return &Jobs{} }

// Submit starts plan as a background job and returns its id, 8 hex digits.
func (js *Jobs) Submit(plan *planner.Plan, opts exec.Options) (string, error) {
	job, err := exec.Start(context.Background(), plan.Graph, opts)
	if err != nil {
		return "", fmt.Errorf("start job %s: %w", plan.Graph.Name, err)
	}
	b := &bgJob{id: js.newID(), name: plan.Graph.Name, job: job, started: time.Now(), state: JobRunning, recorded: make(chan struct{})}
	js.mu.Lock()
	js.jobs = append(js.jobs, b)
	js.mu.Unlock()
	js.wg.Add(1)
	go func() {
		defer js.wg.Done()
		defer close(b.recorded)
		err := job.Wait()
		js.mu.Lock()
		defer js.mu.Unlock()
		b.ended = time.Now()
		switch {
		case err != nil:
			b.state, b.err = JobFailed, err
		case b.stopping:
			b.state = JobCanceled
		default:
			b.state = JobFinished
		}
	}()
	return b.id, nil
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
		m := b.job.Metrics()
		end := now
		if !b.ended.IsZero() {
			end = b.ended
		}
		out = append(out, JobInfo{
			ID: b.id, Name: b.name, State: b.state, Started: b.started,
			Uptime: end.Sub(b.started), RowsIn: m.RowsRead, RowsOut: m.RowsWritten, Err: b.err,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// Stop stops the job with the given id cleanly (sources stop, sinks are
// flushed) and waits until it has ended. Stopping an ended job is an error.
func (js *Jobs) Stop(id string) error {
	b := js.find(id)
	if b == nil {
		return fmt.Errorf("no job with id '%s' (SHOW JOBS lists them)", id)
	}
	js.mu.Lock()
	if b.state != JobRunning {
		st := b.state
		js.mu.Unlock()
		return fmt.Errorf("job '%s' is not running (it is %s)", id, st)
	}
	b.stopping = true
	js.mu.Unlock()
	b.job.Stop()
	<-b.recorded
	return nil
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
			b.stopping = true
			b.job.Stop()
		}
	}
	js.mu.Unlock()
	js.wg.Wait()
}
