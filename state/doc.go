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
// whatever their SQL type. That is not the hash of the HASH exchange and of
// GroupAggregate (types.HashKey over types.AppendKey, which keeps the kind,
// so INT 1 and BIGINT 1 differ), which existing checkpoints depend on. An
// operator on this layer behind today's exchange must therefore either pass
// the exchange's key group (SetCurrentKeyInGroup), or the exchange must
// route by KeyGroup. Moving the exchanges and GroupAggregate onto this hash
// and layout needs a versioned switch: a job restored from a checkpoint
// written with the old hash must keep it (recorded in _metadata), and only
// new jobs (or a savepoint migration that re-keys the state) use the new
// one.
package state
