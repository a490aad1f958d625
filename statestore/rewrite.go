package statestore

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Rewrite maps one key of a snapshot (a full key, operator prefix first) to
// the key it gets in a restored store: it appends the new full key to dst
// and returns it, or returns keep false to leave the entry out.
type Rewrite func(dst, key []byte) (newKey []byte, keep bool, err error)

// RestoreRewritten opens a new store in workDir holding the entries of
// every snapshot in snapshotDirs, each key passed through fn and the value
// unchanged. It migrates state to another key layout: when the key groups
// of the layouts differ, every old snapshot may hold keys of the new
// subtask's key groups, so all are read and fn keeps the subtask's own.
// If several entries get the same new key, the later one wins. The
// snapshots are left unchanged.
func RestoreRewritten(snapshotDirs []string, workDir string, opts Options, fn Rewrite) (*Store, error) {
	opts = opts.withDefaults()
	if err := ensureEmptyDir(workDir); err != nil {
		return nil, err
	}
	dst, err := Open(workDir, opts)
	if err != nil {
		return nil, err
	}
	for _, src := range snapshotDirs {
		if err := dst.copyRewrittenFrom(src, fn); err != nil {
			_ = dst.Close()
			return nil, err
		}
	}
	return dst, nil
}

// copyRewrittenFrom copies every entry of snapshot snapDir into s's
// database under the key fn gives it.
func (s *Store) copyRewrittenFrom(snapDir string, fn Rewrite) error {
	return s.copyFrom(snapDir, func(it *pebble.Iterator, c *copier) error {
		var nk []byte
		for ok := it.First(); ok; ok = it.Next() {
			var keep bool
			var err error
			nk, keep, err = fn(nk[:0], it.Key())
			if err != nil {
				return fmt.Errorf("statestore: snapshot %s: %w", snapDir, err)
			}
			if !keep {
				continue
			}
			if err := c.copy(nk, it); err != nil {
				return err
			}
		}
		return nil
	})
}

// SplitTableKey splits a full key written through a Table into its
// operator id, key group, key and state name (the slices alias k).
func SplitTableKey(k []byte) (operatorID []byte, keyGroup int, key, stateName []byte, err error) {
	d, err := decodeKey(k)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	return d.operatorID, d.keyGroup, d.key, d.stateName, nil
}

// AppendSpaceKey appends the full key that Space(operatorID) gives key in
// keyGroup: len(operatorID) | operatorID | key group | key.
func AppendSpaceKey(dst, operatorID []byte, keyGroup int, key []byte) []byte {
	dst = append(dst, byte(len(operatorID)))
	dst = append(dst, operatorID...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(keyGroup))
	return append(dst, key...)
}
