package statestore

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Space is the state of one operator under keys the caller lays out. Every
// Pebble key of a Space is
//
//	len(operatorID) (1 byte) | operatorID | keyGroup (2 bytes, big-endian) | key
//
// so, as with Tables, an operator is one key range and each of its key
// groups a sub-range: Snapshot, Restore and RestoreKeyGroups treat a
// Space's keys like a Table's. Within a key group the caller's keys sort
// bytewise, and Scan iterates any range of them. The keyed-state layer
// (package state) builds its typed state on a Space.
//
// An operator id is used either through Tables or through a Space, never
// both: Table.Scan expects its own layout. Get, Put and Delete go through
// the store's write-back cache, as Table's do. Like the Store, a Space is not
// safe for concurrent use.
type Space struct {
	s        *Store
	opPrefix []byte
	lo, hi   []byte // Scan's bounds, reused
}

// Space returns the key space of one operator. It is cheap and may be kept
// for the store's lifetime. It fails if operatorID is longer than 255 bytes.
func (s *Store) Space(operatorID string) (*Space, error) {
	if len(operatorID) > maxNameLen {
		return nil, fmt.Errorf("statestore: operator id %q longer than %d bytes", operatorID, maxNameLen)
	}
	return &Space{s: s, opPrefix: appendOperatorPrefix(nil, operatorID)}, nil
}

// Same reports whether o is a Space of the same store and operator as sp,
// so that their keys share one order.
func (sp *Space) Same(o *Space) bool {
	return sp != nil && o != nil && sp.s == o.s && bytes.Equal(sp.opPrefix, o.opPrefix)
}

// MaxParallelism returns the number of key groups of the store.
func (sp *Space) MaxParallelism() int { return sp.s.opts.MaxParallelism }

// CacheBytes returns the store's cache budget (Options.CacheBytes): what a
// user that keeps the Space's state in memory may spend on it.
func (sp *Space) CacheBytes() int64 { return sp.s.opts.CacheBytes }

// OnSnapshot is Store.OnSnapshot.
func (sp *Space) OnSnapshot(fn func() error) { sp.s.OnSnapshot(fn) }

func (sp *Space) checkGroup(keyGroup int) error {
	if keyGroup < 0 || keyGroup >= sp.s.opts.MaxParallelism {
		return fmt.Errorf("statestore: key group %d outside [0, %d)", keyGroup, sp.s.opts.MaxParallelism)
	}
	return nil
}

func (sp *Space) encode(keyGroup int, key []byte) ([]byte, error) {
	if err := sp.s.check(); err != nil {
		return nil, err
	}
	if err := sp.checkGroup(keyGroup); err != nil {
		return nil, err
	}
	b := append(sp.s.keyBuf[:0], sp.opPrefix...)
	b = binary.BigEndian.AppendUint16(b, uint16(keyGroup))
	sp.s.keyBuf = append(b, key...)
	return sp.s.keyBuf, nil
}

// Get returns the value stored for key in keyGroup and whether there is one.
// The returned slice must not be modified and is valid only until the next
// call of any method of the Store, its Tables or Spaces.
func (sp *Space) Get(keyGroup int, key []byte) ([]byte, bool, error) {
	k, err := sp.encode(keyGroup, key)
	if err != nil {
		return nil, false, err
	}
	return sp.s.get(k)
}

// Put stores a copy of value for key in keyGroup. Neither slice is retained.
func (sp *Space) Put(keyGroup int, key, value []byte) error {
	k, err := sp.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return sp.s.put(k, value, false)
}

// Delete removes key from keyGroup; deleting a missing key is not an error.
func (sp *Space) Delete(keyGroup int, key []byte) error {
	k, err := sp.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return sp.s.put(k, nil, true)
}

// DeleteUncached is Delete for a caller that keeps the key's state in
// memory and does not read it back from the store soon (state.Records):
// the deletion waits in the cache like any write until the next flush,
// which then drops the key from the cache instead of keeping it as a
// cached miss. Keys deleted so do not fill the cache with misses nobody
// looks up (an interval join deletes a key each time it empties).
func (sp *Space) DeleteUncached(keyGroup int, key []byte) error {
	k, err := sp.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return sp.s.write(k, nil, true, true)
}

// Scan calls fn for the entries of keyGroup whose keys lie in [lower,
// upper), in ascending key order, or descending with reverse. A nil upper
// means the end of the key group. It flushes the cache first, so it sees
// every write. The slices passed to fn are valid only during the call, and
// fn must not call methods of the Store; it returns false to stop the scan,
// or an error, which stops it and is returned.
func (sp *Space) Scan(keyGroup int, lower, upper []byte, reverse bool, fn func(key, value []byte) (bool, error)) error {
	if err := sp.checkGroup(keyGroup); err != nil {
		return err
	}
	if err := sp.s.Flush(); err != nil {
		return err
	}
	lo := binary.BigEndian.AppendUint16(append(sp.lo[:0], sp.opPrefix...), uint16(keyGroup))
	hi := sp.hi[:0]
	if upper != nil {
		hi = append(append(hi, lo...), upper...)
	} else if keyGroup+1 <= 0xFFFF {
		hi = binary.BigEndian.AppendUint16(append(hi, sp.opPrefix...), uint16(keyGroup+1))
	} else {
		hi = append(hi, prefixSuccessor(sp.opPrefix)...)
	}
	skip := len(lo)
	lo = append(lo, lower...)
	sp.lo, sp.hi = lo, hi
	return sp.s.guard(func() error {
		it, err := sp.s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return fmt.Errorf("statestore: scan: %w", err)
		}
		ok := it.First()
		if reverse {
			ok = it.Last()
		}
		for ; ok; ok = step(it, reverse) {
			v, err := it.ValueAndErr()
			if err != nil {
				_ = it.Close()
				return fmt.Errorf("statestore: scan: %w", err)
			}
			more, err := fn(it.Key()[skip:], v)
			if err != nil {
				_ = it.Close()
				return err
			}
			if !more {
				break
			}
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("statestore: scan: %w", err)
		}
		return nil
	})
}

func step(it *pebble.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

// PutThrough stores a copy of value for key in keyGroup, bypassing the
// write-back cache when the key is not in it (see Table.PutThrough): for
// state the caller keeps in memory anyway, written back in ascending key
// order at a checkpoint.
func (sp *Space) PutThrough(keyGroup int, key, value []byte) error {
	k, err := sp.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return sp.s.putThrough(k, value, true)
}

// PutThroughUnfiltered is PutThrough for a key that no lookup needs the
// store's Bloom filters for: its owner keeps a filter of the keys it
// stored and looks up no key that filter rules out (state.Records). A run
// of such keys is ingested as an sstable without a filter, which costs
// about a fifth of the time to write it (hashing every key); a
// compaction that rewrites the keys adds the level's filter.
func (sp *Space) PutThroughUnfiltered(keyGroup int, key, value []byte) error {
	k, err := sp.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return sp.s.putThrough(k, value, false)
}

// CommitThrough is Store.CommitThrough: it ends the current run of
// PutThrough writes, so that the next ascending run starts afresh.
func (sp *Space) CommitThrough() error { return sp.s.CommitThrough() }

// ReplaceAll is Store.ReplaceOperator for the Space's operator: the
// PutThrough writes that follow, up to the next commit, become its complete
// state.
func (sp *Space) ReplaceAll() error {
	if err := sp.s.check(); err != nil {
		return err
	}
	return sp.s.replacePrefix(sp.opPrefix)
}
