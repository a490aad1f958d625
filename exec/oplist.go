package exec

import (
	"bytes"
	"fmt"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
)

// This file carries the operator list state of sources and sinks
// (connector.OperatorStateful) into checkpoints and back: each source
// reader and sink writer that has some adds its entries to the task's
// snapshot, the checkpointer lists them in _metadata, and a restore hands
// each subtask its share (checkpoint.Metadata.OperatorListShare).

// listOwner names the owner of a source's or sink's list state in
// checkpoints.
func sourceListOwner(vertexID string) string { return "source:" + vertexID }
func sinkListOwner(sinkID string) string     { return "sink:" + sinkID }

// snapshotList adds the list state of c (a reader or writer), if it has
// any, to s.
func (t *task) snapshotList(s *taskSnapshot, c any, owner, what string) error {
	os, ok := c.(connector.OperatorStateful)
	if !ok {
		return nil
	}
	entries, err := os.SnapshotOperatorState()
	if err != nil {
		return fmt.Errorf("%s: operator state: %w", what, err)
	}
	l := checkpoint.OperatorList{Owner: owner, Subtask: t.subtask, Mode: os.OperatorStateMode().String(), Entries: make([][]byte, len(entries))}
	for i, e := range entries {
		l.Entries[i] = bytes.Clone(e)
		if l.Entries[i] == nil {
			l.Entries[i] = []byte{}
		}
	}
	s.lists = append(s.lists, l)
	return nil
}

// snapshotLists adds the list state of the task's source reader and sink
// writer to s.
func (t *task) snapshotLists(s *taskSnapshot) error {
	if t.reader != nil {
		if err := t.snapshotList(s, t.reader, sourceListOwner(t.v.ID), "source "+t.v.SourceName); err != nil {
			return err
		}
	}
	if t.writer != nil {
		return t.snapshotList(s, t.writer, sinkListOwner(t.job.sinkID(t.vi)), "sink "+t.v.SinkName)
	}
	return nil
}

// restoreLists hands the task's source reader and sink writer their share
// of the list state that restored checkpoint r holds for them.
func (t *task) restoreLists(r *checkpoint.Checkpoint) error {
	restore := func(c any, owner, what string) error {
		os, ok := c.(connector.OperatorStateful)
		if !ok {
			return nil
		}
		entries, found := r.Meta.OperatorListShare(owner, t.subtask, t.v.Parallelism)
		if !found {
			return nil
		}
		if err := os.RestoreOperatorState(entries); err != nil {
			return fmt.Errorf("%s: restore operator state: %w", what, err)
		}
		return nil
	}
	if t.reader != nil {
		if err := restore(t.reader, sourceListOwner(t.v.ID), "source "+t.v.SourceName); err != nil {
			return err
		}
	}
	if t.writer != nil {
		return restore(t.writer, sinkListOwner(t.job.sinkID(t.vi)), "sink "+t.v.SinkName)
	}
	return nil
}
