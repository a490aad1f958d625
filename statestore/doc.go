// Package statestore keeps the keyed state of one stateful subtask in a Pebble
// database, behind a bounded write-back cache, and snapshots and restores it
// for checkpoints.
//
// # Key layout
//
// Every Pebble key is
//
//	len(operatorID) (1 byte) | operatorID | keyGroup (2 bytes, big-endian) | key | stateName | len(stateName) (1 byte)
//
// The length-prefixed operator id makes each operator's keys one contiguous
// range that no other operator id can prefix; the big-endian key group then
// makes each key group of an operator one contiguous range, so a range of key
// groups can be scanned or copied for rescaling. The state name follows the
// key (as in DESIGN.md) and is terminated by its length in the last byte,
// which keeps the encoding unambiguous for keys of any length: decoding reads
// the state name length from the end. Operator ids and state names are
// therefore limited to 255 bytes each.
//
// # Write path
//
// Put and Delete go to the write-back cache; Flush (also called by Scan,
// Snapshot and when the cache is full) writes its dirty entries to Pebble as
// one batch, in key order.
//
// PutThrough is for state the caller keeps in memory anyway (the grouped
// aggregate writes its changed groups at each barrier): a key the cache
// does not hold bypasses it. While such writes arrive in strictly ascending
// key order, they are collected in a batch until there are more than a few
// thousand; then the batch is moved into an sstable that the rest of the
// run streams into, in the table format of the database, and CommitThrough
// (or Flush, Snapshot, or a Get, which must see the writes) ingests the
// file. Pebble then neither copies the writes into a batch, sorts and
// iterates them, nor flushes a memtable: the sstable is written once, as
// the writes arrive. A key out of order sends it and the rest of the run to
// the batch, which is committed after the ingestion, so later writes win.
// Small or unordered runs simply use the batch. Files for ingestion are
// written in the ingest folder of the working folder, which Pebble and
// snapshots ignore.
//
// ReplaceOperator turns the next write-through run into the operator's
// complete state: the run's sstable is opened at once, and CommitThrough
// ingests it while excising the operator's key span (IngestAndExcise), so
// the old state leaves the database without a compaction and the new file
// lands in the bottom level. The grouped aggregate does this when most of
// its groups changed since the last checkpoint.
//
// # Concurrency
//
// A Store belongs to one subtask and is used from that subtask's goroutine
// only: its methods and those of its Tables are not safe for concurrent use.
package statestore
