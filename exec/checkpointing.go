package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/statestore"
)

// CheckpointOptions turns checkpointing on for a job (Options.Checkpoint).
type CheckpointOptions struct {
	// Interval, Timeout and MinPause are Flink's execution.checkpointing.*.
	Interval, Timeout, MinPause time.Duration
	// Storage is the job's checkpoint folder.
	Storage *checkpoint.Storage
	// Retain is the number of complete checkpoints kept (at least 1).
	Retain int
	// StateCacheBytes is the memory budget of each stateful operator
	// subtask's in-memory state and of its store's write-back cache.
	StateCacheBytes int64
	// WorkDir holds the working state databases while the job runs. It must
	// be on the same filesystem as Storage (snapshots hard-link sstables).
	WorkDir string
	// Restore, if set, is the checkpoint the job starts from.
	Restore *checkpoint.Checkpoint
	// Query and PlanFingerprint are recorded in every checkpoint.
	Query, PlanFingerprint string
	// Report, if set, is told about every completed or aborted checkpoint.
	Report func(CheckpointReport)
}

// CheckpointReport describes a completed or aborted checkpoint.
type CheckpointReport struct {
	ID        int64
	Completed bool
	Reason    string // why it was aborted
	Path      string
	Duration  time.Duration // from trigger to complete
	Alignment time.Duration // longest alignment of any task
	StateSize int64         // bytes of state files referenced
	Keys      int64
}

// Fault points of the checkpoint algorithm (DESIGN.md, Testing). Options.Fault
// is called with one of these names each time the runtime passes the point.
const (
	FaultSourceTrigger = "K1" // a source got the trigger, before recording its position
	FaultMidAlignment  = "K2" // one of several barriers is in
	FaultMidSnapshot   = "K3" // the operators' state is prepared, the store not yet snapshotted
	FaultBeforeAck     = "K4" // the snapshot is written, the ack not sent
	FaultBeforeCommit  = "K5" // _metadata is written, the tasks not yet notified
	FaultMidCommit     = "K6" // a sink is committing
	FaultBeforeRetain  = "K7" // before old checkpoints are deleted
	FaultDuringRestore = "K8" // a task is restoring its state
)

// taskSnapshot is what a task reports for a checkpoint.
type taskSnapshot struct {
	task      coordinator.TaskID
	source    string // vertex id of a source task
	position  []byte
	ops       []opSnapshot
	alignment time.Duration
}

type opSnapshot struct {
	id, name    string
	parallelism int
	dir         string // relative to the checkpoint folder
	info        statestore.SnapshotInfo
}

// ckptEvent is what tasks tell the checkpointer.
type ckptEvent struct {
	kind ckptEventKind
	id   int64
	snap taskSnapshot
	err  error
}

type ckptEventKind uint8

const (
	evAck ckptEventKind = iota
	evDecline
	evSourceFinished
	evTaskFinished
)

// checkpointer runs the coordinator for a job: it owns the state machine,
// the clock, and the checkpoint storage; tasks talk to it through events.
type checkpointer struct {
	j      *Job
	opts   *CheckpointOptions
	coord  *coordinator.Coordinator
	events chan ckptEvent

	mu      sync.Mutex
	pending map[int64]*checkpoint.Pending

	triggers map[coordinator.TaskID]chan int64
	started  map[int64]time.Time
}

func newCheckpointer(j *Job, opts *CheckpointOptions, tasks []*task, firstID int64) *checkpointer {
	c := &checkpointer{
		j:        j,
		opts:     opts,
		events:   make(chan ckptEvent, 4*len(tasks)+16),
		pending:  map[int64]*checkpoint.Pending{},
		triggers: map[coordinator.TaskID]chan int64{},
		started:  map[int64]time.Time{},
	}
	var all, sources []coordinator.TaskID
	for _, t := range tasks {
		id := t.taskID()
		if t.v.Source != nil {
			sources = append(sources, id)
			t.trigger = make(chan int64, 8)
			c.triggers[id] = t.trigger
		} else {
			all = append(all, id)
		}
	}
	c.coord = coordinator.New(coordinator.Config{Interval: opts.Interval, Timeout: opts.Timeout, MinPause: opts.MinPause}, all, sources, firstID)
	return c
}

// subtaskDir returns the folder where an operator subtask writes its state
// for checkpoint id, and its path relative to the checkpoint folder.
func (c *checkpointer) subtaskDir(id int64, opID string, subtask int) (string, string, error) {
	c.mu.Lock()
	p := c.pending[id]
	c.mu.Unlock()
	if p == nil {
		return "", "", fmt.Errorf("checkpoint %d is not pending (aborted?)", id)
	}
	return p.SubtaskDir(opID, subtask), checkpoint.SubtaskDirName(opID, subtask), nil
}

// send delivers an event from a task; it gives up when the job ends.
func (c *checkpointer) send(ev ckptEvent) {
	select {
	case c.events <- ev:
	case <-c.j.ctx.Done():
	}
}

// run is the checkpointer's goroutine; it returns when the job's tasks are done.
func (c *checkpointer) run(tasksDone <-chan struct{}) {
	tick := max(min(c.opts.Interval/10, 100*time.Millisecond), 5*time.Millisecond)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	c.do(c.coord.Tick(time.Now()))
	for {
		select {
		case now := <-ticker.C:
			c.do(c.coord.Tick(now))
		case ev := <-c.events:
			c.handle(ev)
		case <-tasksDone:
			// Drain what the tasks said last, then abort what is pending.
			for {
				select {
				case ev := <-c.events:
					c.handle(ev)
					continue
				default:
				}
				break
			}
			if id := c.coord.Pending(); id != 0 {
				c.abort(id, "the job ended before all tasks acked")
			}
			return
		}
	}
}

func (c *checkpointer) handle(ev ckptEvent) {
	now := time.Now()
	switch ev.kind {
	case evAck:
		c.do(c.coord.Acked(ev.id, coordinator.Ack{Task: ev.snap.task, State: ev.snap, Alignment: ev.snap.alignment}))
	case evDecline:
		c.do(c.coord.Declined(now, ev.id, ev.snap.task, ev.err.Error()))
	case evSourceFinished:
		c.do(c.coord.SourceFinished(coordinator.Ack{Task: ev.snap.task, State: ev.snap}))
	case evTaskFinished:
		c.do(c.coord.TaskFinished(now, ev.snap.task))
	}
}

// do carries out the coordinator's actions.
func (c *checkpointer) do(actions []coordinator.Action) {
	for len(actions) > 0 {
		a := actions[0]
		actions = actions[1:]
		switch a.Kind {
		case coordinator.TriggerSources:
			actions = append(actions, c.trigger(a)...)
		case coordinator.WriteMetadata:
			actions = append(actions, c.write(a)...)
		case coordinator.NotifyComplete:
			c.completed(a.ID)
		case coordinator.Abort:
			c.abort(a.ID, a.Reason)
		}
	}
}

func (c *checkpointer) trigger(a coordinator.Action) []coordinator.Action {
	p, err := c.opts.Storage.Begin(a.ID)
	if err != nil {
		return c.coord.Declined(time.Now(), a.ID, coordinator.TaskID{Vertex: -1}, err.Error())
	}
	c.mu.Lock()
	c.pending[a.ID] = p
	c.mu.Unlock()
	c.started[a.ID] = a.Time
	for id, ch := range c.triggers {
		select {
		case ch <- a.ID:
		default:
			c.j.opts.logf("checkpoint %d: source %s has triggers queued; skipped", a.ID, id)
		}
	}
	return nil
}

// write builds the checkpoint's metadata from the acks and completes it.
func (c *checkpointer) write(a coordinator.Action) []coordinator.Action {
	now := time.Now()
	c.mu.Lock()
	p := c.pending[a.ID]
	c.mu.Unlock()
	if p == nil {
		return c.coord.WriteFailed(now, a.ID, fmt.Errorf("checkpoint %d has no folder", a.ID))
	}
	meta := checkpoint.Metadata{
		Job:             c.j.graph.Name,
		Query:           c.opts.Query,
		PlanFingerprint: c.opts.PlanFingerprint,
		Timestamp:       a.Time.UTC(),
		MaxParallelism:  c.j.maxPar,
	}
	ops := map[string]int{}
	var align time.Duration
	for _, ack := range a.Acks {
		s := ack.State.(taskSnapshot)
		align = max(align, ack.Alignment)
		if s.source != "" {
			meta.Sources = append(meta.Sources, checkpoint.SourcePosition{Source: s.source, Subtask: s.task.Subtask, Position: s.position})
		}
		for _, o := range s.ops {
			i, ok := ops[o.id]
			if !ok {
				i = len(meta.Operators)
				ops[o.id] = i
				meta.Operators = append(meta.Operators, checkpoint.OperatorState{ID: o.id, Name: o.name, Parallelism: o.parallelism})
			}
			meta.Operators[i].Subtasks = append(meta.Operators[i].Subtasks, checkpoint.SubtaskState{
				Subtask: s.task.Subtask, Dir: o.dir, StateBytes: o.info.Bytes, Keys: o.info.Keys})
		}
	}
	done, err := p.Complete(meta)
	if err != nil {
		return c.coord.WriteFailed(now, a.ID, err)
	}
	if c.opts.Report != nil {
		var size, keys int64
		for _, o := range done.Meta.Operators {
			for _, st := range o.Subtasks {
				size += st.StateBytes
				keys += st.Keys
			}
		}
		c.opts.Report(CheckpointReport{ID: a.ID, Completed: true, Path: done.Path, Duration: time.Since(a.Time),
			Alignment: align, StateSize: size, Keys: keys})
	}
	return c.coord.Written(time.Now(), a.ID)
}

// completed runs after a checkpoint's metadata is durable: it notifies the
// tasks and applies retention.
func (c *checkpointer) completed(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
	delete(c.started, id)
	if err := c.j.fault(FaultBeforeCommit); err != nil {
		c.j.fail(fmt.Errorf("checkpoint %d: %w", id, err))
		return
	}
	// Transactional sinks commit here (a later issue).
	if err := c.j.fault(FaultBeforeRetain); err != nil {
		c.j.fail(fmt.Errorf("checkpoint %d: %w", id, err))
		return
	}
	if err := c.opts.Storage.Retain(max(c.opts.Retain, 1)); err != nil {
		c.j.opts.logf("checkpoint %d: retention: %v", id, err)
	}
}

func (c *checkpointer) abort(id int64, reason string) {
	c.mu.Lock()
	p := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	start := c.started[id]
	delete(c.started, id)
	if p != nil {
		if err := p.Abort(); err != nil {
			c.j.opts.logf("checkpoint %d: abort: %v", id, err)
		}
	}
	if c.opts.Report != nil {
		c.opts.Report(CheckpointReport{ID: id, Reason: reason, Duration: time.Since(start)})
	}
}

// workDir returns the working state folder of an operator subtask.
func (o *CheckpointOptions) workDir(opID string, subtask int) string {
	return filepath.Join(o.WorkDir, checkpoint.SubtaskDirName(opID, subtask))
}

// prepareCheckpointing checks that a restored checkpoint fits the graph,
// discards the leftovers of a crashed run, prepares the working folder and
// returns the first checkpoint id to use.
func prepareCheckpointing(g *JobGraph, c *CheckpointOptions) (int64, error) {
	if c.Storage == nil || c.WorkDir == "" {
		return 0, fmt.Errorf("%w: checkpointing needs a storage and a working folder", ErrInvalidGraph)
	}
	var restoredID int64
	if r := c.Restore; r != nil {
		restoredID = r.Meta.CheckpointID
		if err := checkRestore(g, r); err != nil {
			return 0, err
		}
	}
	highest, err := c.Storage.DiscardIncompleteAfter(restoredID)
	if err != nil {
		return 0, fmt.Errorf("checkpoints: %w", err)
	}
	if err := os.RemoveAll(c.WorkDir); err != nil {
		return 0, fmt.Errorf("working state folder: %w", err)
	}
	if err := os.MkdirAll(c.WorkDir, 0o755); err != nil {
		return 0, fmt.Errorf("working state folder: %w", err)
	}
	return max(highest, restoredID) + 1, nil
}

// checkRestore verifies that checkpoint r can be restored into g: every
// operator state maps to an operator of the same parallelism.
func checkRestore(g *JobGraph, r *checkpoint.Checkpoint) error {
	type opInfo struct {
		name string
		par  int
	}
	ops := map[string]opInfo{}
	for _, v := range g.Vertices {
		for _, op := range v.Operators {
			ops[op.ID] = opInfo{op.Name, v.Parallelism}
		}
		if v.Source != nil {
			ops[v.ID] = opInfo{v.Name, v.Parallelism}
		}
	}
	var problems []string
	for _, st := range r.Meta.Operators {
		op, ok := ops[st.ID]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("state of operator %s (%s) matches no operator of the query", st.ID, st.Name))
		case op.par != st.Parallelism:
			problems = append(problems, fmt.Sprintf("operator %s runs at parallelism %d but its state was taken at %d (rescaling comes with savepoints)", op.name, op.par, st.Parallelism))
		}
	}
	for _, sp := range r.Meta.Sources {
		op, ok := ops[sp.Source]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("position of source %s matches no source of the query", sp.Source))
		case sp.Subtask >= op.par:
			problems = append(problems, fmt.Sprintf("source %s runs at parallelism %d but its positions were taken at a higher one", op.name, op.par))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("restore %s: %s", r.Path, strings.Join(problems, "; "))
	}
	return nil
}
