package filesystem

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"time"
)

// partFile is one in-progress part file. Its life: create, write and
// flush, finish (synced and closed), then a commit renames it.
type partFile struct {
	path   string // the in-progress file
	dir    string // its partition folder, relative to the sink's ("" for none)
	n      int    // its number among the subtask's part files
	size   int64  // bytes written
	opened time.Time
	f      *os.File
	w      *bufio.Writer
}

func createPart(path string, n int, now time.Time) (*partFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("filesystem sink: %w", err)
	}
	return &partFile{path: path, n: n, opened: now, f: f, w: bufio.NewWriterSize(f, writeBufferSize)}, nil
}

func (p *partFile) write(b []byte) error {
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("filesystem sink: write %s: %w", p.path, err)
	}
	p.size += int64(len(b))
	return nil
}

func (p *partFile) flush() error {
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("filesystem sink: write %s: %w", p.path, err)
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
