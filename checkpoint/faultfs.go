package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"syscall"
)

// Op is a kind of filesystem operation, for fault injection.
type Op int

// Filesystem operations that FaultFS counts. OpWrite, OpSync and OpClose are
// the methods of files returned by Create.
const (
	OpMkdirAll Op = iota
	OpCreate
	OpWrite
	OpSync
	OpClose
	OpOpen
	OpReadFile
	OpRename
	OpRemove
	OpRemoveAll
	OpReadDir
	OpStat
	OpSyncDir
	OpLink
	numOps
)

var opNames = [numOps]string{"mkdirall", "create", "write", "sync", "close", "open",
	"readfile", "rename", "remove", "removeall", "readdir", "stat", "syncdir", "link"}

// String names the operation.
func (o Op) String() string {
	if o >= 0 && o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// mutating reports whether the operation changes the filesystem; only
// those count towards CrashAfter.
func (o Op) mutating() bool {
	switch o {
	case OpOpen, OpReadFile, OpReadDir, OpStat:
		return false
	}
	return true
}

// ErrCrashed is returned by every operation of a FaultFS after its crash
// point: the simulated process is dead and performs nothing more.
var ErrCrashed = errors.New("faultfs: crashed")

// ErrDiskFull is the error of an injected disk-full write.
var ErrDiskFull = fmt.Errorf("faultfs: %w", syscall.ENOSPC)

// FaultFS wraps an FS and injects faults: the nth operation of a kind fails
// with a chosen error (FailNth), or the simulated process crashes after a
// number of mutating operations (CrashAfter), after which no operation is
// performed. It is safe for concurrent use.
type FaultFS struct {
	inner FS

	mu         sync.Mutex
	counts     [numOps]int
	fails      map[Op]map[int]error
	crashAfter int // mutating operations left before the crash; <0: never
	crashed    bool
	fired      int
}

var _ FS = (*FaultFS)(nil)

// NewFaultFS wraps inner with no faults armed.
func NewFaultFS(inner FS) *FaultFS {
	return &FaultFS{inner: inner, fails: map[Op]map[int]error{}, crashAfter: -1}
}

// FailNth makes the nth (1-based, counted from the FaultFS's creation)
// operation of kind op fail with err. A failed write writes the first half
// of its data, as a full disk does.
func (f *FaultFS) FailNth(op Op, n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails[op] == nil {
		f.fails[op] = map[int]error{}
	}
	f.fails[op][n] = err
}

// CrashAfter lets n more mutating operations happen; every later operation
// (reads included) fails with ErrCrashed.
func (f *FaultFS) CrashAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashAfter = n
}

// Fired returns how many faults (failed operations and the crash, counted
// once) have fired.
func (f *FaultFS) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// Count returns how many operations of kind op were attempted.
func (f *FaultFS) Count(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

// check records an operation and returns the fault to inject, if any.
func (f *FaultFS) check(op Op) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crashed {
		return ErrCrashed
	}
	f.counts[op]++
	if op.mutating() && f.crashAfter >= 0 {
		if f.crashAfter == 0 {
			f.crashed = true
			f.fired++
			return ErrCrashed
		}
		f.crashAfter--
	}
	if err, ok := f.fails[op][f.counts[op]]; ok {
		f.fired++
		return fmt.Errorf("faultfs: injected %s failure: %w", op, err)
	}
	return nil
}

// MkdirAll implements FS.
func (f *FaultFS) MkdirAll(path string) error {
	if err := f.check(OpMkdirAll); err != nil {
		return err
	}
	return f.inner.MkdirAll(path)
}

// Create implements FS.
func (f *FaultFS) Create(path string) (File, error) {
	if err := f.check(OpCreate); err != nil {
		return nil, err
	}
	file, err := f.inner.Create(path)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: file}, nil
}

// Open implements FS.
func (f *FaultFS) Open(path string) (io.ReadCloser, error) {
	if err := f.check(OpOpen); err != nil {
		return nil, err
	}
	return f.inner.Open(path)
}

// ReadFile implements FS.
func (f *FaultFS) ReadFile(path string) ([]byte, error) {
	if err := f.check(OpReadFile); err != nil {
		return nil, err
	}
	return f.inner.ReadFile(path)
}

// Rename implements FS.
func (f *FaultFS) Rename(oldpath, newpath string) error {
	if err := f.check(OpRename); err != nil {
		return err
	}
	return f.inner.Rename(oldpath, newpath)
}

// Remove implements FS.
func (f *FaultFS) Remove(path string) error {
	if err := f.check(OpRemove); err != nil {
		return err
	}
	return f.inner.Remove(path)
}

// RemoveAll implements FS.
func (f *FaultFS) RemoveAll(path string) error {
	if err := f.check(OpRemoveAll); err != nil {
		return err
	}
	return f.inner.RemoveAll(path)
}

// ReadDir implements FS.
func (f *FaultFS) ReadDir(path string) ([]fs.DirEntry, error) {
	if err := f.check(OpReadDir); err != nil {
		return nil, err
	}
	return f.inner.ReadDir(path)
}

// Stat implements FS.
func (f *FaultFS) Stat(path string) (fs.FileInfo, error) {
	if err := f.check(OpStat); err != nil {
		return nil, err
	}
	return f.inner.Stat(path)
}

// SyncDir implements FS.
func (f *FaultFS) SyncDir(path string) error {
	if err := f.check(OpSyncDir); err != nil {
		return err
	}
	return f.inner.SyncDir(path)
}

// Link implements FS.
func (f *FaultFS) Link(oldpath, newpath string) error {
	if err := f.check(OpLink); err != nil {
		return err
	}
	return f.inner.Link(oldpath, newpath)
}

// faultFile is a File of a FaultFS.
type faultFile struct {
	fs    *FaultFS
	inner File
}

// Write implements File; an injected failure writes half of p.
func (w *faultFile) Write(p []byte) (int, error) {
	if err := w.fs.check(OpWrite); err != nil {
		if errors.Is(err, ErrCrashed) {
			return 0, err
		}
		n, _ := w.inner.Write(p[:len(p)/2])
		return n, err
	}
	return w.inner.Write(p)
}

// Sync implements File.
func (w *faultFile) Sync() error {
	if err := w.fs.check(OpSync); err != nil {
		return err
	}
	return w.inner.Sync()
}

// Close implements File.
func (w *faultFile) Close() error {
	if err := w.fs.check(OpClose); err != nil {
		// Release the descriptor anyway; the simulated failure stands.
		_ = w.inner.Close()
		return err
	}
	return w.inner.Close()
}
