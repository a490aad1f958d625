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
// which must not exist.
func (s *Store) BeginSnapshot(dir string) *PendingSnapshot {
	p := &PendingSnapshot{done: make(chan struct{})}
	p.info, p.err = s.Snapshot(dir)
	close(p.done)
	return p
}
