package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/expr"
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
	return newRankInt2PickHarness(t, dir, par, restore, newOp, 4, nil)
}

// newRankInt2PickHarness is newRankInt2Harness with a Calc chained after
// the Top-N (of output width w) that picks its columns pick (none if nil).
func newRankInt2PickHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint, newOp func() Operator, w int, pick []int) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	ops := []OperatorSpec{{Name: "Rank", ID: "rank", OutWidth: w, New: newOp}}
	if pick != nil {
		var proj []expr.Expr
		for _, c := range pick {
			proj = append(proj, expr.NewColumn(c, types.BigInt, fmt.Sprintf("c%d", c)))
		}
		ops = append(ops, OperatorSpec{Name: "Calc", ID: "calc", OutWidth: len(pick), New: NewCalc(nil, proj)})
	}
	g := &JobGraph{Name: "rank", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 3, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Rank", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0, 1}}}},
			Operators: ops,
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

// TestRankPickedOutput chains after the append-only Top-3 (partitioned by
// two BIGINTs) a Calc that picks some of its columns in another order (q6's
// shape: the rank column dropped), for ROW_NUMBER with and without the
// rank column and for RANK: the Calc is folded into the Top-N (fuseCalcs),
// and the output, applied across a checkpoint and a restore at another
// parallelism (with spilling), is the picked columns of each partition's
// top 3 by ts descending with its rank, computed here.
func TestRankPickedOutput(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([][]types.Value, 3000)
	for i := range rows {
		id, seller := types.BigIntValue(int64(r.IntN(700))), types.BigIntValue(int64(r.IntN(2)))
		if r.IntN(50) == 0 {
			seller = types.Value{}
		}
		rows[i] = []types.Value{id, seller, types.TimestampValue(int64(i*7919%3001 + 1))} // distinct times
	}
	per := map[string][][]types.Value{}
	for _, row := range rows {
		k := row[0].String() + "|" + row[1].String()
		per[k] = append(per[k], row)
	}
	inserts := func(rs [][]types.Value) []types.RowKind {
		k := make([]types.RowKind, len(rs))
		for i := range k {
			k[i] = types.Insert
		}
		return k
	}
	const batch, cut = 20, 1500
	for _, tc := range []struct {
		name     string
		fn       RankFunc
		withRank bool
		pick     []int
	}{
		{"row_number", RowNumber, true, []int{3, 2, 0}},
		{"row_number-q6", RowNumber, true, []int{1, 2}},
		{"row_number-no-rank", RowNumber, false, []int{2, 1, 2}},
		{"rank", Rank, true, []int{2, 3, 1}},
	} {
		var want []string
		for _, rs := range per {
			s := slices.Clone(rs)
			slices.SortStableFunc(s, func(a, b []types.Value) int { return cmp.Compare(b[2].Int(), a[2].Int()) })
			for i := 0; i < 3 && i < len(s); i++ {
				full := append(slices.Clone(s[i]), types.BigIntValue(int64(i+1)))
				var p []types.Value
				for _, c := range tc.pick {
					p = append(p, full[c])
				}
				want = append(want, types.FormatRow(types.Insert, p)[2:])
			}
		}
		slices.Sort(want)
		spec := rankInt2Spec(AppendFast)
		spec.Func, spec.OutputRank = tc.fn, tc.withRank
		w := 3
		if tc.withRank {
			w = 4
		}
		for _, pp := range [][2]int{{1, 2}, {2, 1}} {
			t.Run(fmt.Sprintf("%s/p%d-to-p%d", tc.name, pp[0], pp[1]), func(t *testing.T) {
				h := newRankInt2PickHarness(t, t.TempDir(), pp[0], nil, NewRank(spec), w, tc.pick)
				for _, tk := range h.keyed {
					if o := tk.ops[0].(*rankMemOp); !slices.Equal(o.pick, tc.pick) {
						t.Fatalf("the Top-N picks %v, want %v (the Calc not folded)", o.pick, tc.pick)
					}
				}
				for i := 0; i < cut; i += batch {
					h.emitChanges(inserts(rows[i:i+batch]), rows[i:i+batch])
				}
				ck := h.checkpoint()
				before := slices.Clone(h.sink.rows)
				for i := cut; i < cut+5*batch; i += batch {
					h.emitChanges(inserts(rows[i:i+batch]), rows[i:i+batch])
				}
				rh := newRankInt2PickHarness(t, t.TempDir(), pp[1], ck, NewRank(spec), w, tc.pick)
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
	// A pick out of range is refused, and the Top-N emits all its columns.
	o := NewRank(rankInt2Spec(AppendFast))().(*rankMemOp)
	if err := o.Open(&OpContext{Name: "Rank", Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	if o.pickOutput([]int{0, 4}) || o.pick != nil {
		t.Fatalf("pick of column 4 of 4 accepted")
	}
}
