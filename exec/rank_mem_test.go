package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// TestRankInMemoryTopN runs the append-only Top-N (partitions kept typed
// in memory) of each ranking function over random rows with many ties,
// for integer and string partitions, ranges starting at 1 and later, with
// and without the rank column: after every batch, the changelog so far is
// the rows ranked in the range in each partition computed here (a stable
// sort by v descending; ROW_NUMBER numbers the rows, RANK gives ties the
// position of their first, DENSE_RANK counts distinct values).
func TestRankInMemoryTopN(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	for _, fn := range []RankFunc{RowNumber, Rank, DenseRank} {
		for _, kk := range []types.Kind{types.KindBigInt, types.KindVarchar} {
			for _, rg := range [][3]int64{{1, 3, 1}, {2, 4, 1}, {1, 2, 0}, {2, 3, 0}, {1, 1, 1}} {
				testRankInMemory(t, r, seed, fn, kk, rg)
			}
		}
	}
}

// testRankInMemory is one case of TestRankInMemoryTopN: function fn,
// partition kind kk, ranks rg[0] to rg[1], the rank output if rg[2] is 1.
func testRankInMemory(t *testing.T, r *rand.Rand, seed uint64, fn RankFunc, kk types.Kind, rg [3]int64) {
	name := fmt.Sprintf("%s-%s-%d-%d-rank%d", fn, kk, rg[0], rg[1], rg[2])
	t.Run(name, func(t *testing.T) {
		spec := RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 1, Desc: true, NullsLast: true}}, Func: fn,
			Start: rg[0], End: rg[1], OutputRank: rg[2] == 1, Strategy: AppendFast, Kinds: []types.Kind{kk, types.KindBigInt, types.KindBigInt}}
		op := NewRank(spec)()
		if err := op.Open(&OpContext{Name: "Rank", Parallelism: 1, MaxParallelism: 128}); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		per := map[int64][][3]int64{} // partition → rows (k, v, seq) in arrival order
		seq := int64(0)
		for range 30 {
			b := types.NewBatch(3, 16)
			for range 1 + r.IntN(16) {
				k, v := r.Int64N(5), r.Int64N(8)
				kv := types.BigIntValue(k)
				if kk == types.KindVarchar {
					kv = types.StringValue("p" + fmt.Sprint(k))
				}
				b.Append(types.Insert, []types.Value{kv, types.BigIntValue(v), types.BigIntValue(seq)})
				per[k] = append(per[k], [3]int64{k, v, seq})
				seq++
			}
			if err := op.Process(0, b, rec); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, rows := range per {
				sorted := slices.Clone(rows)
				slices.SortStableFunc(sorted, func(a, b [3]int64) int { return cmp.Compare(b[1], a[1]) })
				var rank, distinct int64
				for i, x := range sorted {
					if i == 0 || x[1] != sorted[i-1][1] {
						rank, distinct = int64(i+1), distinct+1
					}
					rk := map[RankFunc]int64{RowNumber: int64(i + 1), Rank: rank, DenseRank: distinct}[fn]
					if rk < spec.Start || rk > spec.End {
						continue
					}
					kv := types.BigIntValue(x[0])
					if kk == types.KindVarchar {
						kv = types.StringValue("p" + fmt.Sprint(x[0]))
					}
					row := []types.Value{kv, types.BigIntValue(x[1]), types.BigIntValue(x[2])}
					if spec.OutputRank {
						row = append(row, types.BigIntValue(rk))
					}
					want = append(want, types.FormatRow(types.Insert, row)[2:])
				}
			}
			slices.Sort(want)
			if got := applyChangelog(t, rec.rows); !slices.Equal(got, want) {
				t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, want)
			}
		}
	})
}

// TestRankInMemoryNoAllocation checks that rows entering full top lists
// (every row, with v growing: each ranks first) allocate nothing: no
// decoding or re-encoding of a partition's list per row.
func TestRankInMemoryNoAllocation(t *testing.T) {
	spec := RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 1, Desc: true, NullsLast: true}}, Func: RowNumber,
		Start: 1, End: 10, OutputRank: true, Strategy: AppendFast, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}}
	op := NewRank(spec)()
	if err := op.Open(&OpContext{Name: "Rank", Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	if ko, ok := op.(KeyedOperator); ok { // the keyed-state form, for comparison
		k, err := state.NewMemory(state.Options{MaxParallelism: 128})
		if err != nil {
			t.Fatal(err)
		}
		if err := ko.OpenKeyed(k); err != nil {
			t.Fatal(err)
		}
	}
	b := types.NewBatch(2, 256)
	for i := range 256 {
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i % 64)), types.BigIntValue(0)})
	}
	v := int64(0)
	sink := &discardEmitter2{}
	run := func() {
		for i := range b.Len() {
			v++
			b.Row(i)[1] = types.BigIntValue(v)
		}
		if err := op.Process(0, b, sink); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 { // fill every partition's list and the output batch
		run()
	}
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("a batch of 256 rows entering top lists allocates %.1f times; want 0", n)
	}
}

// TestRankRestoresKeyedStateCheckpoint takes a checkpoint of the Top-N in
// keyed state (rankOp, the form before partitions were kept in memory)
// and restores it into the in-memory form at two parallelisms: the "top"
// records read back, and the changelog is the top 3 of all rows.
func TestRankRestoresKeyedStateCheckpoint(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := tumbleRows(seed, 400, 9)
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
	spec := rankHarnessSpec(AppendFast)
	for _, par := range []int{1, 3} {
		t.Run(fmt.Sprintf("p2-to-p%d", par), func(t *testing.T) {
			h := newRankHarnessOf(t, t.TempDir(), 2, nil, func() Operator { return &rankOp{spec: spec} })
			const batch, cut = 20, 200
			for i := 0; i < cut; i += batch {
				h.emit(rows[i : i+batch])
			}
			c := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			r := newRankHarness(t, t.TempDir(), par, c, AppendFast)
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

// TestRankInMemorySpillRestore runs the in-memory Top-N over about 3,000
// partitions (some NULL: the string-keyed path), more than the state
// budget keeps in memory (so it spills and looks partitions up), takes a
// checkpoint halfway, goes on, restores at the same and other
// parallelisms and replays the rest: the changelog is the top 3 by ts
// descending per partition, computed here.
func TestRankInMemorySpillRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	rows := make([][]types.Value, 6000)
	for i := range rows {
		k := types.BigIntValue(int64(r.IntN(3000)))
		if r.IntN(40) == 0 {
			k = types.Value{}
		}
		rows[i] = []types.Value{k, types.TimestampValue(int64(i*7919%6007 + 1))} // distinct times
	}
	per := map[string][][]types.Value{}
	for _, row := range rows {
		per[row[0].String()] = append(per[row[0].String()], row)
	}
	var want []string
	for _, rs := range per {
		s := slices.Clone(rs)
		slices.SortStableFunc(s, func(a, b []types.Value) int { return cmp.Compare(b[1].Int(), a[1].Int()) })
		for i := 0; i < 3 && i < len(s); i++ {
			want = append(want, types.FormatRow(types.Insert, append(slices.Clone(s[i]), types.BigIntValue(int64(i+1))))[2:])
		}
	}
	slices.Sort(want)
	const batch, cut = 20, 3000
	for _, pp := range [][2]int{{1, 1}, {2, 3}} {
		t.Run(fmt.Sprintf("p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			h := newRankHarness(t, t.TempDir(), pp[0], nil, AppendFast)
			for i := 0; i < cut; i += batch {
				h.emit(rows[i : i+batch])
			}
			c := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			for i := cut; i < cut+5*batch; i += batch {
				h.emit(rows[i : i+batch])
			}
			rh := newRankHarness(t, t.TempDir(), pp[1], c, AppendFast)
			rh.reader.pos = cut
			for i := cut; i < len(rows); i += batch {
				rh.emit(rows[i:min(i+batch, len(rows))])
			}
			rh.end()
			if got := applyChangelog(t, append(before, rh.sink.rows...)); !slices.Equal(got, want) {
				t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), head(got), head(want))
			}
		})
	}
}

// TestRankDenseRankInMemoryRestore runs the append-only RANK and
// DENSE_RANK Top-3 (partitions typed in memory) over about 1,500
// partitions (some NULL) with many tied times, more than the state budget
// keeps in memory (so it spills and looks partitions up), takes a
// checkpoint halfway, goes on (output a crash loses), restores at the
// same and other parallelisms (1, 2, 4) and replays the rest: the
// changelog is each partition's rows ranked 1 to 3 by ts descending,
// with their rank, computed here.
func TestRankDenseRankInMemoryRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	rows := make([][]types.Value, 5000)
	for i := range rows {
		k := types.BigIntValue(int64(r.IntN(1500)))
		if r.IntN(40) == 0 {
			k = types.Value{}
		}
		rows[i] = []types.Value{k, types.TimestampValue(int64(1 + r.IntN(6)))} // ties
	}
	for _, fn := range []RankFunc{Rank, DenseRank} {
		per := map[string][][]types.Value{}
		for _, row := range rows {
			per[row[0].String()] = append(per[row[0].String()], row)
		}
		var want []string
		for _, rs := range per {
			s := slices.Clone(rs)
			slices.SortStableFunc(s, func(a, b []types.Value) int { return cmp.Compare(b[1].Int(), a[1].Int()) })
			var rank, distinct int64
			for i, row := range s {
				if i == 0 || row[1] != s[i-1][1] {
					rank, distinct = int64(i+1), distinct+1
				}
				rk := rank
				if fn == DenseRank {
					rk = distinct
				}
				if rk <= 3 {
					want = append(want, types.FormatRow(types.Insert, append(slices.Clone(row), types.BigIntValue(rk)))[2:])
				}
			}
		}
		slices.Sort(want)
		spec := rankHarnessSpec(AppendFast)
		spec.Func = fn
		const batch, cut = 20, 2500
		for _, pp := range [][2]int{{1, 1}, {1, 2}, {2, 4}, {4, 1}} {
			t.Run(fmt.Sprintf("%s-p%d-to-p%d", fn, pp[0], pp[1]), func(t *testing.T) {
				h := newRankHarnessOf(t, t.TempDir(), pp[0], nil, NewRank(spec))
				for i := 0; i < cut; i += batch {
					h.emit(rows[i : i+batch])
				}
				c := h.checkpoint()
				before := slices.Clone(h.sink.rows)
				for i := cut; i < cut+5*batch; i += batch {
					h.emit(rows[i : i+batch])
				}
				rh := newRankHarnessOf(t, t.TempDir(), pp[1], c, NewRank(spec))
				rh.reader.pos = cut
				for i := cut; i < len(rows); i += batch {
					rh.emit(rows[i:min(i+batch, len(rows))])
				}
				rh.end()
				if got := applyChangelog(t, append(before, rh.sink.rows...)); !slices.Equal(got, want) {
					t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), head(got), head(want))
				}
			})
		}
	}
}
