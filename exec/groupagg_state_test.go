package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// allAggs covers every accumulator kind, so every state encoding is written
// and read back.
var allAggs = []AggCall{
	{Func: AggCountStar, Arg: -1, Type: types.BigInt},
	{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
	{Func: AggSum, Arg: 2, ArgType: types.Double, Type: types.Double},
	{Func: AggAvg, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
	{Func: AggMin, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
	{Func: AggMax, Arg: 3, ArgType: types.Varchar, Type: types.Varchar},
	{Func: AggCount, Arg: 1, ArgType: types.BigInt, Type: types.BigInt, Distinct: true},
}

// stateInput makes batches of (k, v, d, s) rows over many keys, with some
// rows retracted later (allAggsAnswer computes their final result).
func stateInput(seed uint64, keys, rows int) []*types.Batch {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []*types.Batch
	var added [][]types.Value
	b := types.NewBatch(4, 256)
	for i := range rows {
		if b.Len() == 256 {
			out = append(out, b)
			b = types.NewBatch(4, 256)
		}
		if i%5 == 4 && len(added) > 0 {
			j := r.IntN(len(added))
			b.Append(types.Delete, added[j])
			added = append(added[:j], added[j+1:]...)
			continue
		}
		v := int64(r.IntN(1000))
		row := []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.BigIntValue(v),
			types.DoubleValue(float64(v) / 4), types.StringValue(fmt.Sprintf("s%03d", v%97))}
		added = append(added, row)
		b.Append(types.Insert, row)
	}
	return append(out, b)
}

// allAggsAnswer computes, in plain Go, the final rows of allAggs grouped by
// keys over the applied changelog batches of stateInput (columns k, v, d,
// s), formatted as finalRows returns them: the answer the GroupAgg tests
// compare with, independent of the operator.
func allAggsAnswer(batches []*types.Batch, keys []int) []string {
	type group struct {
		key    []types.Value
		count  int64
		sumV   int64
		sumD   float64
		values map[int64]int // v -> live rows: MIN(v), COUNT(DISTINCT v)
		strs   map[string]int
	}
	groups := map[string]*group{}
	for _, b := range batches {
		for i := range b.Len() {
			row := b.Row(i)
			key := make([]types.Value, len(keys))
			for j, c := range keys {
				key[j] = row[c]
			}
			ks := types.FormatRow(types.Insert, key)
			g := groups[ks]
			if g == nil {
				g = &group{key: key, values: map[int64]int{}, strs: map[string]int{}}
				groups[ks] = g
			}
			d := int64(1)
			if b.Kinds[i] == types.Delete || b.Kinds[i] == types.UpdateBefore {
				d = -1
			}
			v := row[1].Int()
			g.count += d
			g.sumV += d * v
			g.sumD += float64(d) * row[2].Float()
			g.values[v] += int(d)
			if g.values[v] == 0 {
				delete(g.values, v)
			}
			s := row[3].Str()
			g.strs[s] += int(d)
			if g.strs[s] == 0 {
				delete(g.strs, s)
			}
		}
	}
	var out []string
	for _, g := range groups {
		if g.count == 0 {
			continue
		}
		minV := int64(math.MaxInt64)
		for v := range g.values {
			minV = min(minV, v)
		}
		maxS := ""
		for s := range g.strs {
			maxS = max(maxS, s)
		}
		row := append(slices.Clone(g.key),
			types.BigIntValue(g.count), types.BigIntValue(g.sumV), types.DoubleValue(g.sumD),
			types.BigIntValue(g.sumV/g.count), types.BigIntValue(minV), types.StringValue(maxS),
			types.BigIntValue(int64(len(g.values))))
		out = append(out, types.FormatRow(types.Insert, row)[2:])
	}
	sort.Strings(out)
	return out
}

func finalRows(t *testing.T, changelog []string) []string {
	t.Helper()
	rows := map[string]int{}
	for _, l := range changelog {
		kind, row := l[:2], l[2:]
		switch kind {
		case "+I", "+U":
			rows[row]++
		case "-U", "-D":
			if rows[row]--; rows[row] == 0 {
				delete(rows, row)
			}
		}
	}
	var out []string
	for r, n := range rows {
		if n != 1 {
			t.Fatalf("row %s present %d times", r, n)
		}
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// openAggStore opens a store at path with the small cache of the
// GroupAgg state tests; the caller closes it.
func openAggStore(t *testing.T, path string) *statestore.Store {
	t.Helper()
	st, err := statestore.Open(path, statestore.Options{CacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkpointAgg has op write its state to st (PrepareSnapshot), takes a
// snapshot of st at snap and closes st.
func checkpointAgg(t *testing.T, op StatefulOperator, st *statestore.Store, snap string) {
	t.Helper()
	if err := op.PrepareSnapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// restoreAggStore restores snapshot snap into work, with the cache of
// openAggStore; the caller closes it.
func restoreAggStore(t *testing.T, snap, work string) *statestore.Store {
	t.Helper()
	st, err := statestore.Restore(snap, work, statestore.Options{CacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func openAgg(t *testing.T, st *statestore.Store, restored bool, budget int64, keys ...int) *groupAggOp {
	t.Helper()
	if len(keys) == 0 {
		keys = []int{0}
	}
	op := NewGroupAgg(keys, allAggs)().(*groupAggOp)
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

// TestGroupAggStateSpillAndRestore checks that a GroupAgg whose groups
// spill to the store, restored from a snapshot halfway, emits the final
// result a Go computation of the whole input gives: restored with a
// budget its groups exceed (some load at once, the rest by lookup) and with
// one they fit in (all load at once and the store no longer backs it), by an
// integer key and by a two-column key. Both restores of a key start from
// the same snapshot: the run up to it is done once per key.
func TestGroupAggStateSpillAndRestore(t *testing.T) {
	keyCases := []struct {
		name string
		keys []int
	}{{"bigint key", []int{0}}, {"two-column key", []int{3, 0}}}
	restores := []struct {
		name          string
		restoreBudget int64
		wantBacked    bool
	}{
		{"restored over budget", 1, true},
		{"restored into memory", 64 << 20, false},
	}
	keys, rows := spillRestoreSize()
	batches := stateInput(7, keys, rows)
	half := len(batches) / 2
	for _, kc := range keyCases {
		t.Run(kc.name, func(t *testing.T) {
			want := allAggsAnswer(batches, kc.keys)
			if len(want) < keys*4/5 {
				t.Fatalf("only %d groups: the test needs many more than the budget", len(want))
			}

			dir := t.TempDir()
			st := openAggStore(t, filepath.Join(dir, "work"))
			var first recorder
			agg := openAgg(t, st, false, 1, kc.keys...) // the smallest budget: 1024 groups
			for _, b := range batches[:half] {
				if err := agg.Process(0, b, &first); err != nil {
					t.Fatal(err)
				}
			}
			if !agg.st.Backed() {
				t.Fatal("the groups never spilled to the store")
			}
			snap := filepath.Join(dir, "snap")
			checkpointAgg(t, agg, st, snap)
			for ri, tc := range restores {
				t.Run(tc.name, func(t *testing.T) {
					restored := restoreAggStore(t, snap, filepath.Join(dir, fmt.Sprint("work-restored", ri)))
					defer restored.Close()
					agg2 := openAgg(t, restored, true, tc.restoreBudget, kc.keys...)
					if agg2.st.Backed() != tc.wantBacked {
						t.Fatalf("restored operator backed = %v, want %v (%d groups loaded)", agg2.st.Backed(), tc.wantBacked, len(agg2.heads))
					}
					if !tc.wantBacked && len(agg2.heads) < keys*3/5 {
						t.Fatalf("only %d groups loaded", len(agg2.heads))
					}
					got := recorder{rows: slices.Clone(first.rows)}
					for _, b := range batches[half:] {
						if err := agg2.Process(0, b, &got); err != nil {
							t.Fatal(err)
						}
					}
					if g := finalRows(t, got.rows); strings.Join(g, "\n") != strings.Join(want, "\n") {
						i := 0
						for i < min(len(g), len(want)) && g[i] == want[i] {
							i++
						}
						t.Fatalf("spilled and restored result differs from the Go answer: %d rows, want %d; first difference at row %d:\ngot  %v\nwant %v",
							len(g), len(want), i, g[i:min(i+1, len(g))], want[i:min(i+1, len(want))])
					}
				})
			}
		})
	}
}

// spillRestoreSize is the keys and rows TestGroupAggStateSpillAndRestore
// draws: 5,000 keys over 40,000 rows, or 2,500 over 16,000 under -race
// (CI runs it at full size without). Either way the half before the
// snapshot holds about twice the 1,024 groups a budget of 1 keeps in
// memory, so the groups spill (the test checks it).
func spillRestoreSize() (keys, rows int) {
	if raceEnabled {
		return 2500, 16000
	}
	return 5000, 40000
}

// finishRestoreSize is the keys and rows TestGroupAggFinishAfterRestore
// draws: 3,000 keys over 20,000 rows, or 1,500 over 8,000 under -race;
// either way more groups than the 1,024 a budget of 1 keeps in memory.
func finishRestoreSize() (keys, rows int) {
	if raceEnabled {
		return 1500, 8000
	}
	return 3000, 20000
}

// TestGroupAggFinishAfterRestore checks what a restored task that had
// finished relies on (a non-source task snapshots its final state for the
// checkpoints after its end, and after a restore its inputs end at once
// and it runs Finish again): a GroupAgg restored from a snapshot taken
// after Finish emits nothing at its second Finish, spilled or in memory,
// and holds the first run's state (checked against a Go answer).
func TestGroupAggFinishAfterRestore(t *testing.T) {
	keys, rows := finishRestoreSize()
	batches := stateInput(11, keys, rows)
	for _, budget := range []int64{1, 64 << 20} {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			dir := t.TempDir()
			st := openAggStore(t, filepath.Join(dir, "work"))
			agg := openAgg(t, st, false, budget)
			var first recorder
			for _, b := range batches {
				if err := agg.Process(0, b, &first); err != nil {
					t.Fatal(err)
				}
			}
			if err := agg.Finish(&first); err != nil {
				t.Fatal(err)
			}
			if budget == 1 && !agg.st.Backed() {
				t.Fatal("the groups never spilled to the store")
			}
			want := allAggsAnswer(batches, []int{0})
			if g := finalRows(t, first.rows); strings.Join(g, "\n") != strings.Join(want, "\n") {
				t.Fatalf("first run: %d rows, want %d from the Go answer", len(g), len(want))
			}
			snap := filepath.Join(dir, "snap")
			checkpointAgg(t, agg, st, snap)
			restored := restoreAggStore(t, snap, filepath.Join(dir, "work2"))
			defer restored.Close()
			agg2 := openAgg(t, restored, true, budget)
			var again recorder
			if err := agg2.Finish(&again); err != nil {
				t.Fatal(err)
			}
			if len(again.rows) != 0 {
				t.Fatalf("the restored finished GroupAgg emitted %d rows at Finish, e.g. %s", len(again.rows), again.rows[0])
			}
			// The restored state is the first run's: more rows (which retract
			// only rows of their own) end at the Go answer over all the input.
			more := stateInput(12, keys, 3000)
			all := recorder{rows: slices.Clone(first.rows)}
			for _, b := range more {
				if err := agg2.Process(0, b, &all); err != nil {
					t.Fatal(err)
				}
			}
			want = allAggsAnswer(append(slices.Clone(batches), more...), []int{0})
			if g := finalRows(t, all.rows); strings.Join(g, "\n") != strings.Join(want, "\n") {
				t.Fatalf("after the restore: %d rows, want %d from the Go answer", len(g), len(want))
			}
		})
	}
}
