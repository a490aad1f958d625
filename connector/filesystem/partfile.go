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
// bufio.Writer) and calls spill when it holds Sink.spillAt
// (writeBufferSize) bytes or more, so the file gets large writes.
//
// So that the disk works while the sink does, and the fsync that
// finishes the file waits only for the last bytes, spill also starts
// syncing what it wrote: every writeback.hint bytes it asks the kernel to
// start writing them (startWriteback, Linux), and every writeback.sync
// bytes it syncs the file on a goroutine of its own (a virtual disk may
// hold written blocks in its host's cache until a sync). These are only
// early starts: durability comes from the fsync of flush or finish, which
// waits for the background sync before it and reports its error.
type partFile struct {
	path   string // the in-progress file
	dir    string // its partition folder, relative to the sink's ("" for none)
	n      int    // its number among the subtask's part files
	size   int64  // bytes written, those still in buf included
	opened time.Time
	f      *os.File
	buf    []byte // bytes written and not yet in f

	// inFile are the bytes written into f; the kernel was asked to
	// write bytes 0..hinted-1, and a sync was started when f held
	// synced bytes.
	inFile, hinted, synced int64
	wb                     writeback
	// bgDone is closed when the last background job (a sync, or
	// finishing) has ended, nil before the first; bgErr is the first
	// error of the jobs, read after bgDone is closed.
	bgDone chan struct{}
	bgErr  error
}

// writeback is when a part file starts syncing what it wrote: a hint
// every hint bytes and a background sync every sync bytes (0: never).
type writeback struct {
	hint, sync int64
	// fsync syncs a file; nil for (*os.File).Sync (tests inject
	// failures).
	fsync func(*os.File) error
	// tokens bounds the periodic syncs running at once: one starts
	// only when it can put a token in (nil: no bound).
	tokens chan struct{}
}

// createPart creates the in-progress file path; buf is its (empty) write
// buffer.
func createPart(path string, n int, now time.Time, buf []byte, wb writeback) (*partFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("filesystem sink: %w", err)
	}
	return &partFile{path: path, n: n, opened: now, f: f, buf: buf[:0], wb: wb}, nil
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
	if p.wb.hint > 0 && p.inFile-p.hinted >= p.wb.hint {
		if startWriteback(p.f, p.hinted, p.inFile-p.hinted) != nil {
			// Not supported by this file system: the syncs write
			// everything, as without hints.
			p.wb.hint = 0
		}
		p.hinted = p.inFile
	}
	if p.wb.sync > 0 && p.inFile-p.synced >= p.wb.sync {
		// One background sync at a time: wait for the last one (done
		// long ago unless the disk lags behind the sink).
		if err := p.wait(); err != nil {
			return err
		}
		if p.takeToken() {
			p.synced = p.inFile
			p.background(false, true)
		}
	}
	return nil
}

// takeToken reports whether a periodic sync may start now (a token was
// free; the sync's job gives it back). Without one the file skips this
// sync: the next spill tries again, and flush or finish syncs anyway.
func (p *partFile) takeToken() bool {
	if p.wb.tokens == nil {
		return true
	}
	select {
	case p.wb.tokens <- struct{}{}:
		return true
	default:
		return false
	}
}

// background starts a job on a goroutine of its own, after the one
// before it: a sync of the file, then also its close if closing. Its
// error is kept for wait: the kernel reports a failed write to one sync
// only. With token, the job gives back the sync token takeToken took.
func (p *partFile) background(closing, token bool) {
	prev, done := p.bgDone, make(chan struct{})
	p.bgDone = done
	go func() {
		defer close(done)
		if token {
			defer func() { <-p.wb.tokens }()
		}
		if prev != nil {
			<-prev
		}
		if p.bgErr == nil {
			if err := p.sync(); err != nil {
				p.bgErr = fmt.Errorf("filesystem sink: sync %s: %w", p.path, err)
			}
		}
		if closing {
			if err := p.f.Close(); err != nil && p.bgErr == nil {
				p.bgErr = fmt.Errorf("filesystem sink: close %s: %w", p.path, err)
			}
		}
	}()
}

func (p *partFile) sync() error {
	if p.wb.fsync != nil {
		return p.wb.fsync(p.f)
	}
	return p.f.Sync()
}

// wait waits for the background jobs started so far and returns their
// first error.
func (p *partFile) wait() error {
	if p.bgDone != nil {
		<-p.bgDone
	}
	return p.bgErr
}

// flush writes the buffered bytes into the file and syncs it.
func (p *partFile) flush() error {
	if err := p.spill(); err != nil {
		return err
	}
	if err := p.wait(); err != nil {
		return err
	}
	if err := p.sync(); err != nil {
		return fmt.Errorf("filesystem sink: sync %s: %w", p.path, err)
	}
	return nil
}

// startFinish writes the buffered bytes into the file and starts syncing
// and closing it in the background; wait waits for that to end. The
// write buffer is free when it returns.
func (p *partFile) startFinish() error {
	err := p.spill()
	p.background(true, false) // closes the file even after an error
	return err
}

// discard closes the file without flushing and deletes it.
func (p *partFile) discard() error {
	p.wait()
	p.f.Close() // the file is deleted: nothing to lose (closed already if finished)
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
