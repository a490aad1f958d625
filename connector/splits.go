package connector

// SplitReader is a SourceReader whose subtask reads several splits (the
// files of a filesystem source, the partitions of a Kafka topic), each an
// ordered stream of its own. The runtime then computes the subtask's
// watermark per split: it is the minimum over the splits' watermarks, a
// split without data for 'table.exec.source.idle-timeout' is left out of
// the minimum until it sends data again, and a finished split is left out
// for good. A reader that does not implement it is one split.
//
// Each call to Next appends rows of at most one split; after it, LastSplit
// says which.
type SplitReader interface {
	SourceReader
	// LastSplit returns the split the rows appended by the last call to
	// Next came from ("" if it appended none; a split id is any stable
	// non-empty string: a relative path, "topic-partition"), and the splits
	// that reached their end during that call (their watermarks stop
	// holding the subtask's back). The slice is valid until the next Next.
	LastSplit() (split string, finished []string)
}

// SplitLister is a SplitReader that knows the splits assigned to its
// subtask before it reads from them (the partitions of a Kafka topic). The
// runtime then counts a split in the subtask's watermark from the moment
// it is assigned, not from its first row: a split that has not sent a row
// yet holds the watermark back (until the idle timeout leaves it out), so
// reading a backlog of one split first does not make the others' rows
// late.
type SplitLister interface {
	SplitReader
	// SplitCount returns how many splits were assigned so far; it only
	// grows, and the runtime calls AssignedSplits when it does.
	SplitCount() int
	// AssignedSplits appends to dst the ids of the assigned splits that
	// have not finished.
	AssignedSplits(dst []string) []string
}
