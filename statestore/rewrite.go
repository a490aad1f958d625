package statestore

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

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
func (s *Store) copyRewrittenFrom(snapDir string, fn Rewrite) (retErr error) {
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(s.dir)), ".restore-")
	if err != nil {
		return fmt.Errorf("statestore: temp folder for %s: %w", snapDir, err)
	}
	defer func() {
		if err := os.RemoveAll(tmp); err != nil && retErr == nil {
			retErr = fmt.Errorf("statestore: remove %s: %w", tmp, err)
		}
	}()
	src, err := Restore(snapDir, filepath.Join(tmp, "db"), s.opts)
	if err != nil {
		return err
	}
	defer func() {
		if err := src.Close(); err != nil && retErr == nil {
			retErr = err
		}
	}()
	it, err := src.db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("statestore: iterate %s: %w", snapDir, err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	var nk []byte
	for ok := it.First(); ok; ok = it.Next() {
		var keep bool
		nk, keep, err = fn(nk[:0], it.Key())
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("statestore: snapshot %s: %w", snapDir, err)
		}
		if !keep {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("statestore: iterate %s: %w", snapDir, err)
		}
		if err := b.Set(nk, v, nil); err != nil {
			_ = it.Close()
			return fmt.Errorf("statestore: copy key: %w", err)
		}
		if b.Len() >= rescaleBatchBytes {
			if err := b.Commit(pebble.NoSync); err != nil {
				_ = it.Close()
				return fmt.Errorf("statestore: copy keys: %w", err)
			}
			b.Reset()
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("statestore: iterate %s: %w", snapDir, err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("statestore: copy keys: %w", err)
	}
	for _, st := range []*Store{src, s} {
		if err := st.log.err(); err != nil {
			return fmt.Errorf("statestore: copy keys from %s: %w", snapDir, err)
		}
	}
	return nil
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
