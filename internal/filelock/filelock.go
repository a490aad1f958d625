// Package filelock gives a process exclusive use of a folder through an
// operating-system file lock on a file in it. The lock belongs to an open
// file, so the kernel releases it when the holder exits, however it exits
// (kill -9 included): a lock is never left stuck by a dead process. The
// file stays (removing it would race with the next holder); it records who
// holds it so that a refused caller can name the holder.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrHeld is the error, wrapped in a *HeldError, of Acquire on a lock that
// another holder has.
var ErrHeld = errors.New("held by another run")

// HeldError says who holds a lock that Acquire could not take.
type HeldError struct {
	Path  string // the lock file
	PID   int    // the holder's process id; 0 if it could not be read
	Owner string // what the holder said it is (a job and command)
	Since time.Time
}

func (e *HeldError) Error() string {
	var b strings.Builder
	switch {
	case e.PID == 0:
		b.WriteString("held by another process")
	case e.PID == os.Getpid():
		b.WriteString("held by another job of this process (pid " + strconv.Itoa(e.PID) + ")")
	default:
		b.WriteString("held by process " + strconv.Itoa(e.PID))
	}
	var about []string
	if e.Owner != "" {
		about = append(about, e.Owner)
	}
	if !e.Since.IsZero() {
		about = append(about, "since "+e.Since.Local().Format("2006-01-02 15:04:05"))
	}
	if len(about) > 0 {
		b.WriteString(" (" + strings.Join(about, ", ") + ")")
	}
	b.WriteString("; lock file " + e.Path)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held lock; Release gives it up.
type Lock struct {
	f    *os.File
	path string
}

// Acquire takes the lock file at path (creating it and its folder if
// needed) without waiting. If another open file holds it, in this process
// or another, it returns a *HeldError naming the holder. owner is a short
// description of the caller recorded for that message (a job and command).
func Acquire(path, owner string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if held {
		f.Close()
		return nil, readHolder(path)
	}
	// Record the holder. A reader that finds the lock taken before these
	// bytes land sees an empty or older record and says less; nothing
	// depends on it.
	rec := "pid=" + strconv.Itoa(os.Getpid()) + "\nsince=" + time.Now().UTC().Format(time.RFC3339) +
		"\nowner=" + strings.ReplaceAll(owner, "\n", " ") + "\n"
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(rec), 0)
	}
	return &Lock{f: f, path: path}, nil
}

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// Release gives the lock up. The file stays. Release of a nil Lock, or a
// second Release, does nothing.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}

// readHolder builds the HeldError from the record in the lock file.
func readHolder(path string) *HeldError {
	e := &HeldError{Path: path}
	b, err := os.ReadFile(path)
	if err != nil {
		return e
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "pid":
			e.PID, _ = strconv.Atoi(v)
		case "since":
			e.Since, _ = time.Parse(time.RFC3339, v)
		case "owner":
			e.Owner = v
		}
	}
	return e
}
