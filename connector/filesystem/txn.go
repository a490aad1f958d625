package filesystem

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Part files. Subtask s writes .part-<s>-<n>.inprogress (hidden from
// readers, which skip names starting with '.') and a commit renames it to
// part-<s>-<c>-<n>.<ext>, c being the checkpoint that pre-committed it. n
// counts the part files of s in the folder, so that no name is ever used
// twice, even by another run.

// inProgressName returns the name of subtask's in-progress part file n.
func inProgressName(subtask, n int) string {
	return ".part-" + strconv.Itoa(subtask) + "-" + strconv.Itoa(n) + ".inprogress"
}

// finalName returns the name part file n of subtask gets when checkpoint commits it.
func finalName(subtask int, checkpoint int64, n int, ext string) string {
	return fmt.Sprintf("part-%d-%d-%d.%s", subtask, checkpoint, n, ext)
}

// partName is a parsed part file name.
type partName struct {
	subtask, n int
	checkpoint int64 // of a final name; 0 in the older part-<s>-<n> names
	inProgress bool
}

// parsePartName parses .part-<s>-<n>.inprogress, part-<s>-<c>-<n>.<ext>
// and the older part-<s>-<n>.<ext>; ok is false for any other name.
func parsePartName(name string) (partName, bool) {
	var p partName
	rest, hidden := strings.CutPrefix(name, ".")
	rest, ok := strings.CutPrefix(rest, "part-")
	if !ok {
		return p, false
	}
	stem, ext, ok := strings.Cut(rest, ".")
	if !ok || ext == "" || strings.Contains(ext, ".") {
		return p, false
	}
	p.inProgress = ext == "inprogress"
	if hidden != p.inProgress {
		return p, false
	}
	fields := strings.Split(stem, "-")
	if len(fields) != 2 && (len(fields) != 3 || p.inProgress) {
		return p, false
	}
	nums := make([]int, len(fields))
	for k, f := range fields {
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || strconv.Itoa(v) != f {
			return p, false
		}
		nums[k] = v
	}
	p.subtask, p.n = nums[0], nums[len(nums)-1]
	if len(nums) == 3 {
		p.checkpoint = int64(nums[1])
	}
	return p, true
}

// nextPartNumber returns one more than the highest n of subtask's part
// files in dir (and, for a partitioned sink, in its partition folders), in
// progress or final, and the highest checkpoint of the final part files of
// any subtask (committedIn).
func nextPartNumber(dir string, subtask int, partitioned bool) (next int, committed int64, err error) {
	err = eachPart(dir, partitioned, func(_, _ string, p partName) error {
		if p.subtask == subtask && p.n >= next {
			next = p.n + 1
		}
		if !p.inProgress {
			committed = max(committed, p.checkpoint, 1)
		}
		return nil
	})
	return next, committed, err
}

// eachPart calls fn for every part file in dir, and in its partition
// folders when partitioned; a folder that does not exist holds none.
func eachPart(dir string, partitioned bool, fn func(rel, name string, p partName) error) error {
	if partitioned {
		return walkParts(dir, fn)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("filesystem sink: %w", err)
	}
	for _, e := range entries {
		if p, ok := parsePartName(e.Name()); ok {
			if err := fn("", e.Name(), p); err != nil {
				return err
			}
		}
	}
	return nil
}

// committedIn returns the highest checkpoint whose part files dir holds
// (an older final name without a checkpoint counts as 1), and how many
// final part files it holds; 0, 0 for a folder that does not exist.
func committedIn(dir string, partitioned bool) (checkpoint int64, files int, err error) {
	err = eachPart(dir, partitioned, func(_, _ string, p partName) error {
		if !p.inProgress {
			checkpoint = max(checkpoint, p.checkpoint, 1)
			files++
		}
		return nil
	})
	return checkpoint, files, err
}

// txnFile is one part file of a transaction: its in-progress and final
// names (in the sink's folder, or a partition folder under it:
// "dt=x/.part-0-1.inprogress", slash-separated) and its size when
// pre-committed.
type txnFile struct {
	tmp, final string
	size       int64
}

// transaction is what PreCommit returns: the files to rename, and for a
// partitioned sink the partitions to commit (success files to write once
// the files are renamed) and those written but not ready to commit yet
// (kept here so that a restore still commits them).
type transaction struct {
	checkpoint int64
	files      []txnFile
	success    []string
	waiting    []string
}

// txnVersion is written; version 1 (files only) is read too.
const txnVersion = 2

// ErrBadTransaction reports transaction bytes Commit or Recover cannot use.
var ErrBadTransaction = errors.New("filesystem sink: invalid transaction")

// encode returns version 2: a version byte, uvarint checkpoint and file
// count, then per file the in-progress name, the final name (each a
// uvarint length and bytes) and the uvarint size; then the success
// partitions and the waiting ones (each a uvarint count, then the folder
// names). Version 1 ends after the files.
func (t *transaction) encode() []byte {
	b := []byte{txnVersion}
	b = binary.AppendUvarint(b, uint64(t.checkpoint))
	b = binary.AppendUvarint(b, uint64(len(t.files)))
	for _, f := range t.files {
		b = appendName(b, f.tmp)
		b = appendName(b, f.final)
		b = binary.AppendUvarint(b, uint64(f.size))
	}
	for _, list := range [][]string{t.success, t.waiting} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, d := range list {
			b = appendName(b, d)
		}
	}
	return b
}

// decodeTransaction parses and validates transaction bytes: every name
// must be a part file name of the right kind, without a folder.
func decodeTransaction(b []byte) (*transaction, error) {
	if len(b) == 0 || (b[0] != txnVersion && b[0] != 1) {
		return nil, fmt.Errorf("%w: unknown version", ErrBadTransaction)
	}
	d := &posDecoder{rest: b[1:]}
	t := &transaction{checkpoint: d.uint()}
	n := d.uint()
	if n > int64(len(d.rest)) {
		return nil, fmt.Errorf("%w: truncated", ErrBadTransaction)
	}
	for range n {
		f := txnFile{tmp: d.name(), final: d.name(), size: d.uint()}
		if d.err != nil {
			break
		}
		tp, tdir, ok1 := validTxnPath(f.tmp)
		fp, fdir, ok2 := validTxnPath(f.final)
		if !ok1 || !ok2 || !tp.inProgress || fp.inProgress || tdir != fdir {
			return nil, fmt.Errorf("%w: %q, %q are not part file names", ErrBadTransaction, f.tmp, f.final)
		}
		t.files = append(t.files, f)
	}
	if b[0] >= 2 && d.err == nil {
		for _, list := range []*[]string{&t.success, &t.waiting} {
			n := d.uint()
			if n > int64(len(d.rest)) {
				return nil, fmt.Errorf("%w: truncated", ErrBadTransaction)
			}
			for range n {
				dir := d.name()
				if d.err != nil {
					break
				}
				if !filepath.IsLocal(filepath.FromSlash(dir)) || path.Clean(dir) != dir {
					return nil, fmt.Errorf("%w: %q is not a partition folder", ErrBadTransaction, dir)
				}
				*list = append(*list, dir)
			}
		}
	}
	if d.err != nil || len(d.rest) != 0 {
		return nil, fmt.Errorf("%w: truncated or trailing bytes", ErrBadTransaction)
	}
	return t, nil
}

// commitFiles renames each in-progress file of a transaction to its final
// name, then syncs the folder. A file already renamed (the final name
// exists, the in-progress one does not) is skipped. done is how many of
// files, from the first, are final when it returns (all of them when only
// the folder sync failed).
func (s *Sink) commitFiles(files []txnFile) (done int, err error) {
	rename := s.rename
	if rename == nil {
		rename = os.Rename
	}
	renamed := map[string]bool{} // folders to sync
	for _, f := range files {
		tmp, final := filepath.Join(s.dir, filepath.FromSlash(f.tmp)), filepath.Join(s.dir, filepath.FromSlash(f.final))
		st, err := os.Stat(tmp)
		if errors.Is(err, fs.ErrNotExist) {
			if _, ferr := os.Stat(final); ferr == nil {
				done++
				continue // committed before
			}
			return done, fmt.Errorf("filesystem sink: commit %s: neither it nor %s exists", tmp, f.final)
		}
		if err != nil {
			return done, fmt.Errorf("filesystem sink: commit: %w", err)
		}
		if st.Size() != f.size {
			return done, fmt.Errorf("filesystem sink: commit %s: %d bytes, %d when pre-committed", tmp, st.Size(), f.size)
		}
		if _, err := os.Lstat(final); err == nil {
			return done, fmt.Errorf("filesystem sink: commit %s: %s exists already", tmp, f.final)
		}
		if err := rename(tmp, final); err != nil {
			return done, fmt.Errorf("filesystem sink: commit: %w", err)
		}
		done++
		renamed[filepath.Dir(final)] = true
	}
	for d := range renamed {
		if err := syncDir(d); err != nil {
			return done, err
		}
	}
	return done, nil
}

// revertFiles renames each of files that is final (its in-progress name
// gone) back to its in-progress name and syncs their folders: it undoes a
// commitFiles that may have stopped part way. It goes on past a failure
// and returns the first, naming the file that stays visible.
func (s *Sink) revertFiles(files []txnFile) error {
	rename := s.rename
	if rename == nil {
		rename = os.Rename
	}
	folders := map[string]bool{}
	var first error
	for _, f := range files {
		tmp, final := filepath.Join(s.dir, filepath.FromSlash(f.tmp)), filepath.Join(s.dir, filepath.FromSlash(f.final))
		if _, err := os.Lstat(tmp); err == nil {
			continue // never committed
		}
		if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
			continue // neither: nothing visible
		}
		if err := rename(final, tmp); err != nil {
			if first == nil {
				first = fmt.Errorf("filesystem sink: undo commit of %s (it stays visible): %w", f.final, err)
			}
			continue
		}
		folders[filepath.Dir(final)] = true
	}
	for d := range folders {
		if err := syncDir(d); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// removeInProgress deletes the in-progress names of files (those that are
// there) and syncs their folders.
func (s *Sink) removeInProgress(files []txnFile) error {
	folders := map[string]bool{}
	var first error
	for _, f := range files {
		tmp := filepath.Join(s.dir, filepath.FromSlash(f.tmp))
		err := os.Remove(tmp)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			if first == nil {
				first = fmt.Errorf("filesystem sink: %w", err)
			}
			continue
		}
		folders[filepath.Dir(tmp)] = true
	}
	for d := range folders {
		if err := syncDir(d); err != nil && first == nil {
			first = err
		}
	}
	return first
}
