package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestSortJob runs ORDER BY as a job: two source subtasks (rows up to 3 ms
// out of order, a watermark 7 ms behind), a global exchange and the sort,
// in memory and with checkpoints. On the rowtime the rows come out as the
// watermark passes them, in (ts, k) order; without a time column (a
// bounded sort) all at the end, in (k DESC, ts) order, or with a limit
// the first 100 of (k, ts DESC). All are compared with the rows sorted in
// Go.
func TestSortJob(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := tumbleRows(seed, 3000, 50)
	cases := []struct {
		name    string
		order   []SortKey
		timeCol int
		limit   int
		less    func(a, b []types.Value) int
	}{
		{"rowtime", []SortKey{{Col: 1}, {Col: 0}}, 1, 0, func(a, b []types.Value) int {
			return cmp.Or(cmp.Compare(a[1].Int(), b[1].Int()), cmp.Compare(a[0].Int(), b[0].Int()))
		}},
		{"bounded", []SortKey{{Col: 0, Desc: true}, {Col: 1}}, -1, 0, func(a, b []types.Value) int {
			return cmp.Or(cmp.Compare(b[0].Int(), a[0].Int()), cmp.Compare(a[1].Int(), b[1].Int()))
		}},
		{"bounded-limit", []SortKey{{Col: 0}, {Col: 1, Desc: true}}, -1, 100, func(a, b []types.Value) int {
			return cmp.Or(cmp.Compare(a[0].Int(), b[0].Int()), cmp.Compare(b[1].Int(), a[1].Int()))
		}},
	}
	for _, c := range cases {
		sorted := slices.Clone(rows)
		slices.SortStableFunc(sorted, c.less)
		if c.limit > 0 {
			sorted = sorted[:c.limit]
		}
		want := make([]string, len(sorted))
		for i, r := range sorted {
			want[i] = types.FormatRow(types.Insert, r)
		}
		for _, ckpt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/checkpoints=%v", c.name, ckpt), func(t *testing.T) {
				sink := &collectSink{}
				spec := SortSpec{Order: c.order, TimeCol: c.timeCol, Limit: int64(c.limit), Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp}}
				g := &JobGraph{Name: "sort", Vertices: []*Vertex{
					{ID: "src", Name: "Source", Parallelism: 2, Source: &sliceSource{width: 2, rows: rows},
						SourceWidth: 2, SourceName: "src", Watermark: tumbleWatermark()},
					{Name: "Sort", Parallelism: 1,
						Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Global}}},
						Operators: []OperatorSpec{{Name: "Sort", ID: "sort", OutWidth: 2, New: NewSort(spec)}},
						Sink:      sink, SinkName: "out"},
				}}
				opts := Options{BatchSize: 64, AutoWatermarkInterval: time.Millisecond}
				if ckpt {
					opts.Checkpoint = testCheckpointing(t, t.TempDir(), "sort", nil, 1<<14)
					opts.Checkpoint.Interval, opts.Checkpoint.Retain = 5*time.Millisecond, 1
				}
				runJob(t, g, opts)
				if !slices.Equal(sink.rows, want) {
					t.Fatalf("seed %d: %d rows, want %d\n got  %.300v\n want %.300v", seed, len(sink.rows), len(want), sink.rows, want)
				}
			})
		}
	}
}

// TestSortDropsLateRows: a row whose time is not after the watermark when
// it arrives is dropped and counted; the others come out in time order.
func TestSortDropsLateRows(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t), 2))
	var rows [][]types.Value
	for i := range 200 {
		rows = append(rows, []types.Value{types.BigIntValue(int64(r.IntN(5))), types.TimestampValue(int64(100 + i*10))})
	}
	// Far behind the watermark (7 ms delay) when it comes: late.
	rows = append(rows, []types.Value{types.BigIntValue(9), types.TimestampValue(5)})
	sink := &collectSink{}
	spec := SortSpec{Order: []SortKey{{Col: 1}}, TimeCol: 1, Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp}}
	g := &JobGraph{Name: "sort", Vertices: []*Vertex{
		{ID: "src", Name: "Source", Parallelism: 1, Source: &sliceSource{width: 2, rows: rows},
			SourceWidth: 2, SourceName: "src", Watermark: tumbleWatermark()},
		{Name: "Sort", Parallelism: 1,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Global}}},
			Operators: []OperatorSpec{{Name: "Sort", ID: "sort", OutWidth: 2, New: NewSort(spec)}},
			Sink:      sink, SinkName: "out"},
	}}
	// One batch per row, so that the watermark has passed 5 ms long before
	// the last row comes.
	j, err := Start(t.Context(), g, Options{BatchSize: 1, AutoWatermarkInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	want := make([]string, 200)
	for i := range want {
		want[i] = types.FormatRow(types.Insert, rows[i])
	}
	if !slices.Equal(sink.rows, want) {
		t.Fatalf("got %d rows %.200v, want %d", len(sink.rows), sink.rows, len(want))
	}
	if late := j.Metrics().LateRows; late != 1 {
		t.Fatalf("late rows %d, want 1", late)
	}
}

// TestSortArrival: ordered by a proctime, rows go out as they come.
func TestSortArrival(t *testing.T) {
	rows := tumbleRows(3, 500, 7)
	sink := &collectSink{}
	spec := SortSpec{Order: []SortKey{{Col: 1}}, TimeCol: -1, Arrival: true, Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp}}
	g := &JobGraph{Name: "sort", Vertices: []*Vertex{
		{ID: "src", Name: "Source", Parallelism: 1, Source: &sliceSource{width: 2, rows: rows}, SourceWidth: 2, SourceName: "src"},
		{Name: "Sort", Parallelism: 1,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Global}}},
			Operators: []OperatorSpec{{Name: "Sort", ID: "sort", OutWidth: 2, New: NewSort(spec)}},
			Sink:      sink, SinkName: "out"},
	}}
	runJob(t, g, Options{BatchSize: 16})
	want := make([]string, len(rows))
	for i, r := range rows {
		want[i] = types.FormatRow(types.Insert, r)
	}
	if !slices.Equal(sink.rows, want) {
		t.Fatalf("got %.200v, want the input order", sink.rows)
	}
}
