package exec

import (
	"context"
	"io"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// benchTemplate returns a batch of n rows (k BIGINT, v BIGINT) over nkeys keys.
func benchTemplate(n, nkeys int) *types.Batch {
	b := types.NewBatch(2, n)
	for i := range n {
		k := int64(i*7919) % int64(nkeys)
		b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(int64(i % 100))})
	}
	return b
}

type discardEmitter2 struct{ rows int }

func (d *discardEmitter2) Emit(b *types.Batch) error { d.rows += b.Len(); return nil }

func BenchmarkGroupAggOperator(b *testing.B) {
	in := benchTemplate(1024, 1000)
	op := NewGroupAgg([]int{0}, []AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})()
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate"}); err != nil {
		b.Fatal(err)
	}
	out := &discardEmitter2{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := op.Process(0, in, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*in.Len())/b.Elapsed().Seconds(), "rows/s")
}

// templateSource emits `rows` rows in total, copied from a template batch.
type templateSource struct {
	tmpl *types.Batch
	rows int
}

func (s *templateSource) Bounded() bool { return true }
func (s *templateSource) Open(subtask, par int) (connector.SourceReader, error) {
	n := s.rows / par
	if subtask < s.rows%par {
		n++
	}
	return &templateReader{tmpl: s.tmpl, left: n}, nil
}

type templateReader struct {
	tmpl *types.Batch
	left int
}

func (r *templateReader) Next(_ context.Context, b *types.Batch, max int) error {
	n := min(max, r.left, r.tmpl.Len())
	b.Kinds = append(b.Kinds, r.tmpl.Kinds[:n]...)
	b.Vals = append(b.Vals, r.tmpl.Vals[:n*2]...)
	r.left -= n
	if r.left == 0 {
		return io.EOF
	}
	return nil
}
func (r *templateReader) Position() ([]byte, error) { return nil, nil }
func (r *templateReader) Seek([]byte) error         { return nil }
func (r *templateReader) Close() error              { return nil }

type discardSink struct{}

func (discardSink) AcceptsUpdates() bool { return true }
func (discardSink) Parallelism() int     { return 0 }
func (discardSink) Open(int, int) (connector.SinkWriter, error) {
	return discardWriter{}, nil
}

type discardWriter struct{}

func (discardWriter) Write(*types.Batch) error { return nil }
func (discardWriter) Flush() error             { return nil }
func (discardWriter) Close() error             { return nil }

func BenchmarkPipelineGroupSum(b *testing.B) {
	const par = 2
	rows := max(b.N, 1)
	g := &JobGraph{Name: "bench", Vertices: []*Vertex{
		{Name: "Source", Parallelism: par, Source: &templateSource{tmpl: benchTemplate(1024, 1000), rows: rows}, SourceWidth: 2},
		{Name: "GroupAggregate -> Sink", Parallelism: par,
			Inputs: []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: 2, New: NewGroupAgg([]int{0},
				[]AggCall{{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}})}},
			Sink: discardSink{}},
	}}
	b.ReportAllocs()
	b.ResetTimer()
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got := j.Metrics().RowsRead; got != int64(rows) {
		b.Fatalf("read %d rows, want %d", got, rows)
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
