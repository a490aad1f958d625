package repl

import (
	"fmt"
	"sync"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// collector is the sink of a query run in the shell: its single writer
// copies the changelog into a buffer that the shell drains as it renders.
type collector struct {
	mu      sync.Mutex
	pending *types.Batch // changes not yet taken; nil until the schema is known
	spare   *types.Batch // the batch handed out by the previous take
	notify  chan struct{}
	// limit > 0: full is closed once limit rows have been inserted (a
	// query's LIMIT n without ORDER BY, whose first n rows are final).
	limit, inserted int64
	full            chan struct{}
}

func newCollector(limit int64) *collector {
	return &collector{notify: make(chan struct{}, 1), limit: limit, full: make(chan struct{})}
}

// sinkFor is the sink factory passed to the planner.
func (c *collector) sinkFor(schema types.Schema, _ bool) (connector.Sink, error) {
	w := schema.Len()
	c.pending = types.NewBatch(w, 1024)
	c.spare = types.NewBatch(w, 1024)
	return collectSink{c: c}, nil
}

// take returns the changes collected since the last call. The batch stays
// valid until the next call.
func (c *collector) take() *types.Batch {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		return nil
	}
	b := c.pending
	c.spare.Reset()
	c.pending, c.spare = c.spare, b
	return b
}

// arrived is signalled (without blocking) whenever changes are added.
func (c *collector) arrived() <-chan struct{} { return c.notify }

func (c *collector) add(b *types.Batch) {
	c.mu.Lock()
	c.pending.Kinds = append(c.pending.Kinds, b.Kinds...)
	c.pending.Vals = append(c.pending.Vals, b.Vals[:b.Len()*b.Width]...)
	if c.limit > 0 && c.inserted < c.limit {
		for _, k := range b.Kinds {
			if k == types.Insert {
				c.inserted++
			}
		}
		if c.inserted >= c.limit {
			close(c.full)
		}
	}
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// collectSink hands the changelog to the collector through one writer, so
// that the changes arrive in one order.
type collectSink struct{ c *collector }

// AcceptsUpdates is true: the shell shows updating results.
func (collectSink) AcceptsUpdates() bool { return true }

// Parallelism is 1: one ordered changelog.
func (collectSink) Parallelism() int { return 1 }

// Open returns the writer; there is exactly one subtask.
func (s collectSink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	if parallelism != 1 || subtask != 0 {
		return nil, fmt.Errorf("collect sink: want 1 subtask, got %d/%d", subtask, parallelism)
	}
	return collectWriter{c: s.c}, nil
}

type collectWriter struct{ c *collector }

// Write copies b into the collector.
func (w collectWriter) Write(b *types.Batch) error {
	if b.Len() > 0 {
		w.c.add(b)
	}
	return nil
}

// Flush does nothing: rows are visible as soon as they are written.
func (collectWriter) Flush() error { return nil }

// Close does nothing.
func (collectWriter) Close() error { return nil }
