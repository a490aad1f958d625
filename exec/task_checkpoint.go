package exec

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
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
	t.restoredFinished = make([]bool, len(t.ops))
	sopts := statestore.Options{CacheBytes: t.job.stateBudget(), MaxParallelism: t.job.maxPar}
	for i, op := range t.ops {
		so, ok := op.(StatefulOperator)
		ko, keyed := op.(KeyedOperator)
		if ok && keyed {
			return fmt.Errorf("operator %s: is both a StatefulOperator and a KeyedOperator", t.v.Operators[i].Name)
		}
		if !ok && !keyed {
			continue
		}
		spec := t.v.Operators[i]
		work := filepath.Join(t.job.workDir, checkpoint.SubtaskDirName(spec.ID, t.subtask))
		var (
			st       *statestore.Store
			err      error
			restored bool
		)
		if r := ck.Restore; r != nil {
			// An operator that had finished wrote no state: it starts
			// empty (checkRestore made sure that no row can reach it) and
			// stays finished: every checkpoint of this run marks it so,
			// whatever path it takes (FLIP-147's "finished on restore"),
			// or a later restore into a query that feeds it new rows would
			// be let through.
			old := r.Meta.Operator(spec.ID)
			if old != nil && old.Finished() {
				t.restoredFinished[i] = true
			}
			if old != nil && !old.Finished() {
				if err := t.job.fault(FaultDuringRestore); err != nil {
					return err
				}
				restored = true
				if layout := r.Meta.KeyLayoutOf(); !state.ReadsLayout(layout) {
					st, err = t.migrateState(r, spec, keyed, layout, work, sopts)
				} else if old.Parallelism == t.v.Parallelism {
					if dir, ok := r.SubtaskDir(spec.ID, t.subtask); ok {
						st, err = statestore.Restore(dir, work, sopts)
					}
				} else {
					// Rescaling: gather this subtask's key groups from the
					// old subtasks that held them.
					first, last := types.KeyGroupRange(t.subtask, t.v.Parallelism, t.job.maxPar)
					var dirs []string
					if dirs, err = r.StateDirsForKeyGroups(spec.ID, first, last); err == nil {
						st, err = statestore.RestoreKeyGroups(dirs, work, first, last, sopts)
					}
				}
			}
		}
		if st == nil && err == nil {
			st, err = statestore.Open(work, sopts)
		}
		if err != nil {
			err = fmt.Errorf("state of %s: %w", spec.Name, err)
		} else if keyed {
			// The keyed layer lays its state out in the store itself; the
			// store snapshots, restores and rescales it as any other.
			t.stores[i], t.hasKeyed = st, true
			err = t.openKeyed(i, ko, st) // names the operator
		} else {
			t.stateful[i], t.stores[i] = so, st
			err = so.InitState(st, restored) // names the operator
		}
		if err != nil {
			if restored && statestore.IsCorruption(err) {
				err = &StateRestoreError{Checkpoint: ck.Restore.Meta.CheckpointID, Path: ck.Restore.Path, Err: err}
			}
			return err
		}
	}
	if ck.Restore != nil {
		if err := t.restoreLists(ck.Restore); err != nil {
			return err
		}
		if t.reader != nil {
			return t.seek(ck.Restore)
		}
	}
	return nil
}

// migrateState restores operator spec's state written in an older key
// layout into this subtask's store in the current one: every old
// subtask's snapshot is read (with the key groups hashed anew, any of them
// may hold this subtask's keys), each key is re-encoded and re-hashed, and
// the keys of this subtask's key groups are kept (state.MigrateLayout1),
// as in a rescale where every old subtask overlaps every new one. Layout 1
// is that of StatefulOperators' Tables; a KeyedOperator's state never had
// it.
func (t *task) migrateState(r *checkpoint.Checkpoint, spec OperatorSpec, keyed bool, layout int, work string, sopts statestore.Options) (*statestore.Store, error) {
	if layout != 1 || keyed {
		return nil, fmt.Errorf("checkpoint %d has state in key layout %d, which this build cannot read into operator %s (it writes layout %d)",
			r.Meta.CheckpointID, layout, spec.Name, state.KeyLayout)
	}
	dirs, err := r.StateDirsForKeyGroups(spec.ID, 0, t.job.maxPar-1)
	if err != nil {
		return nil, err
	}
	first, last := types.KeyGroupRange(t.subtask, t.v.Parallelism, t.job.maxPar)
	st, err := statestore.RestoreRewritten(dirs, work, sopts, state.MigrateLayout1(first, last, t.job.maxPar))
	if err != nil {
		return nil, fmt.Errorf("migrate from key layout 1: %w", err)
	}
	return st, nil
}

// seek moves a source reader to the position restored checkpoint r holds
// for it: its own subtask's position when the parallelism is unchanged,
// otherwise all old subtasks' positions (connector.RescalableReader).
//
// When every old subtask had read its input to the end
// (checkpoint.SourcePosition.Ended), the source stays ended: the reader is
// still moved to its position (which checks it against the input, so that
// a filesystem source whose folder gained a file is refused as before),
// but the task then reads nothing and ends (srcEnded), as Flink does not
// run a source that had finished. Its input may have grown since (a
// bound raised in the query): the operators below it may have let go of
// what more of it would need (a regular, semi or anti join drops the
// other side's rows when an input ends, InputEndOperator), so reading on
// could give wrong results.
func (t *task) seek(r *checkpoint.Checkpoint) error {
	var all [][]byte
	var own []byte
	ended := 0
	for _, sp := range r.Meta.Sources {
		if sp.Source != t.v.ID {
			continue
		}
		for len(all) <= sp.Subtask {
			all = append(all, nil)
		}
		all[sp.Subtask] = sp.Position
		if sp.Subtask == t.subtask {
			own = sp.Position
		}
		if sp.Ended {
			ended++
		}
	}
	t.srcEnded = len(all) > 0 && ended == len(all)
	switch {
	case len(all) == 0:
		return nil // a source new to the query starts from the beginning
	case len(all) == t.v.Parallelism:
		if err := t.reader.Seek(own); err != nil {
			return fmt.Errorf("source %s: restore position: %w", t.v.SourceName, err)
		}
		return nil
	}
	rr, ok := t.reader.(connector.RescalableReader)
	if !ok {
		return fmt.Errorf("source %s: its positions were taken at parallelism %d and it cannot be restored at %d",
			t.v.SourceName, len(all), t.v.Parallelism)
	}
	if err := rr.SeekAll(all); err != nil {
		return fmt.Errorf("source %s: restore positions at parallelism %d: %w", t.v.SourceName, t.v.Parallelism, err)
	}
	return nil
}

// sourceCheckpoint starts checkpoint id at a source task, between two
// batches: record the position, snapshot, send the barrier, ack.
func (t *task) sourceCheckpoint(id int64) error {
	if err := t.job.fault(FaultSourceTrigger); err != nil {
		return err
	}
	return t.checkpoint(id, 0, true, false)
}

// checkpoint snapshots the task's state for checkpoint id, forwards the
// barrier (unless this is the final checkpoint of a finished task) and acks.
// With finished (the task's whole vertex finished at the end of its input,
// checkpointer.vertexEnded) its operators write no state, only a mark.
// A failure to take the snapshot declines the checkpoint and the job goes
// on, unless the state could not be written: then the stores no longer hold
// what the operators think is written, and the task fails, so that the job
// restores the latest checkpoint. A failure to forward fails the task.
func (t *task) checkpoint(id int64, alignment time.Duration, forward, finished bool) error {
	ck := t.job.ck
	start := time.Now()
	snap, err := t.snapshot(id, finished)
	if err != nil {
		var swe *stateWriteError
		if errors.As(err, &swe) {
			return err
		}
		t.job.opts.logf("task %s (%d/%d): declines checkpoint %d: %v", t.v.Name, t.subtask+1, t.v.Parallelism, id, err)
		ck.send(ckptEvent{kind: evDecline, id: id, snap: taskSnapshot{task: t.taskID()}, err: err})
	}
	if err := t.job.fault(FaultBeforeAck); err != nil {
		return err
	}
	if _, txnl := t.writer.(connector.TransactionalWriter); t.writer != nil && !txnl {
		if err := t.writer.Flush(); err != nil {
			return fmt.Errorf("flush sink %s: %w", t.v.SinkName, err)
		}
	}
	if t.x != nil && forward {
		if err := t.x.barrier(id); err != nil {
			return err
		}
	}
	if snap != nil {
		snap.alignment, snap.sync = alignment, time.Since(start)
		ck.send(ckptEvent{kind: evAck, id: id, snap: *snap})
	}
	return nil
}

// stateWriteError is a failure to write an operator's state or to
// pre-commit the sink for a checkpoint. It fails the task (see checkpoint).
type stateWriteError struct {
	id  int64
	err error
}

func (e *stateWriteError) Error() string {
	return fmt.Sprintf("checkpoint %d: %v", e.id, e.err)
}

func (e *stateWriteError) Unwrap() error { return e.err }

// snapshot records the source position, writes the state snapshot of
// every stateful operator of the chain and pre-commits the sink. With
// finished, the operators write nothing and are marked finished: their
// inputs ended for good, so no row can change their state again, and a
// restore gives them empty state (checkRestore keeps the sources above
// them ended). At the end of a bounded job this spares the final
// checkpoint from writing out all the state held in memory.
//
// The stores write their snapshots before it returns, not in the
// background: most of the cost is the sstable an operator streams in
// PrepareSnapshot, and under a source that keeps every core busy a
// background writer would share the cores with the processing and make
// the checkpoint longer, not shorter (measured with W2).
func (t *task) snapshot(id int64, finished bool) (*taskSnapshot, error) {
	s := &taskSnapshot{task: t.taskID()}
	// Everything the chain computed before the barrier goes out before it:
	// output an operator holds back (a mini-batch) reaches the operators
	// after it, the sink, and the exchange, in chain order. Only then are
	// the state and the sink's transaction cut.
	for i, op := range t.ops {
		if f, ok := op.(barrierFlusher); ok {
			if err := f.flushBeforeBarrier(t.emitters[i]); err != nil {
				return nil, &stateWriteError{id: id, err: fmt.Errorf("flush before the barrier: %w", attributeOp(t.v.Operators[i].Name, err))}
			}
		}
	}
	if err := t.flushAll(); err != nil {
		// The operators let go of what they flushed: declining would go on
		// without it, so the task fails and the job restores.
		return nil, &stateWriteError{id: id, err: fmt.Errorf("flush before the barrier: %w", err)}
	}
	if t.reader != nil {
		pos, err := t.reader.Position()
		if err != nil {
			return nil, fmt.Errorf("source %s: position: %w", t.v.SourceName, err)
		}
		s.source, s.position, s.ended = t.v.ID, pos, t.srcEnded
		if _, ok := t.reader.(connector.CheckpointListener); ok {
			t.positions = append(t.positions, pendingTxn{id: id, txn: pos})
		}
	}
	for i, st := range t.stores {
		if st == nil {
			continue
		}
		spec := t.v.Operators[i]
		if finished || t.restoredFinished[i] {
			s.ops = append(s.ops, opSnapshot{id: spec.ID, name: spec.Name, parallelism: t.v.Parallelism, finished: true})
			continue
		}
		// A keyed operator's state is in its store already (the store's
		// write-back cache is flushed by Snapshot); a stateful one writes
		// what it holds in memory.
		if so := t.stateful[i]; so != nil {
			if err := so.PrepareSnapshot(); err != nil {
				return nil, &stateWriteError{id: id, err: err} // names the operator
			}
		}
		if err := t.job.fault(FaultMidSnapshot); err != nil {
			return nil, err
		}
		dir, rel, err := t.job.ck.subtaskDir(id, spec.ID, t.subtask)
		if err != nil {
			return nil, err
		}
		info, err := t.stores[i].Snapshot(dir)
		t.job.ck.release(id)
		if err != nil {
			return nil, &stateWriteError{id: id, err: fmt.Errorf("state of %s: %w", spec.Name, err)}
		}
		s.ops = append(s.ops, opSnapshot{id: spec.ID, name: spec.Name, parallelism: t.v.Parallelism, dir: rel, info: info})
	}
	// Last, the sink pre-commits what it has written, which now includes
	// every row that the state snapshot accounts for.
	if w, ok := t.writer.(connector.TransactionalWriter); ok {
		txn, err := w.PreCommit(id)
		if err != nil {
			// The rows written since the last checkpoint may not all be
			// on disk: the task fails and the job restores, which writes
			// them again, rather than go on without them.
			return nil, &stateWriteError{id: id, err: fmt.Errorf("sink %s: pre-commit: %w", t.v.SinkName, err)}
		}
		t.txns = append(t.txns, pendingTxn{id: id, txn: txn})
		// The checkpoint records every transaction not yet committed: a
		// restore must commit them all.
		s.sink = t.job.sinkID(t.vi)
		for _, p := range t.txns {
			s.txns = append(s.txns, p.txn)
		}
	}
	// Then the source's and the sink's list state, as of this cut.
	if err := t.snapshotLists(s); err != nil {
		return nil, err
	}
	return s, nil
}

// finishCheckpointing tells the coordinator that the task ended: a source
// with its final position (so later checkpoints need not wait for it). With
// a final checkpoint the task then waits: a source snapshots at each
// trigger, another task when the coordinator asks (ctlSnapshot: its inputs
// ended, no barrier comes), so that checkpoints go on while the rest of the
// job runs; both snapshot the final checkpoint and end when it is complete
// (and their sinks committed). Without a final checkpoint a non-source
// task leaves no snapshot and no new checkpoint starts.
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
		snap.source, snap.position, snap.ended = t.v.ID, pos, t.srcEnded
		if err := t.snapshotList(&snap, t.reader, sourceListOwner(t.v.ID), "source "+t.v.SourceName); err != nil {
			return err
		}
		ck.send(ckptEvent{kind: evSourceFinished, snap: snap})
	} else {
		ck.send(ckptEvent{kind: evTaskFinished, snap: taskSnapshot{task: t.taskID(), ended: !t.stopped}})
	}
	if !ck.final() {
		return nil
	}
	for !t.finalDone {
		select {
		case m := <-t.ctl:
			if err := t.control(m); err != nil {
				return err
			}
		case tr := <-t.trigger:
			// A checkpoint while other sources still run: this task
			// snapshots like a running one (its position is the end), so
			// that the rows its chain's sink wrote since the last
			// checkpoint are pre-committed in it and its operators' state
			// is in it. Its output channels have ended: no barrier.
			if err := t.checkpoint(tr.id, 0, false, false); err != nil {
				return err
			}
		case <-t.job.ctx.Done():
			return t.job.ctx.Err()
		}
	}
	return nil
}

// endedForGood reports whether the task finished because its input ended,
// not because it was stopped (a stop, after which a restore reads on).
func (t *task) endedForGood() bool {
	if t.v.Source != nil {
		return t.srcEnded
	}
	return !t.stopped
}

// pendingTxn is a sink transaction pre-committed for checkpoint id.
type pendingTxn struct {
	id  int64
	txn []byte
}

// ctlMsg is what the checkpointer tells a task.
type ctlMsg struct {
	kind ctlKind
	id   int64
	// finished (ctlFinal, ctlSnapshot): every task of this task's vertex
	// finished at the end of its input; its operators write no state.
	finished bool
}

type ctlKind uint8

const (
	// ctlComplete: checkpoint id is complete; commit what it covers.
	ctlComplete ctlKind = iota
	// ctlFinal: snapshot the final state for checkpoint id (the task has finished).
	ctlFinal
	// ctlSnapshot: snapshot the final state for checkpoint id, which is not
	// the final checkpoint: a non-source task that finished gets no
	// barriers, and other tasks still run (coordinator.SnapshotFinished).
	ctlSnapshot
)

// triggerMsg starts a checkpoint at a source task; stop ends the source
// right after it (stop with savepoint).
type triggerMsg struct {
	id   int64
	stop bool
}

// control handles a message from the checkpointer.
func (t *task) control(m ctlMsg) error {
	switch m.kind {
	case ctlFinal:
		t.finalID = m.id
		return t.checkpoint(m.id, 0, false, m.finished && t.endedForGood())
	case ctlSnapshot:
		return t.checkpoint(m.id, 0, false, m.finished && t.endedForGood())
	case ctlComplete:
		if err := t.commit(m.id); err != nil {
			return err
		}
		t.notifySource(m.id)
		if t.finalID != 0 && m.id >= t.finalID {
			t.finalDone = true
		}
	}
	return nil
}

// notifySource tells a connector.CheckpointListener source that checkpoint
// id is complete, with the latest of its positions up to id. A failure is
// logged: what the listener does (offsets for monitoring) is not what the
// checkpoint guarantees.
func (t *task) notifySource(id int64) {
	l, ok := t.reader.(connector.CheckpointListener)
	if !ok {
		return
	}
	n := 0
	for n < len(t.positions) && t.positions[n].id <= id {
		n++
	}
	if n == 0 {
		return
	}
	p := t.positions[n-1]
	t.positions = t.positions[n:]
	if err := l.CheckpointComplete(p.id, p.txn); err != nil {
		t.job.opts.logf("task %s (%d/%d): source %s: checkpoint %d complete: %v", t.v.Name, t.subtask+1, t.v.Parallelism, t.v.SourceName, p.id, err)
	}
}

// commit commits the sink transactions of checkpoints up to id.
func (t *task) commit(id int64) error {
	w, ok := t.writer.(connector.TransactionalWriter)
	if !ok {
		return nil
	}
	n := 0
	for _, p := range t.txns {
		if p.id > id {
			break
		}
		if err := w.Commit(p.txn); err != nil {
			return fmt.Errorf("sink %s: commit checkpoint %d: %w", t.v.SinkName, p.id, err)
		}
		n++
		if err := t.job.fault(FaultMidCommit); err != nil {
			return err
		}
	}
	t.txns = t.txns[n:]
	return nil
}

// StateRestoreError is a failure to read an operator's state back from a
// checkpoint because its files are damaged: they passed the checks of
// checkpoint.Load (sizes, and checksums from format version 2 on) but the
// state store found them corrupt. Restoring an older checkpoint may work.
// Other restore failures (a full disk) are not StateRestoreErrors: a
// restart of the same checkpoint may get past them.
type StateRestoreError struct {
	Checkpoint int64  // the checkpoint's id
	Path       string // its folder
	Err        error
}

func (e *StateRestoreError) Error() string {
	return fmt.Sprintf("restore checkpoint %d (%s): %v", e.Checkpoint, e.Path, e.Err)
}

func (e *StateRestoreError) Unwrap() error { return e.Err }
