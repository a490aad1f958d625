package exec

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/types"
)

// newWindowRankHarness is the tumbling-count harness running a window
// Top-2 over TUMBLE(ts, 10 ms) of rows (k, ts): per k and window the two
// latest rows, with window_start, window_end, window_time and the rank.
func newWindowRankHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	assign := WindowSpec{Kind: WindowTumble, Size: tumbleSize, TimeCol: 1}
	spec := WindowRankSpec{Keys: []int{0}, Order: []SortKey{{Col: 1, Desc: true, NullsLast: true}}, Func: RowNumber,
		Start: 1, End: 2, OutputRank: true, Assign: &assign, Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp}}
	g := &JobGraph{Name: "wrank", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "WindowRank", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "WindowRank", ID: "wrank", OutWidth: 6, New: NewWindowRank(spec)}},
			Sink:      h.sink, SinkName: "out"},
	}}
	opts := Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval}
	if dir != "" {
		opts.Checkpoint = testCheckpointing(t, dir, "wrank", restore, 1<<12)
	}
	h.start(g, opts, par)
	return h
}

func windowRankRow(k, ts, ws int64, rn int) string {
	return types.FormatRow(types.Insert, []types.Value{types.BigIntValue(k), types.TimestampValue(ts), types.TimestampValue(ws),
		types.TimestampValue(ws + tumbleSize), types.TimestampValue(ws + tumbleSize - 1), types.BigIntValue(int64(rn))})
}

// TestWindowRankLateRows: a window's Top-2 comes out once, when the
// watermark passes its end; a row of a window that has fired is late:
// dropped and counted.
func TestWindowRankLateRows(t *testing.T) {
	h := newWindowRankHarness(t, "", 2, nil)
	row := func(k, ts int64) []types.Value { return []types.Value{types.BigIntValue(k), types.TimestampValue(ts)} }
	h.emit([][]types.Value{row(1, 3), row(1, 8), row(1, 5), row(2, 4)})
	if len(h.sink.rows) != 0 {
		t.Fatalf("output before the window closed (watermark %d): %v", h.watermark(), h.sink.rows)
	}
	h.emit([][]types.Value{row(1, 25)}) // watermark 18: [0, 10) fires
	want := []string{windowRankRow(1, 8, 0, 1), windowRankRow(1, 5, 0, 2), windowRankRow(2, 4, 0, 1)}
	slices.Sort(want)
	if got := sortedCopy(h.sink.rows); !slices.Equal(got, want) {
		t.Fatalf("after watermark %d:\n got  %v\n want %v", h.watermark(), got, want)
	}
	h.emit([][]types.Value{row(1, 7), row(1, 21)}) // 7: its window fired, late
	h.end()
	want = append(want, windowRankRow(1, 25, 20, 1), windowRankRow(1, 21, 20, 2))
	slices.Sort(want)
	if got := sortedCopy(h.sink.rows); !slices.Equal(got, want) {
		t.Fatalf("at the end:\n got  %v\n want %v", got, want)
	}
	var n int64
	for i := range h.j.vertexLate {
		n += h.j.vertexLate[i].Load()
	}
	if n != 1 {
		t.Fatalf("%d rows dropped, want 1 (the late row)", n)
	}
}

// TestWindowRankCheckpointRestore checkpoints a window Top-2 with open
// windows, restores it at the same and other parallelisms and replays the
// rest: the output before the checkpoint plus the restored run's is each
// window's Top-2 once, computed here.
func TestWindowRankCheckpointRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := tumbleRows(seed, 600, 9)
	per := map[[2]int64][]int64{}
	for _, r := range rows {
		k := [2]int64{r[0].Int(), r[1].Int() - r[1].Int()%tumbleSize}
		per[k] = append(per[k], r[1].Int())
	}
	var want []string
	for k, ts := range per {
		slices.SortStableFunc(ts, func(a, b int64) int { return cmp.Compare(b, a) })
		for i := 0; i < 2 && i < len(ts); i++ {
			want = append(want, windowRankRow(k[0], ts[i], k[1], i+1))
		}
	}
	slices.Sort(want)
	const batch, cut = 20, 300
	for _, pp := range [][2]int{{1, 1}, {2, 1}, {1, 3}} {
		t.Run(fmt.Sprintf("p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			h := newWindowRankHarness(t, t.TempDir(), pp[0], nil)
			for i := 0; i < cut; i += batch {
				h.emit(rows[i : i+batch])
			}
			c := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			for i := cut; i < cut+5*batch; i += batch {
				h.emit(rows[i : i+batch])
			}
			r := newWindowRankHarness(t, t.TempDir(), pp[1], c)
			r.reader.pos = cut
			for i := cut; i < len(rows); i += batch {
				r.emit(rows[i:min(i+batch, len(rows))])
			}
			r.end()
			if got := sortedCopy(append(before, r.sink.rows...)); !slices.Equal(got, want) {
				t.Fatalf("seed %d:\n got  %v\n want %v", seed, head(got), head(want))
			}
		})
	}
}
