package connector

// ListStateMode says how a connector's operator list state is dealt to the
// subtasks of a job restored at another parallelism than it was
// checkpointed at.
type ListStateMode uint8

const (
	// EvenSplit deals the entries of all old subtasks round-robin to the
	// new subtasks, so each entry goes to exactly one (Flink's operator
	// list state). At an unchanged parallelism each subtask gets its own
	// entries back.
	EvenSplit ListStateMode = iota
	// Union gives every new subtask the entries of all old subtasks
	// (Flink's union list state, which Kafka's source uses for its
	// partition offsets), at any parallelism.
	Union
)

// String names the mode as checkpoints record it.
func (m ListStateMode) String() string {
	if m == Union {
		return "union"
	}
	return "split"
}

// OperatorStateful is a SourceReader or SinkWriter with operator
// (non-keyed) list state: a list of opaque entries per subtask, kept in
// every checkpoint (in its _metadata, with the checksum that covers it)
// next to the source's position or the sink's transactions, and handed
// back, redistributed by its mode, when the job is restored.
type OperatorStateful interface {
	// OperatorStateMode says how the entries are redistributed on restore.
	OperatorStateMode() ListStateMode
	// SnapshotOperatorState returns the subtask's entries at a checkpoint
	// (a source between two batches, after Position; a sink at its
	// barrier, after PreCommit). The runtime copies them.
	SnapshotOperatorState() ([][]byte, error)
	// RestoreOperatorState is called once, before the first Next (before
	// Seek) or Write, when the job is restored from a checkpoint that holds
	// this operator's list state: entries is this subtask's share (possibly
	// empty). It is not called on a fresh start.
	RestoreOperatorState(entries [][]byte) error
}
