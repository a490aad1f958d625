package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/types"
)

// rankInt2Spec is the Top-3 of TestRankTwoIntPartitionRestore: partitioned
// by two BIGINTs (q6's (id, seller): state.KeyIndex's Int2Table path),
// ordered by ts descending.
func rankInt2Spec(strategy RankStrategy) RankSpec {
	return RankSpec{Partition: []int{0, 1}, Order: []SortKey{{Col: 2, Desc: true, NullsLast: true}}, Func: RowNumber,
		Start: 1, End: 3, OutputRank: true, Strategy: strategy,
		Kinds: []types.Kind{types.KindBigInt, types.KindBigInt, types.KindTimestamp}}
}

// newRankInt2Harness runs newOp over rows (id, seller, ts) hashed by (id,
// seller) at parallelism par, restoring restore if not nil.
func newRankInt2Harness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint, newOp func() Operator) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	g := &JobGraph{Name: "rank", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 3, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Rank", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0, 1}}}},
			Operators: []OperatorSpec{{Name: "Rank", ID: "rank", OutWidth: 4, New: newOp}},
			Sink:      h.sink, SinkName: "out"},
	}}
	opts := Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval,
		Checkpoint: testCheckpointing(t, dir, "rank", restore, 1<<12)}
	h.start(g, opts, par)
	return h
}

// TestRankTwoIntPartitionRestore runs the append-only Top-3 partitioned by
// two BIGINTs over about 4,000 partitions (a NULL in either column now and
// then: the string-keyed path beside the Int2Table), more than the state
// budget keeps in memory (so it spills and looks partitions up), takes a
// checkpoint halfway, goes on (output a crash loses), restores at the same
// and other parallelisms and replays the rest: the changelog is the top 3
// by ts descending per partition, computed here. The checkpoint is written
// by the in-memory Top-N and, in the "keyed" cases, by the keyed-state one
// (rankOp, whose partition keys are the encoded key columns: the layout a
// string-keyed index wrote), and read by the in-memory one.
func TestRankTwoIntPartitionRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 6))
	rows := make([][]types.Value, 6000)
	for i := range rows {
		id, seller := types.BigIntValue(int64(r.IntN(1500))), types.BigIntValue(int64(r.IntN(3))-1)
		if r.IntN(50) == 0 {
			id = types.Value{}
		}
		if r.IntN(50) == 0 {
			seller = types.Value{}
		}
		rows[i] = []types.Value{id, seller, types.TimestampValue(int64(i*7919%6007 + 1))} // distinct times
	}
	per := map[string][][]types.Value{}
	for _, row := range rows {
		k := row[0].String() + "|" + row[1].String()
		per[k] = append(per[k], row)
	}
	var want []string
	for _, rs := range per {
		s := slices.Clone(rs)
		slices.SortStableFunc(s, func(a, b []types.Value) int { return cmp.Compare(b[2].Int(), a[2].Int()) })
		for i := 0; i < 3 && i < len(s); i++ {
			want = append(want, types.FormatRow(types.Insert, append(slices.Clone(s[i]), types.BigIntValue(int64(i+1))))[2:])
		}
	}
	slices.Sort(want)
	inserts := func(rs [][]types.Value) []types.RowKind {
		k := make([]types.RowKind, len(rs))
		for i := range k {
			k[i] = types.Insert
		}
		return k
	}
	spec := rankInt2Spec(AppendFast)
	const batch, cut = 20, 3000
	for _, tc := range []struct {
		keyed bool
		pp    [2]int
	}{{false, [2]int{1, 1}}, {false, [2]int{2, 3}}, {false, [2]int{3, 1}}, {true, [2]int{2, 1}}, {true, [2]int{1, 3}}} {
		name := fmt.Sprintf("p%d-to-p%d", tc.pp[0], tc.pp[1])
		newOp := NewRank(spec)
		if tc.keyed {
			name = "keyed-" + name
			newOp = func() Operator { return &rankOp{spec: spec} }
		}
		t.Run(name, func(t *testing.T) {
			h := newRankInt2Harness(t, t.TempDir(), tc.pp[0], nil, newOp)
			for i := 0; i < cut; i += batch {
				h.emitChanges(inserts(rows[i:i+batch]), rows[i:i+batch])
			}
			c := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			for i := cut; i < cut+5*batch; i += batch {
				h.emitChanges(inserts(rows[i:i+batch]), rows[i:i+batch])
			}
			rh := newRankInt2Harness(t, t.TempDir(), tc.pp[1], c, NewRank(spec))
			rh.reader.pos = cut
			for i := cut; i < len(rows); i += batch {
				rs := rows[i:min(i+batch, len(rows))]
				rh.emitChanges(inserts(rs), rs)
			}
			rh.end()
			if got := applyChangelog(t, append(before, rh.sink.rows...)); !slices.Equal(got, want) {
				t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), head(got), head(want))
			}
		})
	}
}
