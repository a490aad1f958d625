// Package state is the keyed-state and time layer that stateful operators
// share: typed state handles scoped to a current key (ValueState, MapState,
// ListState, SortedMapState), per-key timers in event and processing time,
// and state TTL.
//
// # What an operator does
//
// An operator gets a Keyed for its subtask (NewMemory without checkpoints,
// Open over the subtask's statestore with them; the runtime chooses),
// registers its handles once, and for each row sets the current key and
// uses the handles:
//
//	k.SetCurrentKeyRow(row, keyCols)
//	sum, _, err := total.Value()
//	err = total.Update(sum + row[1].Int())
//	err = k.RegisterTimer(state.EventTime, windowEnd, nil)
//
// It never writes spill or restore code and never asks whether
// checkpointing is on: over a statestore, state is cached in memory within
// the store's budget, written back at checkpoints and restored (or
// rescaled by key group) by the store; in memory it simply stays.
// Between batches the runtime calls AdvanceWatermark and
// AdvanceProcessingTime, which fire due timers with their key as the
// current key.
//
// # Storage layout
//
// Within a statestore Space (len(operator) | operator | key group), each
// entry's key is
//
//	len(state name) | state name | key | (map key, list position, or timer)
//
// where key is the current key in the order-preserving encoding of
// AppendValue (big-endian integers with the sign bit flipped, escaped
// strings, NULL first) and map keys use an order-preserving Codec. So a key
// group is one range, one key's state in one state is one prefix scan, and a
// sorted map iterates in order. Timers are entries of internal states
// ("_timer/e", "_timer/p", "_timer/ttl") keyed by timestamp first, so a key
// group's timers iterate in timestamp order across keys; AdvanceWatermark
// merges the owned key groups. State names starting with "_" are reserved.
//
// # Key groups and the hash exchange
//
// KeyGroup hashes the order-preserving encoding, in which INT and BIGINT
// values of equal value are the same bytes: they land in the same key group
// whatever their SQL type. The HASH exchange routes rows by the same hash
// (HashIntKey is its unrolled form for one integer key), so an operator on
// this layer finds every row's key in one of its own key groups. These
// keys and hashes are key layout 2; KeyLayout, recorded in each
// checkpoint, is 3: layout 2 with records a build of layout 2 would skip
// (a join's deltas, DISTINCT value records). This build reads both as
// they are (ReadsLayout); state of layout 1 (types.HashKey over
// types.AppendKey, GroupAggregate's own table layout) is migrated at
// restore by MigrateLayout1.
//
// # Records
//
// Records is the layer's cache for an operator that keeps one record per
// key in its own typed structures (GroupAggregate's groups): the operator
// says which records were added, changed or removed and encodes them;
// Records writes the changes back at the barrier in key order (sorted
// sstable ingestion, replacing the state whole when most of it changed),
// spills past the budget, looks up keys not in memory when backed, and
// loads the records on restore when they fit. Its records are at the
// layout of a ValueState of the same name. With a TTL, the records that
// only the store holds (spilled, or left there by a restore) are indexed
// by write time under the name + "+t" (write time, sign bit flipped |
// key) in their key group, and each snapshot deletes the expired ones
// with a range scan of the due entries (records_ttlindex.go).
package state
