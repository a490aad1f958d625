package statestore

import (
	"errors"
	"fmt"
	"log"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// ErrPebbleFatal marks an error that Pebble reported as fatal (a broken
// invariant, a failed MANIFEST write) or as data corruption. The store that
// saw it is unusable; its user must restore from a checkpoint.
var ErrPebbleFatal = errors.New("statestore: pebble failed")

// bgLogInterval is the least time between two log lines of one store for
// the same kind of Pebble error (a full disk makes Pebble retry and report
// every few milliseconds).
const bgLogInterval = time.Minute

// storeLogger is the Pebble logger and event listener of one store. It
// drops Pebble's informational messages, logs each kind of error once a
// minute at most (counting the rest), and never lets a fatal error or a
// detected corruption panic the process: it records the error, which every
// later operation of the store returns.
//
// Pebble's Fatalf does not expect to return. When it is called on a
// goroutine inside one of the store's guarded calls (see guard), it panics
// with a fatalPanic that the guard turns into an error; the database is
// then abandoned, not closed (Pebble may hold its locks). On a Pebble
// background goroutine nothing can recover a panic, so Fatalf returns and
// Pebble goes on along its error path (as with its no-op logger); the store
// fails at its next use.
type storeLogger struct {
	dir   string
	fatal atomic.Pointer[error] // the first fatal error or corruption
	// fatalCalled: Pebble called Fatalf, so it may be in a state it did not
	// plan to continue from.
	fatalCalled atomic.Bool

	mu     sync.Mutex
	counts map[string]*logCount // by message format
}

type logCount struct {
	last       time.Time
	suppressed int
}

func newStoreLogger(dir string) *storeLogger {
	return &storeLogger{dir: dir, counts: map[string]*logCount{}}
}

// err returns the recorded fatal error, or nil.
func (l *storeLogger) err() error {
	if p := l.fatal.Load(); p != nil {
		return *p
	}
	return nil
}

// record keeps err if it is the first fatal error.
func (l *storeLogger) record(err error) {
	err = fmt.Errorf("%w in %s: %v", ErrPebbleFatal, l.dir, err)
	l.fatal.CompareAndSwap(nil, &err)
}

// Infof drops the message.
func (*storeLogger) Infof(string, ...any) {}

// Errorf logs the message, at most once per bgLogInterval for each format;
// the next line says how many were left out.
func (l *storeLogger) Errorf(format string, args ...any) {
	l.logLimited(format, format, args...)
}

// logLimited logs a message of kind key unless one was logged less than
// bgLogInterval ago.
func (l *storeLogger) logLimited(key, format string, args ...any) {
	now := time.Now()
	l.mu.Lock()
	c := l.counts[key]
	if c == nil {
		c = &logCount{}
		l.counts[key] = c
	} else if now.Sub(c.last) < bgLogInterval {
		c.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := c.suppressed
	c.last, c.suppressed = now, 0
	l.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if suppressed > 0 {
		msg += fmt.Sprintf(" (%d more like it not logged)", suppressed)
	}
	log.Printf("statestore: pebble: %s: %s", l.dir, msg)
}

// fatalPanic is the value Fatalf panics with inside a guarded call.
type fatalPanic struct{ err error }

// Fatalf records the error; inside a guarded call it panics with a
// fatalPanic for the guard to recover, elsewhere it returns.
func (l *storeLogger) Fatalf(format string, args ...any) {
	err := fmt.Errorf(format, args...)
	l.record(err) // before the flag: whoever sees the flag finds the error
	l.fatalCalled.Store(true)
	l.logLimited("fatal", "fatal: %v", err)
	if guarded() {
		panic(fatalPanic{err: l.err()})
	}
}

// backgroundError logs Pebble's background errors (failed flushes and
// compactions, which Pebble retries) once a minute at most.
func (l *storeLogger) backgroundError(err error) {
	l.logLimited("background error", "background error: %v", err)
}

// dataCorruption records a corruption Pebble found in a file (by default
// Pebble calls Fatalf); the read that found it returns an error too.
func (l *storeLogger) dataCorruption(info pebble.DataCorruptionInfo) {
	l.record(fmt.Errorf("data corruption in %s: %v", info.Path, info.Details))
	l.logLimited("data corruption", "data corruption in %s: %v", info.Path, info.Details)
}

// eventListener returns the Pebble event listener of the store.
func (l *storeLogger) eventListener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: l.backgroundError,
		DataCorruption:  l.dataCorruption,
	}
}

// guardFuncName is the name of guard as runtime.Frame reports it.
var guardFuncName = func() string {
	pc, _, _, _ := runtime.Caller(0)
	name := runtime.FuncForPC(pc).Name() // …/statestore.init.func1
	return name[:strings.LastIndex(name, ".init")] + ".guard"
}()

// guarded reports whether the calling goroutine runs inside guard.
func guarded() bool {
	pcs := make([]uintptr, 256)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == guardFuncName {
			return true
		}
		if !more {
			return false
		}
	}
}

// guard runs fn and turns a fatal error Pebble raised during it (through
// storeLogger.Fatalf) into an error wrapping ErrPebbleFatal. Other panics
// pass through.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fp, ok := r.(fatalPanic)
			if !ok {
				panic(r)
			}
			err = fp.err
		}
	}()
	return fn()
}

// IsCorruption reports whether err says that a store's files are damaged
// or Pebble failed on them (ErrPebbleFatal, or Pebble's corruption
// errors), as opposed to a failure of the environment (a full disk, too
// many open files) that a retry may get past.
func IsCorruption(err error) bool {
	return errors.Is(err, ErrPebbleFatal) || pebble.IsCorruptionError(err)
}
