// Package blackhole implements the 'blackhole' sink, which discards every
// row: useful to measure a query without the cost of its output.
package blackhole

import (
	"fmt"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// Sink discards rows. Its only option is 'sink.parallelism'.
type Sink struct{ parallelism int }

var _ connector.Sink = (*Sink)(nil)

// NewSink is the blackhole sink factory.
func NewSink(t *connector.Table, _ connector.Env) (connector.Sink, error) {
	if err := options.CheckKnown("blackhole", t.Options, []string{"sink.parallelism"}); err != nil {
		return nil, err
	}
	p, err := options.Parallelism(t.Options)
	if err != nil {
		return nil, err
	}
	return &Sink{parallelism: p}, nil
}

// AcceptsUpdates is true.
func (s *Sink) AcceptsUpdates() bool { return true }

// Parallelism returns 'sink.parallelism', or 0.
func (s *Sink) Parallelism() int { return s.parallelism }

// Open returns a writer that discards.
func (s *Sink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("blackhole: invalid subtask %d of parallelism %d", subtask, parallelism)
	}
	return writer{}, nil
}

// writer discards every batch.
type writer struct{}

func (writer) Write(*types.Batch) error { return nil }
func (writer) Flush() error             { return nil }
func (writer) Close() error             { return nil }
