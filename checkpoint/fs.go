package checkpoint

import (
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file open for writing.
type File interface {
	io.Writer
	// Sync flushes the file's content to stable storage.
	Sync() error
	// Close closes the file.
	Close() error
}

// FS is the small filesystem interface through which all checkpoint file
// I/O goes, so that tests can inject errors and crashes (see FaultFS).
// Paths use the host's separator.
type FS interface {
	// MkdirAll creates path and any missing parents.
	MkdirAll(path string) error
	// Create creates (or truncates) the file path for writing.
	Create(path string) (File, error)
	// Open opens path for reading.
	Open(path string) (io.ReadCloser, error)
	// ReadFile returns the content of path.
	ReadFile(path string) ([]byte, error)
	// Rename atomically renames oldpath to newpath, replacing newpath.
	Rename(oldpath, newpath string) error
	// Remove removes a file or an empty folder.
	Remove(path string) error
	// RemoveAll removes path and everything below it; a missing path is
	// not an error.
	RemoveAll(path string) error
	// ReadDir lists a folder, sorted by name.
	ReadDir(path string) ([]fs.DirEntry, error)
	// Stat describes path.
	Stat(path string) (fs.FileInfo, error)
	// SyncDir makes the folder's entries (creations, renames, removals)
	// durable.
	SyncDir(path string) error
	// Link creates newpath as a hard link to oldpath.
	Link(oldpath, newpath string) error
}

// OSFS is the FS of the operating system.
type OSFS struct{}

var _ FS = OSFS{}

// MkdirAll implements FS.
func (OSFS) MkdirAll(path string) error { return os.MkdirAll(path, 0o755) }

// Create implements FS.
func (OSFS) Create(path string) (File, error) { return os.Create(path) }

// Open implements FS.
func (OSFS) Open(path string) (io.ReadCloser, error) { return os.Open(path) }

// ReadFile implements FS.
func (OSFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(path string) error { return os.Remove(path) }

// RemoveAll implements FS.
func (OSFS) RemoveAll(path string) error { return os.RemoveAll(path) }

// ReadDir implements FS.
func (OSFS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

// Stat implements FS.
func (OSFS) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// Link implements FS.
func (OSFS) Link(oldpath, newpath string) error { return os.Link(oldpath, newpath) }

// SyncDir implements FS.
func (OSFS) SyncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return err
	}
	return d.Close()
}

// writeFileAtomic writes data to path so that path either keeps its old
// state or holds all of data, even across a crash: it writes a temporary
// file, syncs it, renames it over path and syncs the folder. On error the
// temporary file is removed (best effort).
func writeFileAtomic(fsys FS, path string, data []byte) error {
	tmp := path + ".tmp"
	if err := writeFileSync(fsys, tmp, data); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := fsys.Rename(tmp, path); err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	dir := filepath.Dir(path)
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// writeFileSync creates path with data and syncs it.
func writeFileSync(fsys FS, path string, data []byte) error {
	f, err := fsys.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// copyFileSync copies src to a new file dst and syncs it. It returns the
// CRC-32C and length of what it copied.
func copyFileSync(fsys FS, src, dst string) (uint32, int64, error) {
	in, err := fsys.Open(src)
	if err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	out, err := fsys.Create(dst)
	if err != nil {
		return 0, 0, fmt.Errorf("create %s: %w", dst, err)
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err != nil {
		_ = out.Close()
		return 0, 0, fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Sync(); err != nil {
		_ = out.Close()
		return 0, 0, fmt.Errorf("sync %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return 0, 0, fmt.Errorf("close %s: %w", dst, err)
	}
	return h.Sum32(), n, nil
}
