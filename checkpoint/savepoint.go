package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
)

// Savepoint writes a self-contained copy of checkpoint src to folder dst,
// which must not exist: every state file is really copied (not linked) and
// synced, and _metadata, written last, says Kind savepoint and records the
// origin in Extra["savepoint.source"]. Retention never touches it, and it
// can be moved and restored with Load. On failure dst is removed.
//
// It is a function of a completed checkpoint (not of live stores), so the
// runtime takes a savepoint by completing a checkpoint and copying it.
func Savepoint(fsys FS, src *Checkpoint, dst string) (_ *Checkpoint, retErr error) {
	if _, err := fsys.Stat(dst); err == nil {
		return nil, fmt.Errorf("savepoint to %s: folder exists", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("savepoint to %s: %w", dst, err)
	}
	if err := fsys.MkdirAll(dst); err != nil {
		return nil, fmt.Errorf("savepoint to %s: %w", dst, err)
	}
	defer func() {
		if retErr != nil {
			_ = fsys.RemoveAll(dst)
		}
	}()
	meta := src.Meta
	// The copy gets its own operator and file lists, with the checksum of
	// every file (computed as it is copied, and checked against the
	// checkpoint's when it has them, so a damaged file is not copied into
	// a savepoint that would look valid).
	meta.Operators = ownSubtasks(meta.Operators)
	for i := range meta.Operators {
		op := &meta.Operators[i]
		for j := range op.Subtasks {
			st := &op.Subtasks[j]
			if st.Finished {
				continue // no state to copy
			}
			from, to := filepath.Join(src.Path, st.Dir), filepath.Join(dst, st.Dir)
			if err := fsys.MkdirAll(to); err != nil {
				return nil, fmt.Errorf("savepoint to %s: %w", dst, err)
			}
			st.Files = append([]FileInfo(nil), st.Files...)
			for k := range st.Files {
				f := &st.Files[k]
				sum, n, err := copyFileSync(fsys, filepath.Join(from, f.Name), filepath.Join(to, f.Name))
				if err != nil {
					return nil, fmt.Errorf("savepoint to %s: %w", dst, err)
				}
				if n != f.Size || f.CRC32C != "" && f.CRC32C != FormatCRC32C(sum) {
					return nil, fmt.Errorf("savepoint to %s: %w: %s %d: operator %q subtask %d: file %s changed since the checkpoint was written (%d bytes, crc32c %s; expected %d bytes, crc32c %s)",
						dst, ErrCorruptCheckpoint, src.Meta.Kind, src.Meta.CheckpointID, op.ID, st.Subtask, f.Name, n, FormatCRC32C(sum), f.Size, f.CRC32C)
				}
				f.CRC32C = FormatCRC32C(sum)
			}
			if err := fsys.SyncDir(to); err != nil {
				return nil, fmt.Errorf("savepoint to %s: sync %s: %w", dst, to, err)
			}
		}
	}
	meta.Kind = KindSavepoint
	meta.FormatVersion = FormatVersion
	meta.Extra = maps.Clone(meta.Extra)
	if meta.Extra == nil {
		meta.Extra = map[string]string{}
	}
	meta.Extra["savepoint.source"] = src.Path
	c, err := completeIn(fsys, dst, meta)
	if err != nil {
		return nil, fmt.Errorf("savepoint to %s: %w", dst, err)
	}
	if err := fsys.SyncDir(filepath.Dir(dst)); err != nil {
		return nil, fmt.Errorf("savepoint to %s: sync parent: %w", dst, err)
	}
	return c, nil
}
