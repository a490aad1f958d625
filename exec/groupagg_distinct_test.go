package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Input of the shared-DISTINCT tests: k BIGINT, s VARCHAR, v BIGINT,
// w BIGINT, p BIGINT, then the FILTER arguments as the planner makes them:
// vlow = CASE WHEN p < 10 THEN v END, vmid = CASE WHEN p >= 10 AND p < 20
// THEN v END, wlow = CASE WHEN p < 10 THEN w END.
const (
	dcK = iota
	dcS
	dcV
	dcW
	dcP
	dcVLow
	dcVMid
	dcWLow
	dcWidth
)

// distinctCalls are DISTINCT aggregates in two families (v and w) with
// FILTER variants, a SUM(DISTINCT) in v's, and a COUNT(DISTINCT v) that
// names no DistinctArg (a family of its own, by column).
var distinctCalls = []AggCall{
	{Func: AggCountStar, Arg: -1, Type: types.BigInt},
	{Func: AggCount, Arg: dcV, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "v"},
	{Func: AggCount, Arg: dcVLow, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "v"},
	{Func: AggCount, Arg: dcVMid, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "v"},
	{Func: AggSum, Arg: dcVLow, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "v"},
	{Func: AggCount, Arg: dcW, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "w"},
	{Func: AggCount, Arg: dcWLow, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "w"},
	{Func: AggCount, Arg: dcV, ArgType: types.BigInt, Type: types.BigInt, Distinct: true},
}

// distinctRow makes an input row.
func distinctRow(k int64, s string, v, w, p int64) []types.Value {
	row := make([]types.Value, dcWidth)
	row[dcK], row[dcS] = types.BigIntValue(k), types.StringValue(s)
	row[dcV], row[dcW], row[dcP] = types.BigIntValue(v), types.BigIntValue(w), types.BigIntValue(p)
	if p < 10 {
		row[dcVLow], row[dcWLow] = row[dcV], row[dcW]
	}
	if p >= 10 && p < 20 {
		row[dcVMid] = row[dcV]
	}
	return row
}

// distinctInput makes batches of inserts and deletes of earlier rows
// (some groups lose all their rows), and the rows left at the end.
func distinctInput(r *rand.Rand, keys, rows int) ([]*types.Batch, [][]types.Value) {
	var out []*types.Batch
	var live [][]types.Value
	b := types.NewBatch(dcWidth, 128)
	for range rows {
		if b.Len() == 128 {
			out = append(out, b)
			b = types.NewBatch(dcWidth, 128)
		}
		if r.IntN(4) == 0 && len(live) > 0 {
			j := r.IntN(len(live))
			b.Append(types.Delete, live[j])
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
			continue
		}
		k := int64(r.IntN(keys))
		row := distinctRow(k, fmt.Sprintf("s%d", k%7), int64(r.IntN(40)), int64(r.IntN(1000)), int64(r.IntN(30)))
		live = append(live, row)
		b.Append(types.Insert, row)
	}
	return append(out, b), live
}

// distinctModel computes the final rows of distinctCalls over rows in plain
// Go: per group, the sets of values each call sees.
func distinctModel(rows [][]types.Value, keys []int) []string {
	type acc struct {
		key   []types.Value
		n     int64
		v, vl map[int64]bool
		vm, w map[int64]bool
		wl    map[int64]bool
	}
	groups := map[string]*acc{}
	for _, row := range rows {
		var kb []byte
		for _, k := range keys {
			kb = state.AppendValue(kb, row[k])
		}
		a := groups[string(kb)]
		if a == nil {
			a = &acc{v: map[int64]bool{}, vl: map[int64]bool{}, vm: map[int64]bool{}, w: map[int64]bool{}, wl: map[int64]bool{}}
			for _, k := range keys {
				a.key = append(a.key, row[k])
			}
			groups[string(kb)] = a
		}
		a.n++
		v, w, p := row[dcV].Int(), row[dcW].Int(), row[dcP].Int()
		a.v[v], a.w[w] = true, true
		if p < 10 {
			a.vl[v], a.wl[w] = true, true
		}
		if p >= 10 && p < 20 {
			a.vm[v] = true
		}
	}
	var out []string
	for _, a := range groups {
		sum := types.NullValue()
		if len(a.vl) > 0 {
			var s int64
			for x := range a.vl {
				s += x
			}
			sum = types.BigIntValue(s)
		}
		row := append(slices.Clone(a.key), types.BigIntValue(a.n), types.BigIntValue(int64(len(a.v))),
			types.BigIntValue(int64(len(a.vl))), types.BigIntValue(int64(len(a.vm))), sum,
			types.BigIntValue(int64(len(a.w))), types.BigIntValue(int64(len(a.wl))), types.BigIntValue(int64(len(a.v))))
		out = append(out, types.FormatRow(types.Insert, row)[2:])
	}
	slices.Sort(out)
	return out
}

// openDistinctAgg opens a GroupAgg of distinctCalls as subtask sub of par.
func openDistinctAgg(t *testing.T, st *statestore.Store, restored bool, budget int64, keys []int, sub, par int, noShare bool) *groupAggOp {
	t.Helper()
	op := NewGroupAgg(keys, distinctCalls)().(*groupAggOp)
	op.noShare = noShare
	if err := op.Open(&OpContext{Subtask: sub, Parallelism: par, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: budget}); err != nil {
		t.Fatal(err)
	}
	if noShare != (op.dv == nil) {
		t.Fatalf("shared DISTINCT: %v, want %v", op.dv != nil, !noShare)
	}
	if st != nil {
		if err := op.InitState(st, restored); err != nil {
			t.Fatal(err)
		}
	}
	return op
}

// subtaskOf returns the subtask of par that owns row's group.
func subtaskOf(row []types.Value, keys []int, par int) int {
	var kb []byte
	for _, k := range keys {
		kb = state.AppendValue(kb, row[k])
	}
	kg := state.KeyGroup(kb, 128)
	for s := range par {
		if first, last := state.KeyGroupRange(s, par, 128); kg >= first && kg <= last {
			return s
		}
	}
	panic("no subtask")
}

// splitBatch splits b's rows by the subtask of their group.
func splitBatch(b *types.Batch, keys []int, par int) []*types.Batch {
	out := make([]*types.Batch, par)
	for s := range out {
		out[s] = types.NewBatch(b.Width, b.Len())
	}
	for i := range b.Len() {
		out[subtaskOf(b.Row(i), keys, par)].Append(b.Kinds[i], b.Row(i))
	}
	return out
}

// TestGroupAggSharedDistinctSpillRestore is the randomized check of
// DISTINCT with FILTER over inserts and deletes: a GroupAgg whose groups
// and DISTINCT entries spill (the smallest budget), snapshotted halfway and
// restored over budget, into memory, and at parallelism 2, must end with
// the rows a plain Go computation gives, by an integer key and by a
// two-column key. The seed is printed; WEIR_SEED is not read (run with
// -count to vary it: each run takes a new one).
//
// With the entries' count cap lowered to 1, every count past 1 goes to the
// excess map: its save, load, conversion and removal are checked too.
func TestGroupAggSharedDistinctSpillRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, limit := range []int32{math.MaxInt32, 1} {
		t.Run(fmt.Sprintf("count cap %d", limit), func(t *testing.T) {
			// Not parallel: countCap is the package's. The cases within run
			// in parallel, so Cleanup (after them) restores it, not defer.
			old := countCap
			t.Cleanup(func() { countCap = old })
			countCap = limit
			sharedDistinctSpillRestore(t, seed)
		})
	}
}

func sharedDistinctSpillRestore(t *testing.T, seed uint64) {
	for _, keys := range [][]int{{dcK}, {dcS, dcK}} {
		t.Run(fmt.Sprintf("keys %v", keys), func(t *testing.T) {
			t.Parallel() // each case has its own stores
			r := rand.New(rand.NewPCG(seed, uint64(len(keys))))
			batches, live := distinctInput(r, 2500, sharedDistinctRows())
			want := distinctModel(live, keys)
			half := len(batches) / 2

			var mem recorder
			plain := openDistinctAgg(t, nil, false, 0, keys, 0, 1, false)
			for _, b := range batches {
				if err := plain.Process(0, b, &mem); err != nil {
					t.Fatal(err)
				}
			}
			if got := finalRows(t, mem.rows); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("keys %v, seed %d: in memory: %d rows, want %d\n%s", keys, seed, len(got), len(want), firstDiff(got, want))
			}

			dir := t.TempDir()
			st := openAggStore(t, filepath.Join(dir, "work"))
			var first recorder
			agg := openDistinctAgg(t, st, false, 1, keys, 0, 1, false)
			for _, b := range batches[:half] {
				if err := agg.Process(0, b, &first); err != nil {
					t.Fatal(err)
				}
			}
			if !agg.st.Backed() || !agg.dv.st.Backed() {
				t.Fatal("the groups and DISTINCT entries never spilled")
			}
			snap := filepath.Join(dir, "snap")
			checkpointAgg(t, agg, st, snap)

			for _, tc := range []struct {
				name   string
				budget int64
				par    int
			}{{"over budget", 1, 1}, {"into memory", 64 << 20, 1}, {"parallelism 2", 1, 2}} {
				got := slices.Clone(first.rows)
				stores := make([]*statestore.Store, tc.par)
				aggs := make([]*groupAggOp, tc.par)
				for s := range tc.par {
					work := filepath.Join(dir, fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(tc.name, " ", "-"), len(keys), s))
					var rs *statestore.Store
					if tc.par == 1 {
						rs = restoreAggStore(t, snap, work)
					} else {
						lo, hi := state.KeyGroupRange(s, tc.par, 128)
						var err error
						if rs, err = statestore.RestoreKeyGroups([]string{snap}, work, lo, hi, statestore.Options{CacheBytes: 64 << 10}); err != nil {
							t.Fatal(err)
						}
					}
					stores[s] = rs
					aggs[s] = openDistinctAgg(t, rs, true, tc.budget, keys, s, tc.par, false)
				}
				if tc.budget > 1 && (aggs[0].st.Backed() || aggs[0].dv.st.Backed()) {
					t.Fatalf("%s: restored state did not load whole", tc.name)
				}
				var rec recorder
				for _, b := range batches[half:] {
					parts := []*types.Batch{b}
					if tc.par > 1 {
						parts = splitBatch(b, keys, tc.par)
					}
					for s, p := range parts {
						if err := aggs[s].Process(0, p, &rec); err != nil {
							t.Fatal(err)
						}
					}
				}
				for s := range tc.par {
					if err := aggs[s].Finish(&rec); err != nil {
						t.Fatal(err)
					}
					stores[s].Close()
				}
				got = append(got, rec.rows...)
				if g := finalRows(t, got); strings.Join(g, "\n") != strings.Join(want, "\n") {
					t.Fatalf("keys %v, seed %d, restored %s: %d rows, want %d\n%s", keys, seed, tc.name, len(g), len(want), firstDiff(g, want))
				}
			}
		})
	}
}

// sharedDistinctRows is how many rows TestGroupAggSharedDistinctSpillRestore
// draws over its 2,500 keys: 30,000, or 12,000 under -race (its spilled
// runs were a sixth of the package's -race time). Either way the half
// before the snapshot holds about 2,000 groups, well past the 1,024 a
// budget of 1 keeps in memory, so the groups and DISTINCT entries spill
// (the test checks it).
func sharedDistinctRows() int {
	if raceEnabled {
		return 12000
	}
	return 30000
}

// firstDiff describes the first difference of two sorted row lists.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: got %s, want %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

// TestGroupAggSharedDistinctOldLayout restores a checkpoint written before
// DISTINCT values were entries of their own (group records of version 3,
// each call's set inside): the sets are converted as the groups load, the
// result is right, and a checkpoint taken after it restores without the
// old records.
func TestGroupAggSharedDistinctOldLayout(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	defer func(c int32) { countCap = c }(countCap)
	countCap = 2 // converted counts past it go to the excess map
	keys := []int{dcS, dcK}
	r := rand.New(rand.NewPCG(seed, 9))
	batches, live := distinctInput(r, 1500, 20000)
	want := distinctModel(live, keys)
	third := len(batches) / 3

	dir := t.TempDir()
	st := openAggStore(t, filepath.Join(dir, "work"))
	var rec recorder
	old := openDistinctAgg(t, st, false, 64<<20, keys, 0, 1, true)
	for _, b := range batches[:third] {
		if err := old.Process(0, b, &rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.PrepareSnapshot(); err != nil {
		t.Fatal(err)
	}
	// The records in the old layout say version 3.
	sp, err := st.Space("agg")
	if err != nil {
		t.Fatal(err)
	}
	prefix := append([]byte{byte(len(groupsStateName))}, groupsStateName...)
	for kg := range 128 {
		var ks, vs [][]byte
		err := sp.Scan(kg, prefix, append(slices.Clone(prefix[:len(prefix)-1]), prefix[len(prefix)-1]+1), false, func(k, v []byte) (bool, error) {
			if v[0] != groupStateVersion {
				return false, fmt.Errorf("record of version %d", v[0])
			}
			ks, vs = append(ks, slices.Clone(k)), append(vs, append([]byte{3}, v[1:]...))
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range ks {
			if err := sp.Put(kg, ks[i], vs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	snap := filepath.Join(dir, "snap")
	if _, err := st.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	st.Close()

	for _, budget := range []int64{64 << 20, 1} {
		rs := restoreAggStore(t, snap, filepath.Join(dir, fmt.Sprintf("work2-%d", budget)))
		got := slices.Clone(rec.rows)
		var rec2 recorder
		agg := openDistinctAgg(t, rs, true, budget, keys, 0, 1, false)
		for _, b := range batches[third : 2*third] {
			if err := agg.Process(0, b, &rec2); err != nil {
				t.Fatal(err)
			}
		}
		snap2 := filepath.Join(dir, fmt.Sprintf("snap2-%d", budget))
		checkpointAgg(t, agg, rs, snap2)
		rs2 := restoreAggStore(t, snap2, filepath.Join(dir, fmt.Sprintf("work3-%d", budget)))
		agg2 := openDistinctAgg(t, rs2, true, budget, keys, 0, 1, false)
		for _, b := range batches[2*third:] {
			if err := agg2.Process(0, b, &rec2); err != nil {
				t.Fatal(err)
			}
		}
		if err := agg2.Finish(&rec2); err != nil {
			t.Fatal(err)
		}
		rs2.Close()
		got = append(got, rec2.rows...)
		if g := finalRows(t, got); strings.Join(g, "\n") != strings.Join(want, "\n") {
			t.Fatalf("budget %d, seed %d: %d rows, want %d\n%s", budget, seed, len(g), len(want), firstDiff(g, want))
		}
	}
}

// TestGroupAggSharedDistinctTTL checks that with a state TTL a group
// expires with its DISTINCT entries, in memory and after a spill (the
// expired records are then found by lookups): a row of its key later
// starts from zero, counting none of the old values.
func TestGroupAggSharedDistinctTTL(t *testing.T) {
	calls := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
		{Func: AggCount, Arg: 1, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "v"},
	}
	for _, spill := range []bool{false, true} {
		st := openAggStore(t, filepath.Join(t.TempDir(), "work"))
		budget := int64(64 << 20)
		if spill {
			budget = 1
		}
		op := NewGroupAgg([]int{0}, calls)().(*groupAggOp)
		if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: budget, StateTTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		if err := op.InitState(st, false); err != nil {
			t.Fatal(err)
		}
		step := func(now int64, rows ...[2]int64) []string {
			t.Helper()
			if err := op.advanceTime(now); err != nil {
				t.Fatal(err)
			}
			b := types.NewBatch(2, len(rows))
			for _, r := range rows {
				b.Append(types.Insert, []types.Value{types.BigIntValue(r[0]), types.BigIntValue(r[1])})
			}
			var rec recorder
			if err := op.Process(0, b, &rec); err != nil {
				t.Fatal(err)
			}
			return rec.rows
		}
		if got := step(0, [2]int64{1, 10}, [2]int64{1, 11}); !slices.Equal(got, []string{"+I[1, 2, 2]"}) {
			t.Fatalf("spill %v: first batch: %v", spill, got)
		}
		if spill {
			// Many other groups, each with an entry: both spill.
			var rows [][2]int64
			for k := range int64(3000) {
				rows = append(rows, [2]int64{100 + k, k})
			}
			step(100, rows...)
			if !op.st.Backed() || !op.dv.st.Backed() {
				t.Fatal("no spill")
			}
		}
		if got := step(500, [2]int64{1, 11}); !slices.Equal(got, []string{"-U[1, 2, 2]", "+U[1, 3, 2]"}) {
			t.Fatalf("spill %v: second batch: %v", spill, got)
		}
		// Group 1 and its entries were last written at 500: gone at 1500.
		if got := step(1600, [2]int64{1, 11}); !slices.Equal(got, []string{"+I[1, 1, 1]"}) {
			t.Fatalf("spill %v: after the TTL: %v", spill, got)
		}
		if got := step(1700, [2]int64{1, 10}); !slices.Equal(got, []string{"-U[1, 1, 1]", "+U[1, 2, 2]"}) {
			t.Fatalf("spill %v: after the TTL, an old value: %v", spill, got)
		}
		st.Close()
	}
}
