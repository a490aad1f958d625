package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
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
	// subtask's in-memory state and of its store's write-back cache; 0
	// sizes it from the process's memory (a quarter of Options.MemoryBytes
	// split over the job's stateful subtasks, at least
	// statestore.DefaultCacheBytes: state.cache.size 'auto').
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
	// AllowNonRestoredState lets a restore drop the state of operators
	// that are no longer in the query (Flink's --allow-non-restored-state).
	AllowNonRestoredState bool
	// NoFinalCheckpoint turns off the final checkpoint of a bounded job.
	// With it on (the default), tasks that finished wait for a checkpoint
	// of their final state, whose completion commits transactional sinks.
	NoFinalCheckpoint bool
}

// CheckpointReport describes a completed or aborted checkpoint.
type CheckpointReport struct {
	ID        int64
	Completed bool
	Reason    string // why it was aborted
	Path      string
	Duration  time.Duration // from trigger to complete
	Alignment time.Duration // longest alignment of any task
	// Sync is the longest time any task spent on its snapshot before it
	// forwarded the barrier: flushing what its chain held back, writing its
	// operators' changed state into their stores and snapshotting them,
	// and pre-committing its sink.
	Sync      time.Duration
	StateSize int64 // bytes of state files referenced
	Keys      int64
	// Final is true for the checkpoint of the job's end state, taken when
	// every task has finished (at the end of bounded input, or after a
	// stop): it holds no rows that an earlier checkpoint or savepoint did
	// not see beyond those read up to the end.
	Final bool
	// Savepoint is true for the checkpoint a savepoint was copied from.
	Savepoint bool
	// Finished counts the stateful operators marked finished: their input
	// ended, so they wrote no state (checkpoint.SubtaskState.Finished).
	Finished int
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
	// FaultEndCommit is not of the checkpoint algorithm: a job without
	// checkpoints commits a sink subtask's output at its end (after every
	// subtask prepared it, see Job.closeDeferred).
	FaultEndCommit = "E1"
)

// taskSnapshot is what a task reports for a checkpoint.
type taskSnapshot struct {
	task      coordinator.TaskID
	source    string // vertex id of a source task
	position  []byte
	ended     bool                      // the source task read its input to the end (task.srcEnded)
	sink      string                    // sink id of a transactional sink task
	txns      [][]byte                  // its transactions not yet committed
	lists     []checkpoint.OperatorList // its source's and sink's list state
	ops       []opSnapshot
	alignment time.Duration
	sync      time.Duration // taking the snapshot, before the barrier went on
}

type opSnapshot struct {
	id, name    string
	parallelism int
	finished    bool   // the subtask had finished: no state written (checkpoint.SubtaskState.Finished)
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
	// writers counts the subtasks writing their state into each
	// checkpoint's folder (subtaskDir to release). An aborted checkpoint's
	// folder is removed when its last writer is done (doomed), so that no
	// subtask finds its folder gone halfway through a snapshot.
	writers map[int64]int
	doomed  map[int64]*checkpoint.Pending

	triggers map[coordinator.TaskID]chan triggerMsg
	ctls     []chan ctlMsg
	ctlOf    map[coordinator.TaskID]chan ctlMsg
	started  map[int64]time.Time

	// parallelism is each vertex's; ended holds the tasks whose input
	// ended for good (not stopped), from their finish events: a vertex all
	// of whose tasks ended writes no operator state (vertexEnded).
	parallelism map[int]int
	ended       map[coordinator.TaskID]bool

	savepoints chan savepointRequest // from Job.Savepoint
	queued     []savepointRequest    // waiting for the pending checkpoint to end
	inFlight   map[int64]savepointRequest
}

// savepointRequest asks for a savepoint into dir; stop ends the job after it.
// With plain, it asks for a checkpoint now, kept as any other (Job.Checkpoint).
type savepointRequest struct {
	dir   string
	stop  bool
	plain bool
	reply chan savepointResult
}

// what names the request in its errors.
func (r savepointRequest) what() string {
	if r.plain {
		return "checkpoint"
	}
	return "savepoint"
}

type savepointResult struct {
	path string
	err  error
}

func newCheckpointer(j *Job, opts *CheckpointOptions, tasks []*task, firstID int64) *checkpointer {
	c := &checkpointer{
		j:           j,
		opts:        opts,
		events:      make(chan ckptEvent, 4*len(tasks)+16),
		pending:     map[int64]*checkpoint.Pending{},
		writers:     map[int64]int{},
		doomed:      map[int64]*checkpoint.Pending{},
		triggers:    map[coordinator.TaskID]chan triggerMsg{},
		ctlOf:       map[coordinator.TaskID]chan ctlMsg{},
		started:     map[int64]time.Time{},
		parallelism: map[int]int{},
		ended:       map[coordinator.TaskID]bool{},
		savepoints:  make(chan savepointRequest),
		inFlight:    map[int64]savepointRequest{},
	}
	var all, sources []coordinator.TaskID
	for _, t := range tasks {
		id := t.taskID()
		t.ctl = make(chan ctlMsg, 64)
		c.ctls = append(c.ctls, t.ctl)
		c.ctlOf[id] = t.ctl
		c.parallelism[id.Vertex] = t.v.Parallelism
		if t.v.Source != nil {
			sources = append(sources, id)
			t.trigger = make(chan triggerMsg, 8)
			c.triggers[id] = t.trigger
		} else {
			all = append(all, id)
		}
	}
	c.coord = coordinator.New(coordinator.Config{Interval: opts.Interval, Timeout: opts.Timeout, MinPause: opts.MinPause,
		Final: !opts.NoFinalCheckpoint}, all, sources, firstID)
	return c
}

// final reports whether finished tasks wait for a final checkpoint.
func (c *checkpointer) final() bool { return !c.opts.NoFinalCheckpoint }

// tell sends m to every task. A task's control channel has room for many
// messages; if one is full the message is dropped, which is harmless for
// ctlComplete (a later completion commits everything before it).
func (c *checkpointer) tell(m ctlMsg) {
	for _, ch := range c.ctls {
		select {
		case ch <- m:
		default:
		}
	}
}

// subtaskDir returns the folder where an operator subtask writes its state
// for checkpoint id, and its path relative to the checkpoint folder. The
// caller must call release(id) when it is done writing there: until then
// an abort leaves the folder in place.
func (c *checkpointer) subtaskDir(id int64, opID string, subtask int) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p == nil {
		return "", "", fmt.Errorf("checkpoint %d is not pending (aborted?)", id)
	}
	c.writers[id]++
	return p.SubtaskDir(opID, subtask), checkpoint.SubtaskDirName(opID, subtask), nil
}

// release ends a write into checkpoint id's folder that subtaskDir began;
// the last writer of an aborted checkpoint removes its folder.
func (c *checkpointer) release(id int64) {
	c.mu.Lock()
	c.writers[id]--
	var p *checkpoint.Pending
	if c.writers[id] <= 0 {
		delete(c.writers, id)
		p = c.doomed[id]
		delete(c.doomed, id)
	}
	c.mu.Unlock()
	if p != nil {
		if err := p.Abort(); err != nil {
			c.j.opts.logf("checkpoint %d: abort: %v", id, err)
		}
	}
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
		case r := <-c.savepoints:
			c.queued = append(c.queued, r)
			c.startSavepoints()
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
				c.abort(id, time.Time{}, "the job ended before all tasks acked")
			}
			for _, r := range c.queued {
				r.reply <- savepointResult{err: fmt.Errorf("%s: the job ended", r.what())}
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
		c.noteEnded(ev.snap)
		c.do(c.coord.SourceFinished(coordinator.Ack{Task: ev.snap.task, State: ev.snap}))
	case evTaskFinished:
		c.noteEnded(ev.snap)
		c.do(c.coord.TaskFinished(now, ev.snap.task))
	}
}

// markFinished marks every subtask of an operator finished when one of
// its subtasks is: that subtask was told that every task of its vertex had
// ended for good, so the state a sibling wrote for the same checkpoint (it
// was asked before the last of them ended) can never change again either.
// A checkpoint thus marks an operator whole or not at all; the folders of
// the state it drops stay unreferenced until the checkpoint is deleted.
func markFinished(ops []checkpoint.OperatorState) {
	for i := range ops {
		if !ops[i].Finished() {
			continue
		}
		for k := range ops[i].Subtasks {
			ops[i].Subtasks[k] = checkpoint.SubtaskState{Subtask: ops[i].Subtasks[k].Subtask, Finished: true}
		}
	}
}

// noteEnded records a finished task whose input ended for good (snap.ended).
func (c *checkpointer) noteEnded(snap taskSnapshot) {
	if snap.ended {
		c.ended[snap.task] = true
	}
}

// vertexEnded reports whether every task of vertex v finished because its
// input ended for good. Such a vertex's operators can never see another
// row, so its tasks write no operator state into later checkpoints, only
// a mark that they finished (as Flink's finished operators do, FLIP-147);
// checkRestore then requires the sources above them to stay ended.
// Requiring the whole vertex keeps the mark all-or-nothing for an operator,
// so a rescale never mixes finished subtasks with live ones.
func (c *checkpointer) vertexEnded(v int) bool {
	n := 0
	for t := range c.ended {
		if t.Vertex == v {
			n++
		}
	}
	return n == c.parallelism[v]
}

// do carries out the coordinator's actions.
func (c *checkpointer) do(actions []coordinator.Action) {
	for len(actions) > 0 {
		a := actions[0]
		actions = actions[1:]
		switch a.Kind {
		case coordinator.TriggerSources:
			actions = append(actions, c.trigger(a, false)...)
		case coordinator.TriggerFinal:
			actions = append(actions, c.triggerFinal(a)...)
		case coordinator.SnapshotFinished:
			actions = append(actions, c.snapshotFinished(a.ID, a.Task)...)
		case coordinator.WriteMetadata:
			actions = append(actions, c.write(a)...)
		case coordinator.NotifyComplete:
			c.completed(a.ID)
		case coordinator.Abort:
			c.abort(a.ID, a.Time, a.Reason)
		}
	}
}

func (c *checkpointer) trigger(a coordinator.Action, stop bool) []coordinator.Action {
	if err := c.begin(a); err != nil {
		return c.coord.Declined(time.Now(), a.ID, coordinator.TaskID{Vertex: -1}, err.Error())
	}
	for id, ch := range c.triggers {
		select {
		case ch <- triggerMsg{id: a.ID, stop: stop}:
		default:
			c.j.opts.logf("checkpoint %d: source %s has triggers queued; skipped", a.ID, id)
		}
	}
	// Non-source tasks that finished get no barrier any more: they
	// snapshot their final state when asked.
	for _, t := range c.coord.FinishedTasks() {
		if acts := c.snapshotFinished(a.ID, t); len(acts) > 0 {
			return acts
		}
	}
	return nil
}

// snapshotFinished asks task, a non-source task that finished and waits
// for the final checkpoint, to snapshot its final state for checkpoint id.
// If its control channel is full the checkpoint is declined for it.
func (c *checkpointer) snapshotFinished(id int64, task coordinator.TaskID) []coordinator.Action {
	select {
	case c.ctlOf[task] <- ctlMsg{kind: ctlSnapshot, id: id, finished: c.vertexEnded(task.Vertex)}:
		return nil
	default:
		return c.coord.Declined(time.Now(), id, task, "its control channel is full")
	}
}

// begin creates checkpoint a.ID's folder.
func (c *checkpointer) begin(a coordinator.Action) error {
	p, err := c.opts.Storage.Begin(a.ID)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.pending[a.ID] = p
	c.mu.Unlock()
	c.started[a.ID] = a.Time
	return nil
}

// triggerFinal asks every (finished) task to snapshot its final state.
func (c *checkpointer) triggerFinal(a coordinator.Action) []coordinator.Action {
	if err := c.begin(a); err != nil {
		c.j.fail(fmt.Errorf("final checkpoint %d: %w", a.ID, err))
		return nil
	}
	for task, ch := range c.ctlOf {
		select {
		case ch <- ctlMsg{kind: ctlFinal, id: a.ID, finished: c.vertexEnded(task.Vertex)}:
		default:
			c.j.fail(fmt.Errorf("final checkpoint %d: a task's control channel is full", a.ID))
			return nil
		}
	}
	return nil
}

// startSavepoints triggers the first queued savepoint when no checkpoint is
// in flight.
func (c *checkpointer) startSavepoints() {
	if len(c.queued) == 0 || c.coord.Pending() != 0 {
		return
	}
	r := c.queued[0]
	c.queued = c.queued[1:]
	if len(c.triggers) == len(c.coord.FinishedSources()) {
		r.reply <- savepointResult{err: fmt.Errorf("%s: every source has finished", r.what())}
		return
	}
	a := c.coord.Trigger(time.Now())
	c.inFlight[a.ID] = r
	c.do(c.trigger(a, r.stop))
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
		KeyLayout:       state.KeyLayout,
		Statements:      c.j.graph.Statements,
	}
	desc := describeGraph(c.j.graph)
	ops := map[string]int{}
	var align, sync time.Duration
	for _, ack := range a.Acks {
		s := ack.State.(taskSnapshot)
		align = max(align, ack.Alignment)
		sync = max(sync, s.sync)
		if s.source != "" {
			sp := checkpoint.SourcePosition{Source: s.source, Subtask: s.task.Subtask, Position: s.position, Ended: s.ended}
			if v := desc.sources[s.source]; v != nil {
				sp.Table, sp.Connector = v.SourceName, v.SourceConnector
			}
			meta.Sources = append(meta.Sources, sp)
		}
		for _, txn := range s.txns {
			meta.Sinks = append(meta.Sinks, checkpoint.SinkTransaction{Sink: s.sink, Subtask: s.task.Subtask, Transaction: txn})
		}
		meta.OperatorLists = append(meta.OperatorLists, s.lists...)
		for _, o := range s.ops {
			i, ok := ops[o.id]
			if !ok {
				i = len(meta.Operators)
				ops[o.id] = i
				d := desc.ops[o.id]
				meta.Operators = append(meta.Operators, checkpoint.OperatorState{ID: o.id, Name: o.name, Parallelism: o.parallelism,
					Statement: d.statement, Sinks: d.sinks})
			}
			if o.finished {
				meta.Operators[i].Subtasks = append(meta.Operators[i].Subtasks, checkpoint.SubtaskState{Subtask: s.task.Subtask, Finished: true})
				continue
			}
			// The store computed every file's checksum as it wrote the
			// snapshot, so completing the checkpoint reads no state file.
			files := make([]checkpoint.FileInfo, len(o.info.Files))
			for k, f := range o.info.Files {
				files[k] = checkpoint.FileInfo{Name: f.Name, Size: f.Size, CRC32C: checkpoint.FormatCRC32C(f.CRC32C)}
			}
			meta.Operators[i].Subtasks = append(meta.Operators[i].Subtasks, checkpoint.SubtaskState{
				Subtask: s.task.Subtask, Dir: o.dir, StateBytes: o.info.Bytes, Keys: o.info.Keys, Files: files})
		}
	}
	markFinished(meta.Operators)
	done, err := p.Complete(meta)
	if err != nil {
		return c.coord.WriteFailed(now, a.ID, err)
	}
	// A savepoint is written, then reported as its checkpoint, then its
	// requester hears of it: so the log has the checkpoint before the
	// savepoint's folder.
	r, requested := c.inFlight[a.ID]
	forSavepoint := requested && !r.plain
	var spResult savepointResult
	if requested {
		delete(c.inFlight, a.ID)
		defer func() { r.reply <- spResult }()
	}
	if requested && r.plain {
		spResult = savepointResult{path: done.Path}
	}
	if forSavepoint {
		sp, err := checkpoint.Savepoint(checkpoint.OSFS{}, done, filepath.Join(r.dir, fmt.Sprintf("savepoint-%d-%s", a.ID, time.Now().UTC().Format("20060102T150405"))))
		if err != nil {
			spResult = savepointResult{err: err}
		} else {
			spResult = savepointResult{path: sp.Path}
		}
	}
	if c.opts.Report != nil {
		var size, keys int64
		finished := 0
		for _, o := range done.Meta.Operators {
			if o.Finished() {
				finished++
			}
			for _, st := range o.Subtasks {
				size += st.StateBytes
				keys += st.Keys
			}
		}
		c.opts.Report(CheckpointReport{ID: a.ID, Completed: true, Path: done.Path, Duration: time.Since(a.Time),
			Alignment: align, Sync: sync, StateSize: size, Keys: keys, Final: a.ID == c.coord.Final(), Savepoint: forSavepoint, Finished: finished})
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
	// Transactional sinks commit what the checkpoint covers.
	c.tell(ctlMsg{kind: ctlComplete, id: id})
	c.startSavepoints()
	if err := c.j.fault(FaultBeforeRetain); err != nil {
		c.j.fail(fmt.Errorf("checkpoint %d: %w", id, err))
		return
	}
	if err := c.opts.Storage.Retain(max(c.opts.Retain, 1)); err != nil {
		c.j.opts.logf("checkpoint %d: retention: %v", id, err)
	}
}

// abort drops checkpoint id, triggered at triggered (zero if unknown): its
// folder is removed now, or by the last subtask still writing into it.
func (c *checkpointer) abort(id int64, triggered time.Time, reason string) {
	c.mu.Lock()
	p := c.pending[id]
	delete(c.pending, id)
	if p != nil && c.writers[id] > 0 {
		c.doomed[id], p = p, nil
	}
	c.mu.Unlock()
	if triggered.IsZero() {
		triggered = c.started[id]
	}
	delete(c.started, id)
	if p != nil {
		if err := p.Abort(); err != nil {
			c.j.opts.logf("checkpoint %d: abort: %v", id, err)
		}
	}
	if c.opts.Report != nil {
		var d time.Duration
		if !triggered.IsZero() {
			d = time.Since(triggered)
		}
		c.opts.Report(CheckpointReport{ID: id, Reason: reason, Duration: d})
	}
	if r, ok := c.inFlight[id]; ok {
		delete(c.inFlight, id)
		r.reply <- savepointResult{err: fmt.Errorf("%s aborted: %s", r.what(), reason)}
	}
	if id == c.coord.Final() {
		c.j.fail(fmt.Errorf("final checkpoint %d aborted: %s", id, reason))
	}
	c.startSavepoints()
}

// prepareCheckpointing checks that a restored checkpoint fits the graph,
// discards the leftovers of a crashed run, and makes this run's working
// folder: a new folder under WorkDir, so that a run restarted in the same
// process never opens its stores where an abandoned store of the run
// before (a Pebble that broke off, whose goroutines may still write) has
// its files. It returns the first checkpoint id to use and the folder.
func prepareCheckpointing(g *JobGraph, c *CheckpointOptions) (int64, string, error) {
	if c.Storage == nil || c.WorkDir == "" {
		return 0, "", fmt.Errorf("%w: checkpointing needs a storage and a working folder", ErrInvalidGraph)
	}
	if g.Name != "" && g.Name != c.Storage.Job() {
		// Every checkpoint's metadata would name g, and the storage would
		// refuse to complete it.
		return 0, "", fmt.Errorf("%w: the checkpoint storage is for job %q, the graph is %q (make them the same)", ErrInvalidGraph, c.Storage.Job(), g.Name)
	}
	var restoredID int64
	if r := c.Restore; r != nil {
		restoredID = r.Meta.CheckpointID
		if err := checkRestore(g, r, c.AllowNonRestoredState); err != nil {
			return 0, "", err
		}
	}
	highest, err := c.Storage.DiscardIncompleteAfter(restoredID)
	if err != nil {
		return 0, "", fmt.Errorf("checkpoints: %w", err)
	}
	// The folders of earlier runs go: their files are unlinked, so even a
	// store still writing there cannot reach this run's folder.
	if err := os.RemoveAll(c.WorkDir); err != nil {
		return 0, "", fmt.Errorf("working state folder: %w", err)
	}
	if err := os.MkdirAll(c.WorkDir, 0o755); err != nil {
		return 0, "", fmt.Errorf("working state folder: %w", err)
	}
	run, err := os.MkdirTemp(c.WorkDir, "run-")
	if err != nil {
		return 0, "", fmt.Errorf("working state folder: %w", err)
	}
	return max(highest, restoredID) + 1, run, nil
}

// checkRestore verifies that checkpoint r can be restored into g: every
// operator state maps to an operator of the query (unless allow drops the
// unmatched), and the key groups did not change.
func checkRestore(g *JobGraph, r *checkpoint.Checkpoint, allow bool) error {
	maxPar := g.MaxParallelism
	if maxPar == 0 {
		maxPar = types.DefaultMaxParallelism
	}
	if r.Meta.MaxParallelism != 0 && r.Meta.MaxParallelism != maxPar {
		return fmt.Errorf("restore %s: it was taken with max parallelism %d, the job has %d; the number of key groups cannot change",
			r.Path, r.Meta.MaxParallelism, maxPar)
	}
	ops := map[string]bool{}
	for _, v := range g.Vertices {
		for _, op := range v.Operators {
			ops[op.ID] = true
		}
		if v.Source != nil {
			ops[v.ID] = true
		}
	}
	var problems []string
	for _, st := range r.Meta.Operators {
		if !ops[st.ID] {
			problems = append(problems, fmt.Sprintf("operator %s %s", st.ID, st.Name))
		}
	}
	seen := map[string]bool{}
	for _, sp := range r.Meta.Sources {
		if !ops[sp.Source] && !seen[sp.Source] {
			seen[sp.Source] = true
			problems = append(problems, fmt.Sprintf("source %s", sp.Source))
		}
	}
	if len(problems) > 0 && !allow {
		return fmt.Errorf("restore %s: state of %d operator(s) matches nothing in the query (changed or removed): %s; "+
			"restore with --allow-non-restored-state to drop it", r.Path, len(problems), strings.Join(problems, "; "))
	}
	return checkFinished(g, r)
}

// checkFinished refuses to restore r into g when an operator that had
// finished in r (it wrote no state, checkpoint.SubtaskState.Finished)
// could receive rows again: every source above it in g must be restored
// ended (every subtask of it ended in r), so that it reads nothing. A
// query changed to feed such an operator from a new source, or from one
// that had not ended, would run it on empty state and give wrong results;
// Flink refuses the same change (FLIP-147).
func checkFinished(g *JobGraph, r *checkpoint.Checkpoint) error {
	ended := map[string]bool{} // source vertex id -> every subtask ended
	for _, sp := range r.Meta.Sources {
		if e, seen := ended[sp.Source]; !seen || e {
			ended[sp.Source] = sp.Ended
		}
	}
	for vi, v := range g.Vertices {
		for _, op := range v.Operators {
			if st := r.Meta.Operator(op.ID); st == nil || !st.Finished() {
				continue
			}
			for _, si := range sourcesAbove(g, vi) {
				src := g.Vertices[si]
				e, known := ended[src.ID]
				if known && e {
					continue
				}
				why := "had not ended"
				if !known {
					why = "is new to the query"
				}
				return fmt.Errorf("restore %s: operator %s had finished in %s %d (all its input had ended, so its state was not kept), "+
					"but source %s above it in this query %s and would send it rows: a finished operator cannot take new input; "+
					"run the query from the start, or restore a checkpoint taken before that operator finished",
					r.Path, op.Name, r.Meta.Kind, r.Meta.CheckpointID, src.SourceName, why)
			}
		}
	}
	return nil
}

// sourcesAbove returns the source vertices that vertex vi reads from,
// directly or through other vertices (vi itself if it is a source).
func sourcesAbove(g *JobGraph, vi int) []int {
	seen := map[int]bool{}
	var out []int
	var walk func(int)
	walk = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		v := g.Vertices[i]
		if v.Source != nil {
			out = append(out, i)
		}
		for _, in := range v.Inputs {
			walk(in.From)
		}
	}
	walk(vi)
	slices.Sort(out)
	return out
}

// sinkID returns the id of vertex vi's sink in checkpoints: its table name,
// suffixed -2, -3, ... when several vertices write the same table.
func (j *Job) sinkID(vi int) string {
	n := 0
	for i := 0; i <= vi; i++ {
		if j.graph.Vertices[i].Sink != nil && j.graph.Vertices[i].SinkName == j.graph.Vertices[vi].SinkName {
			n++
		}
	}
	if n > 1 {
		return fmt.Sprintf("%s-%d", j.graph.Vertices[vi].SinkName, n)
	}
	return j.graph.Vertices[vi].SinkName
}

// ErrNoCheckpointing is returned by Savepoint for a job without checkpointing.
var ErrNoCheckpointing = errors.New("savepoints need checkpointing: SET 'execution.checkpointing.interval' (or run with --stop-with-savepoint)")

// Savepoint takes a savepoint of the running job: a checkpoint, copied to a
// self-contained folder in dir (checkpoint.Savepoint). With stop, the
// sources end right after it, so the job stops with nothing processed after
// the savepoint. It returns the savepoint's folder.
func (j *Job) Savepoint(ctx context.Context, dir string, stop bool) (string, error) {
	if j.ck == nil {
		return "", ErrNoCheckpointing
	}
	r := savepointRequest{dir: dir, stop: stop, reply: make(chan savepointResult, 1)}
	select {
	case j.ck.savepoints <- r:
	case <-j.done:
		return "", errors.New("savepoint: the job has ended")
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case res := <-r.reply:
		return res.path, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Checkpoint takes a checkpoint of the running job now, after the one in
// flight if any, whatever the interval (a benchmark that checkpoints every N
// rows, a test), and returns its folder once it is complete. It is kept and
// retained like every other checkpoint.
func (j *Job) Checkpoint(ctx context.Context) (string, error) {
	if j.ck == nil {
		return "", errors.New("checkpoint: the job runs without checkpointing")
	}
	r := savepointRequest{plain: true, reply: make(chan savepointResult, 1)}
	select {
	case j.ck.savepoints <- r:
	case <-j.done:
		return "", errors.New("checkpoint: the job has ended")
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case res := <-r.reply:
		return res.path, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// recoverSinks lets every transactional sink commit what the restored
// checkpoint pre-committed and discard what was written after it.
func recoverSinks(j *Job, r *checkpoint.Checkpoint) error {
	for vi, v := range j.graph.Vertices {
		ts, ok := v.Sink.(connector.TransactionalSink)
		if !ok {
			continue
		}
		var txns [][]byte
		if r != nil {
			id := j.sinkID(vi)
			for _, st := range r.Meta.Sinks {
				if st.Sink == id {
					txns = append(txns, st.Transaction)
				}
			}
		}
		if err := ts.Recover(txns); err != nil {
			return fmt.Errorf("recover sink %s: %w", v.SinkName, err)
		}
	}
	return nil
}

// graphDesc is what checkpoints record about the job graph for people: the
// source vertices by id, and each operator's statement and sinks.
type graphDesc struct {
	sources map[string]*Vertex
	ops     map[string]opDesc
}

type opDesc struct {
	statement int
	sinks     []string // the sink tables downstream, in graph order
}

// describeGraph finds each source vertex, and the sinks each operator's
// output reaches (through its chain and the vertices downstream).
func describeGraph(g *JobGraph) graphDesc {
	d := graphDesc{sources: map[string]*Vertex{}, ops: map[string]opDesc{}}
	down := make([][]int, len(g.Vertices))
	for vi, v := range g.Vertices {
		for _, in := range v.Inputs {
			if in.From >= 0 && in.From < len(g.Vertices) {
				down[in.From] = append(down[in.From], vi)
			}
		}
	}
	// Vertices are in topological order: a vertex's sinks are its own and
	// those of the vertices it feeds, which come after it.
	sinks := make([][]string, len(g.Vertices))
	for vi := len(g.Vertices) - 1; vi >= 0; vi-- {
		v := g.Vertices[vi]
		if v.Sink != nil {
			sinks[vi] = append(sinks[vi], v.SinkName)
		}
		for _, c := range down[vi] {
			for _, s := range sinks[c] {
				if !slices.Contains(sinks[vi], s) {
					sinks[vi] = append(sinks[vi], s)
				}
			}
		}
		if v.Source != nil {
			d.sources[v.ID] = v
		}
		for _, op := range v.Operators {
			d.ops[op.ID] = opDesc{statement: v.Statement, sinks: sinks[vi]}
		}
	}
	return d
}
