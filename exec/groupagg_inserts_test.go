package exec

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestGroupAggOverInsertsMinMax checks the GroupAggregate of an
// insert-only input (NewGroupAggOverInserts: MIN/MAX keep one extreme per
// group): its accumulators hold one value per group, and its final rows,
// after a restore from a checkpoint written by the sorted form
// (NewGroupAgg, every distinct value kept) and a spill past a tiny budget,
// equal the MIN and MAX computed here.
func TestGroupAggOverInsertsMinMax(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	calls := []AggCall{
		{Func: AggMin, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
		{Func: AggMax, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
		{Func: AggMax, Arg: 2, ArgType: types.Varchar, Type: types.Varchar},
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
	}
	type ext struct {
		lo, hi int64
		s      string
		n      int64
	}
	want := map[int64]*ext{}
	var batches []*types.Batch
	for range 120 {
		b := types.NewBatch(3, 256)
		for range 256 {
			k, v := r.Int64N(3000), r.Int64N(2_000_000)-1_000_000
			s := fmt.Sprintf("s%07d", r.IntN(10_000_000))
			b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v), types.StringValue(s)})
			e := want[k]
			if e == nil {
				want[k] = &ext{lo: v, hi: v, s: s, n: 1}
				continue
			}
			e.lo, e.hi, e.n = min(e.lo, v), max(e.hi, v), e.n+1
			if s > e.s {
				e.s = s
			}
		}
		batches = append(batches, b)
	}
	var wantRows []string
	for k, e := range want {
		wantRows = append(wantRows, types.FormatRow(types.Insert, []types.Value{types.BigIntValue(k),
			types.BigIntValue(e.lo), types.BigIntValue(e.hi), types.StringValue(e.s), types.BigIntValue(e.n)})[2:])
	}
	sort.Strings(wantRows)

	open := func(newOp func() Operator, st *statestore.Store, restored bool, budget int64) *groupAggOp {
		t.Helper()
		op := newOp().(*groupAggOp)
		if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: budget}); err != nil {
			t.Fatal(err)
		}
		if st != nil {
			if err := op.InitState(st, restored); err != nil {
				t.Fatal(err)
			}
		}
		return op
	}

	// In memory: one value per group and per MIN/MAX.
	var mem recorder
	plain := open(NewGroupAggOverInserts([]int{0}, calls), nil, false, 0)
	for _, b := range batches {
		if err := plain.Process(0, b, &mem); err != nil {
			t.Fatal(err)
		}
	}
	for i, acc := range plain.accs[:3] {
		for g, vals := range acc.(*minMaxAcc).vals {
			if len(vals) > 1 {
				t.Fatalf("call %d group %d keeps %d values, want 1", i, g, len(vals))
			}
		}
	}
	if got := finalRows(t, mem.rows); strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Fatalf("seed %d: in-memory result differs: %d rows, want %d", seed, len(got), len(wantRows))
	}

	// The sorted form for the first half, checkpointed; the insert-only
	// form restored from it, over a budget its groups exceed.
	dir := t.TempDir()
	st := openAggStore(t, filepath.Join(dir, "work"))
	var got recorder
	first := open(NewGroupAgg([]int{0}, calls), st, false, 1)
	half := len(batches) / 2
	for _, b := range batches[:half] {
		if err := first.Process(0, b, &got); err != nil {
			t.Fatal(err)
		}
	}
	snap := filepath.Join(dir, "snap")
	checkpointAgg(t, first, st, snap)
	restored := restoreAggStore(t, snap, filepath.Join(dir, "work2"))
	defer restored.Close()
	second := open(NewGroupAggOverInserts([]int{0}, calls), restored, true, 1)
	for _, b := range batches[half:] {
		if err := second.Process(0, b, &got); err != nil {
			t.Fatal(err)
		}
	}
	if !second.st.Backed() {
		t.Fatal("the restored groups never spilled: the test needs a budget they exceed")
	}
	if g := finalRows(t, got.rows); strings.Join(g, "\n") != strings.Join(wantRows, "\n") {
		t.Fatalf("seed %d: restored result differs: %d rows, want %d", seed, len(g), len(wantRows))
	}
}
