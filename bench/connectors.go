package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// The benchmark's own connectors, registered only in the sessions that the
// benchmark runs:
//
//   - 'bench-stamp' is a source of (k BIGINT, v BIGINT, ts BIGINT): k is
//     uniform over 'keys' keys, v in [0, 100), and ts the time the row was
//     generated, in ns since the run's clock started. 'rows-per-second'
//     paces it (total over all subtasks).
//   - 'bench-sink' counts rows and notes when the first one arrived. With
//     'latency' = 'true', the rows are (k, total, SUM(ts), COUNT(*)) and the
//     sink records the latency of every update: the rows an update adds
//     (the change in COUNT) were stamped, on average, at the change in
//     SUM(ts) divided by it, and the update arrived now.
const (
	stampConnector = "bench-stamp"
	sinkConnector  = "bench-sink"
)

// clock is a run's time base for stamps.
type clock struct{ base time.Time }

func (c clock) now() int64 { return int64(time.Since(c.base)) }

// collector gathers what the bench sinks saw.
type collector struct {
	clock     clock
	rows      atomic.Int64
	firstRow  atomic.Int64 // clock time of the first row; 0 before
	mu        sync.Mutex
	latencies histogram
}

func (c *collector) register(r *connector.Registry) {
	r.RegisterSource(stampConnector, func(t *connector.Table, _ connector.Env) (connector.Source, error) {
		return newStampSource(t, c.clock)
	})
	r.RegisterSink(sinkConnector, func(t *connector.Table, _ connector.Env) (connector.Sink, error) {
		return &benchSink{c: c, latency: t.Option("latency", "false") == "true"}, nil
	})
}

// stampSource is 'bench-stamp'.
type stampSource struct {
	keys  int64
	rate  float64
	clock clock
}

func newStampSource(t *connector.Table, c clock) (*stampSource, error) {
	if t.Schema.Len() != 3 {
		return nil, fmt.Errorf("%s: the table needs 3 BIGINT columns (k, v, ts)", stampConnector)
	}
	keys, err := strconv.ParseInt(t.Option("keys", "1000"), 10, 64)
	if err != nil || keys < 1 {
		return nil, fmt.Errorf("%s: option 'keys': want a positive integer", stampConnector)
	}
	rate, err := strconv.ParseFloat(t.Option("rows-per-second", "1e9"), 64)
	if err != nil || rate <= 0 {
		return nil, fmt.Errorf("%s: option 'rows-per-second': want a positive number", stampConnector)
	}
	return &stampSource{keys: keys, rate: rate, clock: c}, nil
}

func (s *stampSource) Bounded() bool { return false }

func (s *stampSource) Open(subtask, parallelism int) (connector.SourceReader, error) {
	return &stampReader{src: s, subtask: int64(subtask), par: int64(parallelism),
		rate: s.rate / float64(parallelism), start: s.clock.now()}, nil
}

// stampReader paces its rows: by clock time t it has emitted at most
// rate * (t - start) rows.
type stampReader struct {
	src          *stampSource
	subtask, par int64
	rate         float64
	start        int64
	count        int64
	timer        *time.Timer
}

// maxPace bounds how long Next waits for the pace to allow a row.
const maxPace = time.Millisecond

func (r *stampReader) Next(ctx context.Context, b *types.Batch, max int) error {
	now := r.src.clock.now()
	allowed := int64(r.rate*float64(now-r.start)/1e9) - r.count
	if allowed <= 0 {
		wait := min(time.Duration(float64(1-allowed)/r.rate*1e9), maxPace)
		if r.timer == nil {
			r.timer = time.NewTimer(wait)
		} else {
			r.timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			r.timer.Stop()
			return ctx.Err()
		case <-r.timer.C:
		}
		return nil
	}
	n := int(min(allowed, int64(max)))
	i := r.subtask + r.count*r.par
	for range n {
		h := mix(uint64(i))
		row := b.AppendEmpty(types.Insert)
		row[0] = types.BigIntValue(int64(h % uint64(r.src.keys)))
		row[1] = types.BigIntValue(int64(h>>32) % 100)
		row[2] = types.BigIntValue(now)
		i += r.par
	}
	r.count += int64(n)
	return nil
}

func (r *stampReader) Position() ([]byte, error) {
	return binary.AppendUvarint(nil, uint64(r.count)), nil
}

func (r *stampReader) Seek(pos []byte) error {
	n, k := binary.Uvarint(pos)
	if k <= 0 {
		return fmt.Errorf("%s: bad position", stampConnector)
	}
	r.count = int64(n)
	return nil
}

func (r *stampReader) Close() error {
	if r.timer != nil {
		r.timer.Stop()
	}
	return nil
}

// benchSink is 'bench-sink'.
type benchSink struct {
	c       *collector
	latency bool
}

func (s *benchSink) AcceptsUpdates() bool { return true }
func (s *benchSink) Parallelism() int     { return 0 }

func (s *benchSink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	return &benchWriter{s: s}, nil
}

type benchWriter struct {
	s          *benchSink
	hist       histogram
	oldSum     int64 // SUM(ts) of the last -U row
	oldCount   int64 // COUNT(*) of the last -U row
	haveBefore bool
}

func (w *benchWriter) Write(b *types.Batch) error {
	c := w.s.c
	n := b.Len()
	if n == 0 {
		return nil
	}
	now := c.clock.now()
	c.firstRow.CompareAndSwap(0, now)
	c.rows.Add(int64(n))
	if !w.s.latency {
		return nil
	}
	if b.Width < 4 {
		return fmt.Errorf("%s: 'latency' needs rows (k, total, SUM(ts), COUNT(*))", sinkConnector)
	}
	for i := range n {
		row := b.Row(i)
		sum, cnt := row[2].Int(), row[3].Int()
		switch b.Kinds[i] {
		case types.UpdateBefore:
			w.oldSum, w.oldCount, w.haveBefore = sum, cnt, true
			continue
		case types.UpdateAfter:
			if w.haveBefore {
				sum, cnt = sum-w.oldSum, cnt-w.oldCount
			}
			w.haveBefore = false
		case types.Insert:
		default:
			continue
		}
		if cnt > 0 {
			w.hist.add(now-sum/cnt, uint64(cnt))
		}
	}
	return nil
}

func (w *benchWriter) Flush() error { return nil }

func (w *benchWriter) Close() error {
	c := w.s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, n := range w.hist.counts {
		c.latencies.counts[i] += n
	}
	c.latencies.total += w.hist.total
	return nil
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
