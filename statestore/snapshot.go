package statestore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// FileInfo names one file of a snapshot, its size and its CRC-32C
// (Castagnoli).
type FileInfo struct {
	Name   string
	Size   int64
	CRC32C uint32
}

// SnapshotInfo describes a snapshot written by Store.Snapshot.
type SnapshotInfo struct {
	// Bytes is the total size of the snapshot's files.
	Bytes int64
	// Keys approximates the number of live keys (sstable entries minus
	// deletions; exact when no key was overwritten since the last
	// compaction).
	Keys int64
	// Files lists the snapshot's files with their checksums, sorted by
	// name.
	Files []FileInfo
}

// Snapshot writes a consistent copy of the store's current state to dir,
// which must not exist. It flushes the cache and Pebble's memtable, then
// uses Pebble's checkpoint, which hard-links the (immutable) sstables: files
// unchanged since an earlier snapshot are shared with it. The store stays
// usable; later writes do not affect the snapshot.
//
// Every file's checksum is part of the result (for the checkpoint's
// _metadata). Sstables are immutable, so the checksums of those an earlier
// snapshot had are reused and an ingested one's was computed as it was
// written; only new files Pebble wrote itself are read.
func (s *Store) Snapshot(dir string) (SnapshotInfo, error) {
	if err := s.check(); err != nil {
		return SnapshotInfo{}, err
	}
	for _, fn := range s.hooks {
		if err := fn(); err != nil {
			return SnapshotInfo{}, fmt.Errorf("statestore: snapshot: %w", err)
		}
	}
	if err := s.Flush(); err != nil {
		return SnapshotInfo{}, err
	}
	var info SnapshotInfo
	err := s.guard(func() error {
		if err := s.db.Flush(); err != nil {
			return fmt.Errorf("statestore: flush memtable: %w", err)
		}
		if err := s.db.Checkpoint(dir); err != nil {
			return fmt.Errorf("statestore: checkpoint to %s: %w", dir, err)
		}
		files, infos, total, err := listFiles(dir)
		if err != nil {
			return err
		}
		if err := s.checksum(dir, files, infos); err != nil {
			return err
		}
		keys, err := s.approxKeys()
		if err != nil {
			return err
		}
		info = SnapshotInfo{Bytes: total, Keys: keys, Files: files}
		return nil
	})
	return info, err
}

// approxKeys sums live entries over the sstables' properties.
func (s *Store) approxKeys() (int64, error) {
	levels, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		return 0, fmt.Errorf("statestore: sstable properties: %w", err)
	}
	var n int64
	for _, level := range levels {
		for _, t := range level {
			if t.Properties == nil {
				continue
			}
			n += int64(t.Properties.NumEntries) - 2*int64(t.Properties.NumDeletions)
		}
	}
	return max(n, 0), nil
}

// listFiles lists the regular files of dir, sorted by name, with their
// sizes (and, at the same index, their os.FileInfo).
func listFiles(dir string) ([]FileInfo, []os.FileInfo, int64, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, nil, 0, fmt.Errorf("statestore: list %s: %w", dir, err)
	}
	var files []FileInfo
	var infos []os.FileInfo
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, nil, 0, fmt.Errorf("statestore: stat %s: %w", e.Name(), err)
		}
		files = append(files, FileInfo{Name: e.Name(), Size: info.Size()})
		infos = append(infos, info)
		total += info.Size()
	}
	return files, infos, total, nil
}

// isImmutable reports whether Pebble never modifies a file of this name once
// written (sstables and blob files), so it can be hard-linked.
func isImmutable(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// Restore opens a new store in workDir holding the state of the snapshot in
// snapshotDir. The snapshot is never opened in place (Pebble would append to
// its MANIFEST): immutable files are hard-linked into workDir (copied if
// linking fails, e.g. across devices) and every other file is copied.
// workDir must not exist or be empty. The snapshot is left unchanged.
func Restore(snapshotDir, workDir string, opts Options) (*Store, error) {
	if err := cloneSnapshot(snapshotDir, workDir); err != nil {
		return nil, err
	}
	return Open(workDir, opts)
}

// cloneSnapshot links or copies the files of snapshotDir into workDir.
func cloneSnapshot(snapshotDir, workDir string) error {
	entries, err := os.ReadDir(snapshotDir)
	if err != nil {
		return fmt.Errorf("statestore: read snapshot %s: %w", snapshotDir, err)
	}
	if err := ensureEmptyDir(workDir); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		src := filepath.Join(snapshotDir, e.Name())
		dst := filepath.Join(workDir, e.Name())
		if isImmutable(e.Name()) {
			if err := os.Link(src, dst); err == nil {
				continue
			}
		}
		if err := copyFile(src, dst); err != nil {
			return err
		}
	}
	return nil
}

// ensureEmptyDir creates dir, or accepts it if it exists and is empty.
func ensureEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("statestore: create %s: %w", dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("statestore: read %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("statestore: working folder %s is not empty", dir)
	}
	return nil
}

// copyFile copies src to a new file dst. No fsync: the working folder is
// scratch space.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("statestore: copy: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("statestore: copy: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("statestore: copy %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("statestore: copy %s to %s: %w", src, dst, err)
	}
	return nil
}
