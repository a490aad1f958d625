package statestore

// PendingSnapshot is a snapshot started by BeginSnapshot.
type PendingSnapshot struct {
	done chan struct{}
	info SnapshotInfo
	err  error
}

// Done is closed when the snapshot is written or has failed.
func (p *PendingSnapshot) Done() <-chan struct{} { return p.done }

// Wait waits for the snapshot and returns its description or its error.
func (p *PendingSnapshot) Wait() (SnapshotInfo, error) {
	<-p.done
	return p.info, p.err
}

// BeginSnapshot starts a snapshot of the store's current state into dir,
// which must not exist, and returns it; the store's next writes do not
// affect it. Its callers (the runtime's tasks) go on and take the result
// when Done is closed.
//
// The snapshot is written before BeginSnapshot returns. Most of its cost is
// in the PutThrough writes before it (the sstable the operator streams);
// what is left, finishing and ingesting that file and Pebble's checkpoint,
// takes a few milliseconds. Writing in the background would let the task
// go on sooner, but under a source that keeps both cores busy the writer
// would share them with the processing and the checkpoint would take
// longer, not shorter.
func (s *Store) BeginSnapshot(dir string) *PendingSnapshot {
	p := &PendingSnapshot{done: make(chan struct{})}
	p.info, p.err = s.Snapshot(dir)
	close(p.done)
	return p
}
