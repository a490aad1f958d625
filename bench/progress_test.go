package bench

import (
	"testing"
	"time"

	"github.com/weir-sql/weir/exec"
)

// TestProgressLine: while the sources read, the progress line is their
// rows/s; once they have finished, it says so and shows what the
// operators and sinks still do, so that a busy job is told from a stuck one.
func TestProgressLine(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := exec.Metrics{RowsRead: 1000, Vertices: []exec.VertexMetrics{{RowsIn: 1000, RowsOut: 1000}, {RowsIn: 400, RowsOut: 100}}}
	prev := takeProgress(m, t0)
	m.RowsRead = 3000
	m.Vertices[0].RowsIn, m.Vertices[0].RowsOut = 3000, 3000
	cur := takeProgress(m, t0.Add(2*time.Second))
	if got, want := cur.line(prev), "1.0k rows/s"; got != want {
		t.Errorf("reading: %q, want %q", got, want)
	}
	prev = cur
	m.SourcesFinished, m.Queued, m.RowsWritten = true, 7, 500
	m.Vertices[1].RowsIn, m.Vertices[1].RowsOut = 2400, 4100 // +2000 in, +4000 out
	cur = takeProgress(m, t0.Add(4*time.Second))
	want := "input done (3000 rows read); operators 1.0k rows/s in, 2.0k rows/s out; sinks 250 rows/s; 7 batches queued"
	if got := cur.line(prev); got != want {
		t.Errorf("after the input: %q, want %q", got, want)
	}
	prev = cur
	cur = takeProgress(m, t0.Add(5*time.Second))
	want = "input done (3000 rows read); operators 0 rows/s in, 0 rows/s out; sinks 0 rows/s; 7 batches queued"
	if got := cur.line(prev); got != want {
		t.Errorf("stuck: %q, want %q", got, want)
	}
}
