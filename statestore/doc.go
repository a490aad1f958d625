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
// # Concurrency
//
// A Store belongs to one subtask and is used from that subtask's goroutine
// only: its methods and those of its Tables are not safe for concurrent use.
package statestore
