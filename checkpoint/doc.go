// Package checkpoint owns the on-disk layout of checkpoints and savepoints:
// the folder structure, the versioned and checksummed _metadata file, atomic
// completion, finding the latest valid checkpoint, retention, savepoints and
// inspection.
//
// Layout:
//
//	<dir>/<job>/chk-<n>/                 one checkpoint
//	<dir>/<job>/chk-<n>/op-<id>-<k>/     the state snapshot of operator <id>, subtask <k>
//	<dir>/<job>/chk-<n>/_sinkdata        the sinks' pre-committed transactions, if any
//	<dir>/<job>/chk-<n>/_metadata        written last, atomically
//
// The sinks' transactions (a Kafka exactly-once sink's records, say) are
// raw bytes in _sinkdata, whose size and CRC-32C _metadata records, with
// each transaction's offset and length; so _metadata stays small and
// retention never reads them. Format versions before 5 have them inline.
//
// _metadata lists every state file with its size and CRC-32C; Load (and so
// Latest, List and Inspect) verifies them all, so a damaged file makes the
// checkpoint corrupt before Pebble ever opens it. Retention checks sizes
// only, to stay cheap.
//
// A folder without _metadata is incomplete: it is ignored by Latest and
// deleted by Retain once a newer checkpoint is complete. A savepoint is a
// folder with the same content (subtask folders and _metadata) anywhere the
// user chooses; its files are real copies, so it is self-contained.
//
// Subtask state folders are Pebble checkpoints (see package statestore),
// whose sstables are hard links shared between checkpoints of the same job.
// Deleting one checkpoint folder only removes its links, so it never breaks
// another checkpoint as long as all of them are on one filesystem.
//
// All file I/O goes through the FS interface.
package checkpoint
