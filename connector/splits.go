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
