// Package print implements the 'print' sink: each row of the changelog as
// one line in Flink's print format, e.g. "+I[1, abc]", on standard output
// (or standard error with 'standard-error' = 'true').
package print

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// Sink is a print table. Options: 'print-identifier' (a prefix for each
// line), 'standard-error', 'sink.parallelism'.
type Sink struct {
	identifier  string
	parallelism int
	mu          sync.Mutex // guards out: lines of subtasks never interleave
	out         io.Writer
	loc         *time.Location // TIMESTAMP_LTZ values are shown in it (nil: UTC)
}

var _ connector.Sink = (*Sink)(nil)

// NewSink is the print sink factory. A nil Env writer means the process's.
func NewSink(t *connector.Table, env connector.Env) (connector.Sink, error) {
	if err := options.CheckKnown("print", t.Options, []string{"print-identifier", "standard-error", "sink.parallelism"}); err != nil {
		return nil, err
	}
	stderr, err := options.Bool(t.Options, "standard-error", false)
	if err != nil {
		return nil, err
	}
	p, err := options.Parallelism(t.Options)
	if err != nil {
		return nil, err
	}
	s := &Sink{identifier: t.Options["print-identifier"], parallelism: p, out: env.Stdout, loc: env.Location}
	if stderr {
		s.out = env.Stderr
	}
	if s.out == nil {
		s.out = os.Stdout
		if stderr {
			s.out = os.Stderr
		}
	}
	return s, nil
}

// AcceptsUpdates is true: the row kind is printed.
func (s *Sink) AcceptsUpdates() bool { return true }

// Parallelism returns 'sink.parallelism', or 0.
func (s *Sink) Parallelism() int { return s.parallelism }

// Open returns the writer of one subtask. Its lines start with the prefix
// Flink's PrintSinkOutputWriter uses: the identifier, then, when
// parallelism > 1, ':' and the subtask number counted from 1 (without ':'
// if there is no identifier), then "> " if anything came before.
func (s *Sink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("print: invalid subtask %d of parallelism %d", subtask, parallelism)
	}
	prefix := s.identifier
	if parallelism > 1 {
		if prefix != "" {
			prefix += ":"
		}
		prefix += strconv.Itoa(subtask + 1)
	}
	if prefix != "" {
		prefix += "> "
	}
	return &Writer{sink: s, prefix: prefix}, nil
}

// Writer prints the rows of one subtask.
type Writer struct {
	sink   *Sink
	prefix string
	buf    []byte
}

var _ connector.SinkWriter = (*Writer)(nil)

// Write prints the batch's rows with one write, under the sink's lock.
func (w *Writer) Write(b *types.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	w.buf = w.buf[:0]
	for i := range b.Len() {
		w.buf = append(w.buf, w.prefix...)
		w.buf = types.AppendRowTextIn(w.buf, b.Kinds[i], b.Row(i), w.sink.loc)
		w.buf = append(w.buf, '\n')
	}
	w.sink.mu.Lock()
	defer w.sink.mu.Unlock()
	if _, err := w.sink.out.Write(w.buf); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

// Flush flushes the output if it buffers (it has a Flush method).
func (w *Writer) Flush() error {
	f, ok := w.sink.out.(interface{ Flush() error })
	if !ok {
		return nil
	}
	w.sink.mu.Lock()
	defer w.sink.mu.Unlock()
	if err := f.Flush(); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

// Close flushes.
func (w *Writer) Close() error { return w.Flush() }
