package statestore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Table is one named state of one operator, keyed by (key group, key).
// Obtain it from Store.Table. Like the Store, it is not safe for concurrent
// use.
type Table struct {
	s        *Store
	opPrefix []byte
	name     string
}

func (t *Table) encode(keyGroup int, key []byte) ([]byte, error) {
	if err := t.s.check(); err != nil {
		return nil, err
	}
	if keyGroup < 0 || keyGroup >= t.s.opts.MaxParallelism {
		return nil, fmt.Errorf("statestore: key group %d outside [0, %d)", keyGroup, t.s.opts.MaxParallelism)
	}
	t.s.keyBuf = appendStateKey(t.s.keyBuf[:0], t.opPrefix, keyGroup, key, t.name)
	return t.s.keyBuf, nil
}

// Get returns the value stored for key in keyGroup and whether there is one.
//
// The returned slice aliases the cache's copy of the value: it must not be
// modified, and it is valid only until the next call of any method of the
// Store or of any of its Tables. Copy it to keep it.
func (t *Table) Get(keyGroup int, key []byte) ([]byte, bool, error) {
	k, err := t.encode(keyGroup, key)
	if err != nil {
		return nil, false, err
	}
	return t.s.get(k)
}

// Put stores a copy of value for key in keyGroup. Neither slice is retained.
func (t *Table) Put(keyGroup int, key, value []byte) error {
	k, err := t.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return t.s.put(k, value, false)
}

// PutThrough stores a copy of value for key in keyGroup, as Put, but
// bypasses the write-back cache when the key is not in it: the write goes
// into a batch, or, for a long run of writes in ascending key order, into an
// sstable, that CommitThrough (or Flush, Snapshot, a read) commits or
// ingests (see the package documentation). It is for writing back state
// that the caller keeps in memory anyway, where a cache copy would only cost
// time; writing in key order makes it cheapest. Neither slice is retained.
func (t *Table) PutThrough(keyGroup int, key, value []byte) error {
	k, err := t.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return t.s.putThrough(k, value, true)
}

// Delete removes key from keyGroup; deleting a missing key is not an error.
func (t *Table) Delete(keyGroup int, key []byte) error {
	k, err := t.encode(keyGroup, key)
	if err != nil {
		return err
	}
	return t.s.put(k, nil, true)
}

// Scan calls fn for every entry of this table in key groups [first, last],
// in key-group then key order. It flushes the cache first, so it sees every
// write. The slices passed to fn are valid only during the call; fn must
// not call other methods of the Store. An error from fn stops the scan and
// is returned.
func (t *Table) Scan(first, last int, fn func(keyGroup int, key, value []byte) error) error {
	if first < 0 || last >= t.s.opts.MaxParallelism || first > last {
		return fmt.Errorf("statestore: key group range [%d, %d] outside [0, %d)", first, last, t.s.opts.MaxParallelism)
	}
	if err := t.s.Flush(); err != nil {
		return err
	}
	return t.s.guard(func() error { return t.scan(first, last, fn) })
}

// scan is Scan after the checks, as a guarded call.
func (t *Table) scan(first, last int, fn func(keyGroup int, key, value []byte) error) error {
	lower, upper := keyGroupBounds(t.opPrefix, first, last)
	it, err := t.s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("statestore: scan: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		d, err := decodeKey(it.Key())
		if err != nil {
			_ = it.Close()
			return err
		}
		if string(d.stateName) != t.name {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("statestore: scan: %w", err)
		}
		if err := fn(d.keyGroup, d.key, v); err != nil {
			_ = it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("statestore: scan: %w", err)
	}
	return nil
}
