// Package coordinator is the checkpoint coordinator of a job as a plain state
// machine: the runtime feeds it events (a clock tick, a task's ack or
// decline, a finished task, the outcome of writing metadata) and carries out
// the actions it returns (trigger the sources, write the checkpoint's
// metadata, notify the tasks, abort). It holds no goroutines, channels or
// files, so it is tested with event traces.
package coordinator

import (
	"fmt"
	"sort"
	"time"
)

// TaskID names one subtask of one vertex.
type TaskID struct {
	Vertex, Subtask int
}

func (t TaskID) String() string { return fmt.Sprintf("%d/%d", t.Vertex, t.Subtask) }

// Config holds the checkpointing settings.
type Config struct {
	// Interval between checkpoint triggers (execution.checkpointing.interval).
	Interval time.Duration
	// Timeout after which a pending checkpoint is aborted (execution.checkpointing.timeout).
	Timeout time.Duration
	// MinPause is the least time between the end of one checkpoint and the
	// trigger of the next (execution.checkpointing.min-pause).
	MinPause time.Duration
	// Final asks for a final checkpoint once every task has finished
	// (bounded input): its sinks' commit makes the output complete, and a
	// restore after it replays nothing.
	Final bool
}

// Ack is what a task reports when it has snapshotted its state for a checkpoint.
type Ack struct {
	Task TaskID
	// State is the task's snapshot description, opaque to the coordinator
	// (source positions, state folders, sink transactions, sizes).
	State any
	// Alignment is how long the task spent aligning barriers.
	Alignment time.Duration
}

// ActionKind says what the runtime must do.
type ActionKind int

// The actions.
const (
	// TriggerSources: send checkpoint ID to every running source subtask.
	TriggerSources ActionKind = iota
	// WriteMetadata: every task acked checkpoint ID; write its metadata
	// atomically from Acks, then report Written or WriteFailed.
	WriteMetadata
	// NotifyComplete: checkpoint ID is complete; tell the tasks (sinks commit).
	NotifyComplete
	// Abort: checkpoint ID failed (Reason); remove its folder; the job goes on.
	Abort
	// TriggerFinal: every task has finished; ask every task to snapshot its
	// final state for checkpoint ID (no barriers flow any more).
	TriggerFinal
	// SnapshotFinished: ask Task, a non-source task that has finished (and
	// waits for the final checkpoint), to snapshot its final state for
	// checkpoint ID: no barrier reaches it any more. The runtime also asks
	// every task of FinishedTasks at each trigger.
	SnapshotFinished
)

func (k ActionKind) String() string {
	switch k {
	case TriggerSources:
		return "trigger"
	case WriteMetadata:
		return "write-metadata"
	case NotifyComplete:
		return "notify-complete"
	case Abort:
		return "abort"
	case TriggerFinal:
		return "trigger-final"
	case SnapshotFinished:
		return "snapshot-finished"
	}
	return "unknown"
}

// Action is one thing for the runtime to do.
type Action struct {
	Kind   ActionKind
	ID     int64
	Time   time.Time // when the checkpoint was triggered
	Acks   []Ack     // for WriteMetadata: one per task, sorted by task
	Reason string    // for Abort
	Task   TaskID    // for SnapshotFinished
}

// Coordinator decides when checkpoints start, complete and abort.
type Coordinator struct {
	cfg      Config
	tasks    map[TaskID]bool // every task that must ack; value: still running
	sources  map[TaskID]bool
	finished map[TaskID]Ack // finished sources' final acks
	// ended holds the non-source tasks that finished. With a final
	// checkpoint they wait for it and snapshot their final state for every
	// checkpoint until then (SnapshotFinished), so checkpoints go on.
	ended    map[TaskID]bool
	draining bool // without a final checkpoint, a non-source task finished: no new checkpoints
	done     map[TaskID]bool
	final    int64 // id of the final checkpoint, once triggered

	nextID        int64
	pending       *pending
	lastTrigger   time.Time
	lastEnd       time.Time
	started       bool
	lastCompleted int64
}

type pending struct {
	id      int64
	time    time.Time
	acks    map[TaskID]Ack
	writing bool
}

// New returns a coordinator for a job whose tasks are tasks, of which
// sources are the source subtasks. The first checkpoint gets id firstID
// (1, or the restored checkpoint's id + 1).
func New(cfg Config, tasks, sources []TaskID, firstID int64) *Coordinator {
	c := &Coordinator{
		cfg:      cfg,
		tasks:    map[TaskID]bool{},
		sources:  map[TaskID]bool{},
		finished: map[TaskID]Ack{},
		ended:    map[TaskID]bool{},
		done:     map[TaskID]bool{},
		nextID:   firstID,
	}
	for _, t := range tasks {
		c.tasks[t] = true
	}
	for _, t := range sources {
		c.sources[t] = true
		c.tasks[t] = true
	}
	return c
}

// Pending returns the id of the checkpoint in flight, or 0.
func (c *Coordinator) Pending() int64 {
	if c.pending == nil {
		return 0
	}
	return c.pending.id
}

// LastCompleted returns the id of the last checkpoint completed, or 0.
func (c *Coordinator) LastCompleted() int64 { return c.lastCompleted }

// Tick advances the clock to now: it triggers a checkpoint when one is due
// and aborts the pending one if it timed out.
func (c *Coordinator) Tick(now time.Time) []Action {
	if !c.started {
		// The first interval counts from the job's start.
		c.started = true
		c.lastTrigger = now
		return nil
	}
	var out []Action
	if p := c.pending; p != nil {
		if !p.writing && c.cfg.Timeout > 0 && now.Sub(p.time) >= c.cfg.Timeout {
			out = append(out, c.abort(now, fmt.Sprintf("checkpoint %d expired after %s before all tasks acked (%d of %d)",
				p.id, c.cfg.Timeout, len(p.acks), len(c.tasks))))
		}
		return out
	}
	if c.cfg.Interval <= 0 || c.draining || c.runningSources() == 0 {
		return nil
	}
	if now.Sub(c.lastTrigger) < c.cfg.Interval || (!c.lastEnd.IsZero() && now.Sub(c.lastEnd) < c.cfg.MinPause) {
		return nil
	}
	return append(out, c.Trigger(now))
}

// Trigger starts a checkpoint now, regardless of the interval (a savepoint,
// or a test). It must only be called when Pending() == 0.
func (c *Coordinator) Trigger(now time.Time) Action {
	if c.pending != nil {
		panic(fmt.Sprintf("coordinator: trigger while checkpoint %d is pending", c.pending.id))
	}
	id := c.nextID
	c.nextID++
	c.lastTrigger = now
	c.pending = &pending{id: id, time: now, acks: map[TaskID]Ack{}}
	if !c.cfg.Final {
		// A finished source task is gone: its last position stands for
		// it. With a final checkpoint it waits and snapshots again (its
		// chain's operators and sink still hold what it read last).
		for t, a := range c.finished {
			c.pending.acks[t] = a
		}
	}
	return Action{Kind: TriggerSources, ID: id, Time: now}
}

// Acked records a task's ack of checkpoint id. When every task has acked, it
// returns WriteMetadata. Acks of an aborted or unknown checkpoint are ignored.
func (c *Coordinator) Acked(id int64, ack Ack) []Action {
	p := c.pending
	if p == nil || p.id != id || p.writing {
		return nil
	}
	if _, known := c.tasks[ack.Task]; !known {
		return nil
	}
	p.acks[ack.Task] = ack
	if len(p.acks) < len(c.tasks) {
		return nil
	}
	p.writing = true
	acks := make([]Ack, 0, len(p.acks))
	for _, a := range p.acks {
		acks = append(acks, a)
	}
	sort.Slice(acks, func(i, j int) bool {
		if acks[i].Task.Vertex != acks[j].Task.Vertex {
			return acks[i].Task.Vertex < acks[j].Task.Vertex
		}
		return acks[i].Task.Subtask < acks[j].Task.Subtask
	})
	return []Action{{Kind: WriteMetadata, ID: id, Time: p.time, Acks: acks}}
}

// Declined records that a task could not take checkpoint id: it is aborted.
func (c *Coordinator) Declined(now time.Time, id int64, task TaskID, reason string) []Action {
	if c.pending == nil || c.pending.id != id || c.pending.writing {
		return nil
	}
	return []Action{c.abort(now, fmt.Sprintf("task %s declined checkpoint %d: %s", task, id, reason))}
}

// Written reports that checkpoint id's metadata is durable: it is complete.
func (c *Coordinator) Written(now time.Time, id int64) []Action {
	if c.pending == nil || c.pending.id != id {
		return nil
	}
	c.pending = nil
	c.lastEnd = now
	c.lastCompleted = id
	out := []Action{{Kind: NotifyComplete, ID: id}}
	if a, ok := c.maybeFinal(); ok {
		out = append(out, a...)
	}
	return out
}

// WriteFailed reports that writing checkpoint id's metadata failed: abort it.
func (c *Coordinator) WriteFailed(now time.Time, id int64, err error) []Action {
	if c.pending == nil || c.pending.id != id {
		return nil
	}
	return []Action{c.abort(now, fmt.Sprintf("writing checkpoint %d failed: %v", id, err))}
}

// SourceFinished records that a bounded source subtask reached its end with
// final state ack. Without a final checkpoint the task is gone: later
// checkpoints use that ack, so a finished source never blocks checkpoints of
// the rest. With one (Config.Final) the task waits for it and keeps acking
// each checkpoint with a fresh snapshot: its chain may hold operator state
// and sink output written since its last checkpoint, which its position at
// the end does not cover.
func (c *Coordinator) SourceFinished(ack Ack) []Action {
	if !c.sources[ack.Task] {
		return nil
	}
	c.finished[ack.Task] = ack
	c.done[ack.Task] = true
	if a, ok := c.maybeFinal(); ok {
		return a
	}
	if p := c.pending; p != nil && !p.writing && !c.cfg.Final {
		if _, ok := p.acks[ack.Task]; !ok {
			return c.Acked(p.id, ack)
		}
	}
	return nil
}

// TaskFinished records that a non-source task ended (all its inputs ended).
//
// With a final checkpoint (Config.Final) the task waits for it, as a
// finished source does, and checkpoints go on: the task snapshots its final
// state for each of them when asked (it gets no barriers any more), and
// for the pending one, if it has not acked it, now (SnapshotFinished). Its
// state no longer changes, so that snapshot is consistent with every
// later cut: all its inputs ended before their barriers.
//
// Without one the task is gone and left no snapshot: the job is draining,
// no new checkpoint starts, and a pending checkpoint that still needs this
// task's ack is aborted.
func (c *Coordinator) TaskFinished(now time.Time, task TaskID) []Action {
	if c.sources[task] {
		return nil
	}
	if _, known := c.tasks[task]; !known {
		return nil
	}
	c.done[task] = true
	var out []Action
	if c.cfg.Final {
		c.ended[task] = true
		if p := c.pending; p != nil && !p.writing && p.id != c.final {
			if _, ok := p.acks[task]; !ok {
				out = append(out, Action{Kind: SnapshotFinished, ID: p.id, Time: p.time, Task: task})
			}
		}
	} else {
		c.draining = true
		if p := c.pending; p != nil && !p.writing {
			if _, ok := p.acks[task]; !ok {
				out = append(out, c.abort(now, fmt.Sprintf("task %s finished before acking checkpoint %d", task, p.id)))
			}
		}
	}
	if a, ok := c.maybeFinal(); ok {
		out = append(out, a...)
	}
	return out
}

// FinishedTasks returns the non-source tasks that have finished and wait
// for the final checkpoint: each checkpoint triggered must ask them for a
// snapshot (they get no barrier), sorted by task.
func (c *Coordinator) FinishedTasks() []TaskID {
	out := make([]TaskID, 0, len(c.ended))
	for t := range c.ended {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vertex != out[j].Vertex {
			return out[i].Vertex < out[j].Vertex
		}
		return out[i].Subtask < out[j].Subtask
	})
	return out
}

// FinishedSources returns the source tasks that have finished.
func (c *Coordinator) FinishedSources() []TaskID {
	out := make([]TaskID, 0, len(c.finished))
	for t := range c.finished {
		out = append(out, t)
	}
	return out
}

// Final returns the id of the final checkpoint, or 0 if none was triggered.
func (c *Coordinator) Final() int64 { return c.final }

// maybeFinal triggers the final checkpoint when every task has finished and
// no checkpoint is being written.
func (c *Coordinator) maybeFinal() ([]Action, bool) {
	if !c.cfg.Final || c.final != 0 || len(c.done) < len(c.tasks) || c.pending != nil {
		return nil, false
	}
	a := c.Trigger(time.Now())
	c.final = a.ID
	// Finished sources' acks were copied in by Trigger; the final snapshot
	// replaces them, so the runtime asks every task.
	clear(c.pending.acks)
	return []Action{{Kind: TriggerFinal, ID: a.ID, Time: a.Time}}, true
}

func (c *Coordinator) runningSources() int {
	return len(c.sources) - len(c.finished)
}

func (c *Coordinator) abort(now time.Time, reason string) Action {
	id, triggered := c.pending.id, c.pending.time
	c.pending = nil
	c.lastEnd = now
	return Action{Kind: Abort, ID: id, Time: triggered, Reason: reason}
}
