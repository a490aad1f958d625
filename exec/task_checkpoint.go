package exec

import (
	"fmt"
	"time"

	"github.com/weir-sql/weir/statestore"
)

// This file is the task's part of the checkpoint algorithm: restoring state
// at start, snapshotting at an aligned barrier (or at a source's trigger),
// forwarding the barrier and acking the coordinator.

// restore opens the state stores of the task's stateful operators, restored
// from Options.Checkpoint.Restore when set, and seeks a source reader to its
// checkpointed position.
func (t *task) restore() error {
	ck := t.job.opts.Checkpoint
	if ck == nil {
		return nil
	}
	t.stateful = make([]StatefulOperator, len(t.ops))
	t.stores = make([]*statestore.Store, len(t.ops))
	sopts := statestore.Options{CacheBytes: ck.StateCacheBytes, MaxParallelism: t.job.maxPar}
	for i, op := range t.ops {
		so, ok := op.(StatefulOperator)
		if !ok {
			continue
		}
		spec := t.v.Operators[i]
		work := ck.workDir(spec.ID, t.subtask)
		var (
			st       *statestore.Store
			err      error
			restored bool
		)
		if ck.Restore != nil {
			if dir, ok := ck.Restore.SubtaskDir(spec.ID, t.subtask); ok {
				if err := t.job.fault(FaultDuringRestore); err != nil {
					return err
				}
				st, err = statestore.Restore(dir, work, sopts)
				restored = true
			}
		}
		if st == nil && err == nil {
			st, err = statestore.Open(work, sopts)
		}
		if err != nil {
			return fmt.Errorf("state of %s: %w", spec.Name, err)
		}
		t.stateful[i], t.stores[i] = so, st
		if err := so.InitState(st, restored); err != nil {
			return fmt.Errorf("state of %s: %w", spec.Name, err)
		}
	}
	if t.reader != nil && ck.Restore != nil {
		for _, sp := range ck.Restore.Meta.Sources {
			if sp.Source == t.v.ID && sp.Subtask == t.subtask {
				if err := t.reader.Seek(sp.Position); err != nil {
					return fmt.Errorf("source %s: restore position: %w", t.v.SourceName, err)
				}
			}
		}
	}
	return nil
}

// sourceCheckpoint starts checkpoint id at a source task, between two
// batches: record the position, snapshot, send the barrier, ack.
func (t *task) sourceCheckpoint(id int64) error {
	if err := t.job.fault(FaultSourceTrigger); err != nil {
		return err
	}
	return t.checkpoint(id, 0)
}

// checkpoint snapshots the task's state for checkpoint id, forwards the
// barrier and acks. A failure to snapshot declines the checkpoint (the job
// goes on); a failure to forward fails the task.
func (t *task) checkpoint(id int64, alignment time.Duration) error {
	ck := t.job.ck
	snap, err := t.snapshot(id)
	if err != nil {
		t.job.opts.logf("task %s (%d/%d): declines checkpoint %d: %v", t.v.Name, t.subtask+1, t.v.Parallelism, id, err)
		ck.send(ckptEvent{kind: evDecline, id: id, snap: taskSnapshot{task: t.taskID()}, err: err})
	}
	if err := t.job.fault(FaultBeforeAck); err != nil {
		return err
	}
	if t.writer != nil {
		if err := t.writer.Flush(); err != nil {
			return fmt.Errorf("flush sink %s: %w", t.v.SinkName, err)
		}
	}
	if t.x != nil {
		if err := t.x.barrier(id); err != nil {
			return err
		}
	}
	if snap != nil {
		snap.alignment = alignment
		ck.send(ckptEvent{kind: evAck, id: id, snap: *snap})
	}
	return nil
}

// snapshot records the source position and writes the state snapshot of
// every stateful operator of the chain.
func (t *task) snapshot(id int64) (*taskSnapshot, error) {
	s := &taskSnapshot{task: t.taskID()}
	if t.reader != nil {
		pos, err := t.reader.Position()
		if err != nil {
			return nil, fmt.Errorf("source %s: position: %w", t.v.SourceName, err)
		}
		s.source, s.position = t.v.ID, pos
	}
	for i, so := range t.stateful {
		if so == nil {
			continue
		}
		spec := t.v.Operators[i]
		if err := so.PrepareSnapshot(); err != nil {
			return nil, err
		}
		if err := t.job.fault(FaultMidSnapshot); err != nil {
			return nil, err
		}
		dir, rel, err := t.job.ck.subtaskDir(id, spec.ID, t.subtask)
		if err != nil {
			return nil, err
		}
		info, err := t.stores[i].Snapshot(dir)
		if err != nil {
			return nil, fmt.Errorf("state of %s: %w", spec.Name, err)
		}
		s.ops = append(s.ops, opSnapshot{id: spec.ID, name: spec.Name, parallelism: t.v.Parallelism, dir: rel, info: info})
	}
	return s, nil
}

// finishCheckpointing tells the coordinator that the task ended: a source
// with its final position (so later checkpoints need not wait for it),
// another task so that no new checkpoint starts.
func (t *task) finishCheckpointing() error {
	ck := t.job.ck
	if ck == nil {
		return nil
	}
	if t.v.Source != nil {
		snap := taskSnapshot{task: t.taskID()}
		pos, err := t.reader.Position()
		if err != nil {
			return fmt.Errorf("source %s: position: %w", t.v.SourceName, err)
		}
		snap.source, snap.position = t.v.ID, pos
		ck.send(ckptEvent{kind: evSourceFinished, snap: snap})
		return nil
	}
	ck.send(ckptEvent{kind: evTaskFinished, snap: taskSnapshot{task: t.taskID()}})
	return nil
}
