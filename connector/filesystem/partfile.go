package filesystem

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// partFile is one in-progress part file. Its life: create, write and
// flush, finish (synced and closed), then a commit renames it.
//
// The writer appends records straight into buf (no copy through a
// bufio.Writer) and calls spill when it holds writeBufferSize bytes or
// more, so the file gets large writes.
//
// Every writeback bytes that spill writes, it asks the kernel to start
// writing them to the disk (startWriteback), so that the disk works while
// the sink does, and the fsync that finishes the file waits only for the
// last ones.
type partFile struct {
	path   string // the in-progress file
	dir    string // its partition folder, relative to the sink's ("" for none)
	n      int    // its number among the subtask's part files
	size   int64  // bytes written, those still in buf included
	opened time.Time
	f      *os.File
	buf    []byte // bytes written and not yet in f

	// inFile are the bytes written into f; the kernel was asked to
	// write bytes 0..hinted-1 to the disk. writeback is the step between
	// hints, 0 for none (none either once a hint failed).
	inFile    int64
	hinted    int64
	writeback int64
}

// createPart creates the in-progress file path; buf is its (empty) write
// buffer, writeback the step of its writeback hints (0: none).
func createPart(path string, n int, now time.Time, buf []byte, writeback int64) (*partFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("filesystem sink: %w", err)
	}
	return &partFile{path: path, n: n, opened: now, f: f, buf: buf[:0], writeback: writeback}, nil
}

// write appends b to the file.
func (p *partFile) write(b []byte) error {
	p.buf = append(p.buf, b...)
	p.size += int64(len(b))
	if len(p.buf) >= writeBufferSize {
		return p.spill()
	}
	return nil
}

// spill writes the buffered bytes into the file.
func (p *partFile) spill() error {
	if len(p.buf) == 0 {
		return nil
	}
	n, err := p.f.Write(p.buf)
	p.buf = p.buf[:0]
	p.inFile += int64(n)
	if err != nil {
		return fmt.Errorf("filesystem sink: write %s: %w", p.path, err)
	}
	if p.writeback > 0 && p.inFile-p.hinted >= p.writeback {
		if startWriteback(p.f, p.hinted, p.inFile-p.hinted) != nil {
			// Not supported by this file system: the fsync at the
			// end writes everything, as without hints.
			p.writeback = 0
		}
		p.hinted = p.inFile
	}
	return nil
}

func (p *partFile) flush() error {
	if err := p.spill(); err != nil {
		return err
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("filesystem sink: sync %s: %w", p.path, err)
	}
	return nil
}

// finish flushes, syncs and closes the file.
func (p *partFile) finish() error {
	err := p.flush()
	if cerr := p.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("filesystem sink: close %s: %w", p.path, cerr)
	}
	return err
}

// discard closes the file without flushing and deletes it.
func (p *partFile) discard() error {
	p.f.Close() // the file is deleted: nothing to lose
	p.buf = nil
	if err := os.Remove(p.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("filesystem sink: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("filesystem sink: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("filesystem sink: sync folder %s: %w", dir, err)
	}
	return nil
}
