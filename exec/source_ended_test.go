package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/weir-sql/weir/checkpoint"
	"io"
	"slices"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// seqSource is a bounded source of rows (i, 0) for i < rows: subtask s of
// p emits the rows i with i % p == s, in order. Its position is its
// subtask, parallelism and how many rows it emitted; it restores at
// another parallelism (SeekAll: a new subtask emits its rows that no old
// subtask emitted). Raising rows between runs is an input that grew.
type seqSource struct{ rows int64 }

func (s *seqSource) Bounded() bool { return true }
func (s *seqSource) Open(sub, par int) (connector.SourceReader, error) {
	return &seqReader{rows: s.rows, sub: int64(sub), par: int64(par), next: int64(sub)}, nil
}

type seqReader struct {
	rows, sub, par int64
	next           int64 // the next row to emit
	done           func(int64) bool
}

var _ connector.RescalableReader = (*seqReader)(nil)

func (r *seqReader) Next(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for b.Len() < max && r.next < r.rows {
		if r.done == nil || !r.done(r.next) {
			b.Append(types.Insert, []types.Value{types.BigIntValue(r.next), types.BigIntValue(0)})
		}
		r.next += r.par
	}
	if r.next >= r.rows {
		return io.EOF
	}
	return nil
}

func (r *seqReader) Position() ([]byte, error) {
	return binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(r.sub)), uint64(r.par)), uint64(r.next)), nil
}

func decodeSeq(pos []byte) (sub, par, next int64, err error) {
	var v [3]uint64
	for i := range v {
		x, n := binary.Uvarint(pos)
		if n <= 0 {
			return 0, 0, 0, errors.New("seq: bad position")
		}
		v[i], pos = x, pos[n:]
	}
	return int64(v[0]), int64(v[1]), int64(v[2]), nil
}

func (r *seqReader) Seek(pos []byte) error {
	sub, par, next, err := decodeSeq(pos)
	if err != nil {
		return err
	}
	if sub != r.sub || par != r.par {
		return fmt.Errorf("seq: position of %d/%d for %d/%d", sub, par, r.sub, r.par)
	}
	r.next = next
	return nil
}

func (r *seqReader) SeekAll(positions [][]byte) error {
	nexts := make([]int64, len(positions))
	for k, pos := range positions {
		_, _, next, err := decodeSeq(pos)
		if err != nil {
			return err
		}
		nexts[k] = next
	}
	old := int64(len(positions))
	r.done = func(i int64) bool { return i < nexts[i%old] }
	return nil
}

func (r *seqReader) Close() error { return nil }

// TestRestoredSourceStaysEnded runs a bounded source of 40 rows to its end
// (its final checkpoint says every subtask ended), then restores that
// checkpoint with the source's input grown to 80 rows, at the same
// parallelism and at others: the source stays ended and emits nothing, as
// a regular join below it, which dropped the other input's rows at that
// end, needs. A checkpoint in which one subtask had not ended (edited
// here) restores as before: every subtask reads on, and the rows 40 to 79
// come once each.
func TestRestoredSourceStaysEnded(t *testing.T) {
	run := func(rows int64, par int, ck *CheckpointOptions) []string {
		t.Helper()
		sink := &collectSink{}
		g := &JobGraph{Name: "ended", Vertices: []*Vertex{{ID: "src", Name: "Source", Parallelism: par,
			Source: &seqSource{rows: rows}, SourceWidth: 2, SourceName: "seq", Sink: sink, SinkName: "out"}}}
		j, err := Start(context.Background(), g, Options{Checkpoint: ck, BatchSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Wait(); err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(sink.rows)
		slices.Sort(got)
		return got
	}
	rowsOf := func(from, to int64) []string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(i), types.BigIntValue(0)}))
		}
		slices.Sort(out)
		return out
	}
	dir := t.TempDir()
	ck := testCheckpointing(t, dir, "ended", nil, 0)
	if got, want := run(40, 2, ck), rowsOf(0, 40); !slices.Equal(got, want) {
		t.Fatalf("first run: %d rows, want %d", len(got), len(want))
	}
	final, _, err := ck.Storage.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if len(final.Meta.Sources) != 2 {
		t.Fatalf("the final checkpoint has %d source positions, want 2", len(final.Meta.Sources))
	}
	for _, sp := range final.Meta.Sources {
		if !sp.Ended {
			t.Fatalf("the final checkpoint says source subtask %d did not end", sp.Subtask)
		}
	}
	for _, par := range []int{2, 1, 3} {
		ck := testCheckpointing(t, t.TempDir(), "ended", final, 0)
		if got := run(80, par, ck); len(got) != 0 {
			t.Fatalf("restored at parallelism %d: the ended source emitted %d rows (%v…)", par, len(got), got[:min(3, len(got))])
		}
	}
	// One subtask had not ended: the source reads on.
	edited := *final
	edited.Meta.Sources = slices.Clone(final.Meta.Sources)
	edited.Meta.Sources[0].Ended = false
	for _, par := range []int{2, 3} {
		ck := testCheckpointing(t, t.TempDir(), "ended", &edited, 0)
		if got, want := run(80, par, ck), rowsOf(40, 80); !slices.Equal(got, want) {
			t.Fatalf("restored at parallelism %d without every subtask ended: %d rows, want %d (rows 40 to 79)", par, len(got), len(want))
		}
	}
}

// TestStoppedSourceNotEnded stops a job whose source has not reached its
// end (Job.Stop): the final checkpoint after the stop does not say that
// the source ended, and its restore reads on, every row exactly once over
// the two runs.
func TestStoppedSourceNotEnded(t *testing.T) {
	sink := &collectSink{firstWrite: make(chan struct{})}
	g := &JobGraph{Name: "stopped", Vertices: []*Vertex{{ID: "src", Name: "Source", Parallelism: 2,
		Source: &seqSource{rows: 1 << 40}, SourceWidth: 2, SourceName: "seq", Sink: sink, SinkName: "out"}}}
	final := stopAfterFirstWrite(t, g, sink, testCheckpointing(t, t.TempDir(), "stopped", nil, 0), 8)
	if len(final.Meta.Sources) != 2 {
		t.Fatalf("the final checkpoint has %d source positions, want 2", len(final.Meta.Sources))
	}
	for _, sp := range final.Meta.Sources {
		if sp.Ended {
			t.Fatalf("the final checkpoint after a stop says source subtask %d ended", sp.Subtask)
		}
	}
	seen := map[string]int{}
	for _, r := range sink.rows {
		seen[r]++
	}
	// The restored run's input ends 100 rows past the furthest subtask.
	most := seqEndPast(t, final, 100)
	sink2 := &collectSink{}
	g.Vertices[0].Source, g.Vertices[0].Sink = &seqSource{rows: most}, sink2
	ck2 := testCheckpointing(t, t.TempDir(), "stopped", final, 0)
	j, err := Start(context.Background(), g, Options{Checkpoint: ck2, BatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, r := range sink2.rows {
		seen[r]++
	}
	for i := range most {
		r := types.FormatRow(types.Insert, []types.Value{types.BigIntValue(i), types.BigIntValue(0)})
		if seen[r] != 1 {
			t.Fatalf("row %d came %d times over the stopped run and its restore, want once", i, seen[r])
		}
	}
	if len(seen) != int(most) {
		t.Fatalf("%d distinct rows, want %d", len(seen), most)
	}
}

// stopAfterFirstWrite starts g with checkpointing ck, stops it (Job.Stop)
// once sink saw its first write, and returns the job's latest checkpoint:
// the one its stop took.
func stopAfterFirstWrite(t *testing.T, g *JobGraph, sink *collectSink, ck *CheckpointOptions, batch int) *checkpoint.Checkpoint {
	t.Helper()
	j, err := Start(context.Background(), g, Options{Checkpoint: ck, BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	<-sink.firstWrite
	j.Stop()
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	final, _, err := ck.Storage.Latest()
	if err != nil {
		t.Fatal(err)
	}
	return final
}

// seqEndPast returns the row count that ends a seqSource extra rows past
// the furthest position c holds for it.
func seqEndPast(t *testing.T, c *checkpoint.Checkpoint, extra int64) int64 {
	t.Helper()
	var most int64
	for _, sp := range c.Meta.Sources {
		_, _, next, err := decodeSeq(sp.Position)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, next+extra)
	}
	return most
}
