package statestore

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
)

// rescaleBatchBytes is the batch size at which RestoreKeyGroups commits.
const rescaleBatchBytes = 4 << 20

// RestoreKeyGroups opens a new store in workDir holding only key groups
// [first, last] (of every operator) taken from one or more snapshots. It is
// used when a job is restored at another parallelism: a subtask's new key
// group range is spread over the snapshots of the old subtasks. Each key
// group is expected in at most one snapshot; if several hold the same key,
// the later snapshot in snapshotDirs wins.
//
// Each snapshot is restored into a temporary folder next to workDir (hard
// links, so cheap) and its matching keys are copied by iteration; the
// snapshots themselves are left unchanged.
func RestoreKeyGroups(snapshotDirs []string, workDir string, first, last int, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if first < 0 || last >= opts.MaxParallelism || first > last {
		return nil, fmt.Errorf("statestore: key group range [%d, %d] outside [0, %d)", first, last, opts.MaxParallelism)
	}
	if err := ensureEmptyDir(workDir); err != nil {
		return nil, err
	}
	dst, err := Open(workDir, opts)
	if err != nil {
		return nil, err
	}
	for _, src := range snapshotDirs {
		if err := dst.copyKeyGroupsFrom(src, first, last); err != nil {
			_ = dst.Close()
			return nil, err
		}
	}
	return dst, nil
}

// copyKeyGroupsFrom copies key groups [first, last] of snapshot snapDir
// into s's database.
func (s *Store) copyKeyGroupsFrom(snapDir string, first, last int) error {
	return s.copyFrom(snapDir, func(it *pebble.Iterator, c *copier) error {
		var seek []byte
		ok := it.First()
		for ok {
			k := it.Key()
			opEnd := 1 + int(k[0])
			if len(k) < opEnd+2 {
				return fmt.Errorf("statestore: snapshot %s: malformed key %x", snapDir, k)
			}
			kg := int(binary.BigEndian.Uint16(k[opEnd:]))
			switch {
			case kg < first:
				// Skip to this operator's first wanted key group.
				seek = binary.BigEndian.AppendUint16(append(seek[:0], k[:opEnd]...), uint16(first))
				ok = it.SeekGE(seek)
				continue
			case kg > last:
				// Skip to the next operator.
				next := prefixSuccessor(k[:opEnd])
				if next == nil {
					ok = false
					continue
				}
				ok = it.SeekGE(next)
				continue
			}
			if err := c.copy(k, it); err != nil {
				return err
			}
			ok = it.Next()
		}
		return nil
	})
}

// copier writes the entries a copy keeps into a batch of the target store,
// committed every rescaleBatchBytes.
type copier struct {
	snapDir string
	b       *pebble.Batch
}

// copy sets key k to the iterator's current value.
func (c *copier) copy(k []byte, it *pebble.Iterator) error {
	v, err := it.ValueAndErr()
	if err != nil {
		return fmt.Errorf("statestore: iterate %s: %w", c.snapDir, err)
	}
	if err := c.b.Set(k, v, nil); err != nil {
		return fmt.Errorf("statestore: copy key: %w", err)
	}
	if c.b.Len() >= rescaleBatchBytes {
		if err := c.b.Commit(pebble.NoSync); err != nil {
			return fmt.Errorf("statestore: copy keys: %w", err)
		}
		c.b.Reset()
	}
	return nil
}

// copyFrom opens snapshot snapDir in a temporary folder and runs walk over
// an iterator of it, which copies the entries it keeps into s's database;
// then commits and checks that neither Pebble raised a fatal error.
func (s *Store) copyFrom(snapDir string, walk func(it *pebble.Iterator, c *copier) error) (retErr error) {
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
	if err := walk(it, &copier{snapDir: snapDir, b: b}); err != nil {
		_ = it.Close() // the walk's error is the one to report
		return err
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("statestore: iterate %s: %w", snapDir, err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("statestore: copy keys: %w", err)
	}
	// A fatal error Pebble raised meanwhile (outside a guarded call it
	// returns, and the iteration may just have ended early) fails the copy.
	for _, st := range []*Store{src, s} {
		if err := st.log.err(); err != nil {
			return fmt.Errorf("statestore: copy keys from %s: %w", snapDir, err)
		}
	}
	return nil
}
