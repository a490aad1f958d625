package exec

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/types"
)

// newRankHarness is the tumbling-count harness (source S, HASH on k, a
// keyed vertex at parallelism par, checkpoints through Pebble with a small
// cache) running a Top-N instead: the top 3 rows (k, ts) per k by ts
// descending, with the ROW_NUMBER in the output.
func newRankHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint, strategy RankStrategy) *tumbleHarness {
	return newRankHarnessOf(t, dir, par, restore, NewRank(rankHarnessSpec(strategy)))
}

// rankHarnessSpec is newRankHarness's Top-N.
func rankHarnessSpec(strategy RankStrategy) RankSpec {
	return RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 1, Desc: true, NullsLast: true}}, Func: RowNumber,
		Start: 1, End: 3, OutputRank: true, Strategy: strategy, Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp}}
}

// newRankHarnessOf is newRankHarness with the operator factory newOp.
func newRankHarnessOf(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint, newOp func() Operator) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	g := &JobGraph{Name: "rank", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Rank", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Rank", ID: "rank", OutWidth: 3, New: newOp}},
			Sink:      h.sink, SinkName: "out"},
	}}
	opts := Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval,
		Checkpoint: testCheckpointing(t, dir, "rank", restore, 1<<12)}
	h.start(g, opts, par)
	return h
}

// TestRankCheckpointRestore takes a checkpoint of a Top-N halfway, goes
// on (output a crash loses), restores at the same and another
// parallelism and replays the rest: the changelog before the checkpoint
// plus the restored run's is the top 3 per key of all rows, computed here.
func TestRankCheckpointRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := tumbleRows(seed, 600, 9)
	var want []string
	per := map[int64][]int64{}
	for _, r := range rows {
		per[r[0].Int()] = append(per[r[0].Int()], r[1].Int())
	}
	for k, ts := range per {
		slices.SortFunc(ts, func(a, b int64) int { return cmp.Compare(b, a) })
		for i := 0; i < 3 && i < len(ts); i++ {
			want = append(want, fmt.Sprintf("[%d, %s, %d]", k, types.TimestampValue(ts[i]), i+1))
		}
	}
	slices.Sort(want)
	const batch, cut = 20, 300
	for _, strategy := range []RankStrategy{AppendFast, Retract} {
		for _, pp := range [][2]int{{1, 1}, {2, 1}, {1, 3}, {2, 3}} {
			t.Run(fmt.Sprintf("strategy%d-p%d-to-p%d", strategy, pp[0], pp[1]), func(t *testing.T) {
				h := newRankHarness(t, t.TempDir(), pp[0], nil, strategy)
				for i := 0; i < cut; i += batch {
					h.emit(rows[i : i+batch])
				}
				c := h.checkpoint()
				before := slices.Clone(h.sink.rows)
				for i := cut; i < cut+5*batch; i += batch {
					h.emit(rows[i : i+batch])
				}
				r := newRankHarness(t, t.TempDir(), pp[1], c, strategy)
				r.reader.pos = cut
				for i := cut; i < len(rows); i += batch {
					r.emit(rows[i:min(i+batch, len(rows))])
				}
				r.end()
				if got := applyChangelog(t, append(before, r.sink.rows...)); !slices.Equal(got, want) {
					t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, want)
				}
			})
		}
	}
}

// TestOverAggLateRows runs an event-time OVER aggregate (COUNT(*) and
// SUM(ts) over ROWS UNBOUNDED PRECEDING per key) in the harness, whose
// watermark is the largest time minus 7 ms: rows wait for the watermark,
// come out in time order, and a row behind the watermark is dropped and
// counted.
func TestOverAggLateRows(t *testing.T) {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	count, err := aggfunc.Builtins().Lookup("COUNT", true)
	if err != nil {
		t.Fatal(err)
	}
	spec := OverSpec{Partition: []int{0}, TimeCol: 1, Rowtime: true, Frame: OverFrame{Unbounded: true, IsRows: true},
		Calls: []aggfunc.Call{{Func: count, Arg: -1, Type: types.Type{Kind: types.KindBigInt, NotNull: true}, Name: "COUNT(*)"}},
		Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp}}
	g := &JobGraph{Name: "over", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Over", Parallelism: 2,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "OverAggregate", ID: "over", OutWidth: 3, New: NewOverAgg(spec)}},
			Sink:      h.sink, SinkName: "out"},
	}}
	j, tasks, err := newJob(context.Background(), g, Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval})
	if err != nil {
		t.Fatal(err)
	}
	h.j = j
	h.keyed = make([]*task, 2)
	for _, tk := range tasks {
		if tk.vi == 0 {
			h.src = tk
		} else {
			h.keyed[tk.subtask] = tk
		}
	}
	for _, tk := range tasks {
		if err := tk.open(); err != nil {
			t.Fatal(err)
		}
	}
	h.now = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	h.src.lastWMEmit, h.src.lastData = h.now, h.now
	t.Cleanup(func() {
		for _, tk := range tasks {
			_ = tk.close(nil)
		}
		j.cancel()
	})
	row := func(k, ts int64) []types.Value { return []types.Value{types.BigIntValue(k), types.TimestampValue(ts)} }
	h.emit([][]types.Value{row(1, 200), row(1, 100), row(2, 50)})
	// The watermark is 193: only the rows at 100 and 50 are out.
	want := []string{"+I[1, " + types.TimestampValue(100).String() + ", 1]", "+I[2, " + types.TimestampValue(50).String() + ", 1]"}
	if got := sortedCopy(h.sink.rows); !slices.Equal(got, want) {
		t.Fatalf("after watermark %d:\n got  %v\n want %v", h.watermark(), got, want)
	}
	h.emit([][]types.Value{row(1, 150), row(1, 300)}) // 150 is behind the watermark: late
	h.end()
	want = append(want, "+I[1, "+types.TimestampValue(200).String()+", 2]", "+I[1, "+types.TimestampValue(300).String()+", 3]")
	slices.Sort(want)
	if got := sortedCopy(h.sink.rows); !slices.Equal(got, want) {
		t.Fatalf("at the end:\n got  %v\n want %v", got, want)
	}
	var n int64
	for i := range j.vertexLate {
		n += j.vertexLate[i].Load()
	}
	if n != 1 {
		t.Fatalf("%d rows dropped, want 1 (the late row)", n)
	}
}

// newOverHarness is the harness running an event-time OVER aggregate
// (COUNT(*) per key over ROWS UNBOUNDED PRECEDING) with checkpoints.
func newOverHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	count, err := aggfunc.Builtins().Lookup("COUNT", true)
	if err != nil {
		t.Fatal(err)
	}
	spec := OverSpec{Partition: []int{0}, TimeCol: 1, Rowtime: true, Frame: OverFrame{Unbounded: true, IsRows: true},
		Calls: []aggfunc.Call{{Func: count, Arg: -1, Type: types.Type{Kind: types.KindBigInt, NotNull: true}, Name: "COUNT(*)"}},
		Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp}}
	g := &JobGraph{Name: "over", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Over", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "OverAggregate", ID: "over", OutWidth: 3, New: NewOverAgg(spec)}},
			Sink:      h.sink, SinkName: "out"},
	}}
	opts := Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval,
		Checkpoint: testCheckpointing(t, dir, "over", restore, 1<<12)}
	h.start(g, opts, par)
	return h
}

// TestOverAggCheckpointRestore checkpoints an event-time OVER aggregate
// with rows waiting for the watermark, restores it at the same and other
// parallelisms and replays the rest: the output before the checkpoint
// plus the restored run's is each row once with its running count per
// key, computed here; the rows pending at the checkpoint come out after
// the restore.
func TestOverAggCheckpointRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := tumbleRows(seed, 600, 9)
	per := map[int64][]int64{}
	for _, r := range rows {
		per[r[0].Int()] = append(per[r[0].Int()], r[1].Int())
	}
	var want []string
	for k, ts := range per {
		slices.Sort(ts)
		for i, x := range ts {
			want = append(want, fmt.Sprintf("+I[%d, %s, %d]", k, types.TimestampValue(x), i+1))
		}
	}
	slices.Sort(want)
	const batch, cut = 20, 300
	for _, pp := range [][2]int{{1, 1}, {2, 1}, {1, 3}} {
		t.Run(fmt.Sprintf("p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			h := newOverHarness(t, t.TempDir(), pp[0], nil)
			for i := 0; i < cut; i += batch {
				h.emit(rows[i : i+batch])
			}
			c := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			if len(before) == cut {
				t.Fatalf("seed %d: no row pending at the checkpoint", seed)
			}
			for i := cut; i < cut+5*batch; i += batch {
				h.emit(rows[i : i+batch])
			}
			r := newOverHarness(t, t.TempDir(), pp[1], c)
			r.reader.pos = cut
			for i := cut; i < len(rows); i += batch {
				r.emit(rows[i:min(i+batch, len(rows))])
			}
			r.end()
			if got := sortedCopy(append(before, r.sink.rows...)); !slices.Equal(got, want) {
				t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, want)
			}
		})
	}
}
