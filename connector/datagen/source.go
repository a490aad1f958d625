// Package datagen implements the 'datagen' source: rows generated from
// Flink's datagen options, deterministically from their row number so that
// a restored job replays exactly the rows it read before.
//
// Options: 'rows-per-second' (default 10000, the total over all subtasks),
// 'number-of-rows' (bounded when set), 'seed' (default 0), and per column f:
// 'fields.f.kind' = 'random' (default) or 'sequence'. A sequence column
// needs 'fields.f.start' and 'fields.f.end' (INT, BIGINT, DOUBLE, INTERVAL,
// or TIMESTAMP as a literal or milliseconds) and bounds the table to its
// length; row i has the value start+i. A random column takes
// 'fields.f.null-rate' (default 0) and, by type: 'fields.f.min'/'max'
// (INT and BIGINT default to the type's range, DOUBLE to [0, 1), INTERVAL
// to [0, one day] in ms), 'fields.f.length' (VARCHAR, default 100, hex
// digits), 'fields.f.max-past' (TIMESTAMP, default 0, ms).
//
// Determinism: global row i is emitted by subtask i % parallelism, and its
// random values are a pure function of (seed, i, column). Random timestamps
// lie in [now(i) - max-past, now(i)], where now(i) = base + i*1000/rps is the
// time row i is due at the table's rate and base the time the source was
// built (Flink's datagen reads the clock instead): time moves with the rows.
// base is stored in every reader's position, so a reader restored with Seek
// generates the same timestamps again. SeekAll
// restores the positions of a run at another parallelism: each reader then
// skips the rows the earlier runs emitted (see position.go).
package datagen

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/seqsplit"
	"github.com/weir-sql/weir/types"
)

// NewSource is the datagen source factory.
func NewSource(t *connector.Table, _ connector.Env) (connector.Source, error) {
	return newSource(t, time.Now())
}

// newSource builds the source with base as its random timestamps' "now".
func newSource(t *connector.Table, base time.Time) (*Source, error) {
	cfg, err := parseConfig(t.Schema, t.Options)
	if err != nil {
		return nil, err
	}
	return &Source{cfg: cfg, base: base.UnixMilli()}, nil
}

// Source is a datagen table.
type Source struct {
	cfg  *config
	base int64
}

var _ connector.Source = (*Source)(nil)

// Bounded reports whether 'number-of-rows' or a sequence column limits the rows.
func (s *Source) Bounded() bool { return s.cfg.rows >= 0 }

// Open returns the reader of rows i with i % parallelism == subtask.
func (s *Source) Open(subtask, parallelism int) (connector.SourceReader, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("datagen: invalid subtask %d of parallelism %d", subtask, parallelism)
	}
	r := &Reader{
		gen:         generator{seed: s.cfg.seed, base: s.base, rps: int64(s.cfg.rowsPerSecond), fields: s.cfg.fields},
		subtask:     subtask,
		parallelism: parallelism,
		quota:       -1,
		lim:         newLimiter(s.cfg.rowsPerSecond / float64(parallelism)),
	}
	if s.cfg.rows >= 0 {
		r.quota = rowsOf(s.cfg.rows, subtask, parallelism)
	}
	return r, nil
}

// Reader generates the rows of one subtask.
type Reader struct {
	gen         generator
	subtask     int
	parallelism int
	count       int64 // cursor: rows of this subtask passed so far
	quota       int64 // rows of this subtask in all; -1 if unbounded
	lim         *limiter
	skips       seqsplit.Skips // rows of earlier runs at other parallelisms
}

var _ connector.RescalableReader = (*Reader)(nil)

// Next appends up to max rows, fewer when the rate limit says so.
func (r *Reader) Next(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.Width != len(r.gen.fields) {
		return fmt.Errorf("datagen: batch width %d, table has %d columns", b.Width, len(r.gen.fields))
	}
	n := max
	if r.quota >= 0 {
		if r.count >= r.quota {
			return io.EOF
		}
		n = int(min(int64(n), r.quota-r.count))
	}
	n, err := r.lim.take(ctx, n)
	if err != nil {
		return err
	}
	i := int64(r.subtask) + r.count*int64(r.parallelism)
	// Room for the n rows first, then each filled in place (a call a row
	// to make room cost as much as filling it).
	w := b.Width
	kinds, vals := slices.Grow(b.Kinds, n), slices.Grow(b.Vals, n*w)
	for n > 0 && (r.quota < 0 || r.count < r.quota) {
		if !r.skips.Emitted(i) {
			kinds = append(kinds, types.Insert)
			m := len(vals)
			vals = vals[:m+w]
			r.gen.fill(vals[m:m+w:m+w], i)
			n--
		}
		i += int64(r.parallelism)
		r.count++
	}
	b.Kinds, b.Vals = kinds, vals
	if r.quota >= 0 && r.count >= r.quota {
		return io.EOF
	}
	return nil
}

// Close releases the reader.
func (r *Reader) Close() error {
	r.lim.stop()
	return nil
}
