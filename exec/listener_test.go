package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// listenReader reads 3 rows, waits (Next returns empty) until it has been
// told of a complete checkpoint, reads 2 more rows and ends. Its position
// is the number of rows read; it records every completion it is told.
type listenReader struct {
	rows     int64
	told     chan struct{}
	complete []string
}

func (r *listenReader) Next(ctx context.Context, b *types.Batch, _ int) error {
	switch {
	case r.rows < 3:
	case len(r.complete) == 0:
		select { // wait for the completion, a few ms at a time
		case <-r.told:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
		return nil
	case r.rows < 5:
	default:
		return io.EOF
	}
	b.Append(types.Insert, []types.Value{types.BigIntValue(r.rows)})
	r.rows++
	return nil
}
func (r *listenReader) Position() ([]byte, error) { return binary.AppendVarint(nil, r.rows), nil }
func (r *listenReader) Seek([]byte) error         { return nil }
func (r *listenReader) Close() error              { return nil }
func (r *listenReader) CheckpointComplete(id int64, pos []byte) error {
	v, _ := binary.Varint(pos)
	r.complete = append(r.complete, fmt.Sprintf("%d@%d", id, v))
	select {
	case r.told <- struct{}{}:
	default:
	}
	return nil
}

var _ connector.CheckpointListener = (*listenReader)(nil)

type listenSource struct{ r *listenReader }

func (s listenSource) Bounded() bool                                 { return true }
func (s listenSource) Open(int, int) (connector.SourceReader, error) { return s.r, nil }

// TestSourceCheckpointListener checks that a source reader that is a
// connector.CheckpointListener is told of each complete checkpoint, after
// its metadata is written, with the position it gave for it: a periodic
// checkpoint taken while the reader waits (3 rows read) and the final one
// (5 rows).
func TestSourceCheckpointListener(t *testing.T) {
	r := &listenReader{told: make(chan struct{}, 1)}
	var reports []CheckpointReport
	ck := testCheckpointing(t, t.TempDir(), "listen", nil, 0)
	ck.Interval = 20 * time.Millisecond
	ck.Report = func(rep CheckpointReport) { reports = append(reports, rep) }
	g := &JobGraph{Name: "listen", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: listenSource{r}, SourceWidth: 1, SourceName: "s", Sink: discardSink{}, SinkName: "out"},
	}}
	j, err := Start(context.Background(), g, Options{BatchSize: 16, ChannelBuffer: 64, Checkpoint: ck})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	completed := map[int64]bool{}
	var final, first int64
	for _, rep := range reports {
		if !rep.Completed {
			continue
		}
		completed[rep.ID] = true
		if first == 0 {
			first = rep.ID
		}
		if rep.Final {
			final = rep.ID
		}
	}
	if final == 0 || first == final {
		t.Fatalf("reports %+v: want a periodic and a final checkpoint", reports)
	}
	// First the periodic checkpoint taken while the reader waited; last
	// the final one; maybe others between (a periodic one while it read
	// its last rows), in order, each one that completed.
	if len(r.complete) < 2 || r.complete[0] != fmt.Sprintf("%d@3", first) || r.complete[len(r.complete)-1] != fmt.Sprintf("%d@5", final) {
		t.Fatalf("told %v, want %d@3 first and %d@5 last", r.complete, first, final)
	}
	last := int64(0)
	for _, c := range r.complete {
		var id, pos int64
		if _, err := fmt.Sscanf(c, "%d@%d", &id, &pos); err != nil || id <= last || !completed[id] {
			t.Fatalf("told %v: %s is not a completed checkpoint after %d", r.complete, c, last)
		}
		last = id
	}
}
