package exec

import (
	"errors"
	"fmt"
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

// presenceReviewCalls are distinctCalls with MIN(v) and MAX(w), which a
// GroupAgg over inserts keeps as extremes only.
var presenceReviewCalls = append(slices.Clone(distinctCalls),
	AggCall{Func: AggMin, Arg: dcV, ArgType: types.BigInt, Type: types.BigInt},
	AggCall{Func: AggMax, Arg: dcW, ArgType: types.BigInt, Type: types.BigInt},
)

// openReviewAgg opens a GroupAgg of presenceReviewCalls over inserts as
// subtask sub of par; asMain: with presence-only entries off, which is
// what main's NewGroupAggOverInserts writes (groups v4, entries v1 with
// counts, MIN/MAX as extremes); retracting: NewGroupAgg.
func openReviewAgg(t *testing.T, st *statestore.Store, restored bool, budget int64, keys []int, sub, par int, asMain, retracting bool) (*groupAggOp, error) {
	t.Helper()
	newOp := NewGroupAggOverInserts(keys, presenceReviewCalls)
	if retracting {
		newOp = NewGroupAgg(keys, presenceReviewCalls)
	}
	op := newOp().(*groupAggOp)
	if err := op.Open(&OpContext{Subtask: sub, Parallelism: par, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: budget}); err != nil {
		t.Fatal(err)
	}
	if asMain {
		op.dv.presence = false
	}
	return op, op.InitState(st, restored)
}

// presenceReviewModel is the final rows of presenceReviewCalls over rows,
// grouped by keys, computed in plain Go.
func presenceReviewModel(rows [][]types.Value, keys []int) []string {
	type acc struct {
		key          []types.Value
		n            int64
		v, vl, vm, w map[int64]bool
		wl           map[int64]bool
		minV, maxW   int64
	}
	groups := map[string]*acc{}
	var order []string
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
			order = append(order, string(kb))
		}
		v, w, p := row[dcV].Int(), row[dcW].Int(), row[dcP].Int()
		if a.n == 0 || v < a.minV {
			a.minV = v
		}
		if a.n == 0 || w > a.maxW {
			a.maxW = w
		}
		a.n++
		a.v[v], a.w[w] = true, true
		if p < 10 {
			a.vl[v], a.wl[w] = true, true
		}
		if p >= 10 && p < 20 {
			a.vm[v] = true
		}
	}
	var out []string
	for _, k := range order {
		a := groups[k]
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
			types.BigIntValue(int64(len(a.w))), types.BigIntValue(int64(len(a.wl))), types.BigIntValue(int64(len(a.v))),
			types.BigIntValue(a.minV), types.BigIntValue(a.maxW))
		out = append(out, types.FormatRow(types.Insert, row)[2:])
	}
	slices.Sort(out)
	return out
}

// TestGroupAggPresenceFromMainRescaled starts from the state main's
// NewGroupAggOverInserts writes (groups of version 4, entries of version 1,
// written over budget at parallelism 1), restores it at parallelism 2 over
// budget into presence-only entries, runs on and checkpoints each
// subtask, then restores both subtasks' checkpoints at parallelism 3
// (over budget and into memory) and runs to the end: the final rows,
// with MIN and MAX, must be those a plain Go computation gives. The same
// checkpoints restored into a GroupAgg over a changelog at parallelism 3
// must be refused with errPresenceOnly. The seed is printed.
func TestGroupAggPresenceFromMainRescaled(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, keys := range [][]int{{dcK}, {dcS, dcK}} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(len(keys))))
			rows := 24000
			if raceEnabled {
				rows = 9000
			}
			batches, all := presenceInput(r, 1500, rows)
			want := presenceReviewModel(all, keys)
			third := len(batches) / 3
			dir := t.TempDir()
			var rec recorder

			// Main's layout, parallelism 1, over budget.
			st := openAggStore(t, filepath.Join(dir, "w1"))
			op, err := openReviewAgg(t, st, false, 1, keys, 0, 1, true, false)
			if err != nil {
				t.Fatal(err)
			}
			runPresence(t, []*groupAggOp{op}, keys, batches[:third], &rec)
			snap1 := filepath.Join(dir, "snap1")
			checkpointAgg(t, op, st, snap1)
			vst := restoreAggStore(t, snap1, filepath.Join(dir, "check1"))
			ev, gv := storedVersions(t, vst, distinctStateName), storedVersions(t, vst, groupsStateName)
			vst.Close()
			if len(ev) != 1 || ev[distinctRecordVersion] == 0 || len(gv) != 1 || gv[groupStateVersion] == 0 {
				t.Fatalf("main's layout: entries of versions %v, groups %v", ev, gv)
			}

			// Presence-only at parallelism 2, over budget.
			var snaps2 []string
			ops := make([]*groupAggOp, 2)
			stores := make([]*statestore.Store, 2)
			for s := range 2 {
				lo, hi := state.KeyGroupRange(s, 2, 128)
				if stores[s], err = statestore.RestoreKeyGroups([]string{snap1}, filepath.Join(dir, fmt.Sprintf("w2-%d", s)), lo, hi, statestore.Options{CacheBytes: 64 << 10}); err != nil {
					t.Fatal(err)
				}
				if ops[s], err = openReviewAgg(t, stores[s], true, 1, keys, s, 2, false, false); err != nil {
					t.Fatal(err)
				}
			}
			runPresence(t, ops, keys, batches[third:2*third], &rec)
			for s := range 2 {
				snaps2 = append(snaps2, filepath.Join(dir, fmt.Sprintf("snap2-%d", s)))
				checkpointAgg(t, ops[s], stores[s], snaps2[s])
			}

			restore3 := func(name string, budget int64, retracting bool) ([]*groupAggOp, []*statestore.Store, error) {
				ops := make([]*groupAggOp, 3)
				stores := make([]*statestore.Store, 3)
				for s := range 3 {
					lo, hi := state.KeyGroupRange(s, 3, 128)
					var err error
					if stores[s], err = statestore.RestoreKeyGroups(snaps2, filepath.Join(dir, fmt.Sprintf("w3-%s-%d", name, s)), lo, hi, statestore.Options{CacheBytes: 64 << 10}); err != nil {
						t.Fatal(err)
					}
					if ops[s], err = openReviewAgg(t, stores[s], true, budget, keys, s, 3, false, retracting); err != nil {
						return ops, stores, err
					}
				}
				return ops, stores, nil
			}
			for _, tc := range []struct {
				name   string
				budget int64
			}{{"over budget", 1}, {"into memory", 64 << 20}} {
				ops, stores, err := restore3(strings.ReplaceAll(tc.name, " ", "-"), tc.budget, false)
				if err != nil {
					t.Fatal(err)
				}
				rec3 := recorder{rows: slices.Clone(rec.rows)}
				runPresence(t, ops, keys, batches[2*third:], &rec3)
				for s := range 3 {
					if err := ops[s].Finish(&rec3); err != nil {
						t.Fatal(err)
					}
					stores[s].Close()
				}
				if g := finalRows(t, rec3.rows); strings.Join(g, "\n") != strings.Join(want, "\n") {
					t.Fatalf("seed %d, %s: %d rows, want %d\n%s", seed, tc.name, len(g), len(want), firstDiff(g, want))
				}
			}
			for _, budget := range []int64{64 << 20, 1} {
				ops, stores, err := restore3(fmt.Sprintf("retracting-%d", budget), budget, true)
				if err == nil {
					// Over budget the groups load as rows come.
					for _, b := range batches[2*third:] {
						parts := splitBatch(b, keys, 3)
						for s := range 3 {
							if err = ops[s].Process(0, parts[s], &recorder{}); err != nil {
								break
							}
						}
						if err != nil {
							break
						}
					}
				}
				for _, s := range stores {
					if s != nil {
						s.Close()
					}
				}
				if !errors.Is(err, errPresenceOnly) {
					t.Fatalf("seed %d, budget %d: restore into a retracting GroupAgg: error %v, want %v", seed, budget, err, errPresenceOnly)
				}
			}
		})
	}
}

// TestGroupAggPresenceTTLAcrossRestores is the TTL check of presence-only
// entries with a kill and restore before every row, at parallelism 1, 2
// and 3, over budget and into memory, starting from main's layout (an
// entry of counts): a value seen again within the TTL keeps counting once
// (its restamp must reach the store though its mask does not change), one
// not seen for the TTL counts again.
func TestGroupAggPresenceTTLAcrossRestores(t *testing.T) {
	calls := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
		{Func: AggCount, Arg: 1, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "v"},
		{Func: AggMin, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
	}
	dir := t.TempDir()
	prev := ""
	for i, s := range []struct {
		now, v int64
		par    int
		budget int64
		want   []string
	}{
		{0, 10, 1, 1, []string{"+I[1, 1, 1, 10]"}},
		{0, 11, 2, 1, []string{"-U[1, 1, 1, 10]", "+U[1, 2, 2, 10]"}},
		{800, 11, 1, 64 << 20, []string{"-U[1, 2, 2, 10]", "+U[1, 3, 2, 10]"}},  // 11 restamped at 800
		{1500, 12, 3, 1, []string{"-U[1, 3, 2, 10]", "+U[1, 4, 3, 10]"}},        // 10 expired at 1000
		{1600, 11, 2, 64 << 20, []string{"-U[1, 4, 3, 10]", "+U[1, 5, 3, 10]"}}, // 11 lives until 1800
		{1700, 10, 1, 1, []string{"-U[1, 5, 3, 10]", "+U[1, 6, 4, 10]"}},        // 10 counts again
	} {
		row := []types.Value{types.BigIntValue(1), types.BigIntValue(s.v)}
		sub := subtaskOf(row, []int{0}, s.par)
		work := filepath.Join(dir, fmt.Sprintf("w%d", i))
		var st *statestore.Store
		var err error
		if prev == "" {
			st = openAggStore(t, work)
		} else {
			lo, hi := state.KeyGroupRange(sub, s.par, 128)
			if st, err = statestore.RestoreKeyGroups([]string{prev}, work, lo, hi, statestore.Options{CacheBytes: 64 << 10}); err != nil {
				t.Fatal(err)
			}
		}
		op := NewGroupAggOverInserts([]int{0}, calls)().(*groupAggOp)
		if err := op.Open(&OpContext{Subtask: sub, Parallelism: s.par, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: s.budget, StateTTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			op.dv.presence = false // main's layout
		}
		if err := op.InitState(st, prev != ""); err != nil {
			t.Fatal(err)
		}
		if err := op.advanceTime(s.now); err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(2, 1)
		b.Append(types.Insert, row)
		var rec recorder
		if err := op.Process(0, b, &rec); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rec.rows, s.want) {
			t.Fatalf("step %d (at %d, %d): %v, want %v", i, s.now, s.v, rec.rows, s.want)
		}
		prev = filepath.Join(dir, fmt.Sprintf("snap%d", i))
		checkpointAgg(t, op, st, prev)
	}
}
