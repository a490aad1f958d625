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

// Tests of presence-only DISTINCT entries: a GroupAgg over insert-only
// input (NewGroupAggOverInserts) writes an entry only when a call sees its
// value for the first time, stores a mask of the calls, and refuses its
// state to a GroupAgg whose input retracts.

// openPresenceAgg opens a GroupAgg of distinctCalls as subtask sub of par:
// over insert-only input (presence-only entries) or, !inserts, over a
// changelog, as NewGroupAgg.
func openPresenceAgg(t *testing.T, st *statestore.Store, restored bool, budget int64, keys []int, sub, par int, inserts bool) (*groupAggOp, error) {
	t.Helper()
	newOp := NewGroupAgg(keys, distinctCalls)
	if inserts {
		newOp = NewGroupAggOverInserts(keys, distinctCalls)
	}
	op := newOp().(*groupAggOp)
	if err := op.Open(&OpContext{Subtask: sub, Parallelism: par, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: budget}); err != nil {
		t.Fatal(err)
	}
	if op.dv == nil || op.dv.presence != inserts {
		t.Fatalf("DISTINCT entries: %v, presence-only %v", op.dv != nil, inserts)
	}
	if st != nil {
		if err := op.InitState(st, restored); err != nil {
			return nil, err
		}
	}
	return op, nil
}

// mustPresenceAgg is openPresenceAgg that fails the test on an error.
func mustPresenceAgg(t *testing.T, st *statestore.Store, restored bool, budget int64, keys []int, sub, par int, inserts bool) *groupAggOp {
	t.Helper()
	op, err := openPresenceAgg(t, st, restored, budget, keys, sub, par, inserts)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// presenceInput makes batches of inserts of distinctRow rows over keys
// groups, with few values of v (40) so that values come back often, across
// checkpoints and for other calls of their family; and the rows.
func presenceInput(r *rand.Rand, keys, rows int) ([]*types.Batch, [][]types.Value) {
	var out []*types.Batch
	var all [][]types.Value
	b := types.NewBatch(dcWidth, 128)
	for range rows {
		if b.Len() == 128 {
			out = append(out, b)
			b = types.NewBatch(dcWidth, 128)
		}
		k := int64(r.IntN(keys))
		row := distinctRow(k, fmt.Sprintf("s%d", k%7), int64(r.IntN(40)), int64(r.IntN(300)), int64(r.IntN(30)))
		all = append(all, row)
		b.Append(types.Insert, row)
	}
	return append(out, b), all
}

// storedVersions counts the records of state name in st by their leading
// (version) byte.
func storedVersions(t *testing.T, st *statestore.Store, name string) map[byte]int {
	t.Helper()
	sp, err := st.Space("agg")
	if err != nil {
		t.Fatal(err)
	}
	prefix := append([]byte{byte(len(name))}, name...)
	hi := append(slices.Clone(prefix[:len(prefix)-1]), prefix[len(prefix)-1]+1)
	out := map[byte]int{}
	for kg := range 128 {
		err := sp.Scan(kg, prefix, hi, false, func(_, v []byte) (bool, error) {
			out[v[0]]++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// runPresence feeds batches to ops (one per subtask of len(ops)),
// recording their output in rec.
func runPresence(t *testing.T, ops []*groupAggOp, keys []int, batches []*types.Batch, rec *recorder) {
	t.Helper()
	for _, b := range batches {
		parts := []*types.Batch{b}
		if len(ops) > 1 {
			parts = splitBatch(b, keys, len(ops))
		}
		for s, p := range parts {
			if err := ops[s].Process(0, p, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestGroupAggPresenceDistinctRestore is the randomized kill-and-restore
// check of presence-only DISTINCT with FILTER: a GroupAgg over inserts
// whose groups and entries spill, checkpointed after a third of the input,
// killed and restored, checkpointed again after two thirds (entries seen
// again since the first are not rewritten: the store keeps their masks),
// killed and restored over budget, into memory and at parallelism 2, must
// end with the rows a plain Go computation of the whole input gives. The
// second run starts from state written with counts (by a GroupAgg over a
// changelog, the layout of every checkpoint before presence-only entries)
// in one case, from presence-only state in the other. The seed is printed.
func TestGroupAggPresenceDistinctRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, keys := range [][]int{{dcK}, {dcS, dcK}} {
		for _, fromCounts := range []bool{false, true} {
			t.Run(fmt.Sprintf("keys %v, from counts %v", keys, fromCounts), func(t *testing.T) {
				t.Parallel()
				presenceRestore(t, seed, keys, fromCounts)
			})
		}
	}
}

func presenceRestore(t *testing.T, seed uint64, keys []int, fromCounts bool) {
	r := rand.New(rand.NewPCG(seed, uint64(len(keys))))
	rows := 30000
	if raceEnabled {
		rows = 12000
	}
	batches, all := presenceInput(r, 2500, rows)
	want := distinctModel(all, keys)
	third := len(batches) / 3
	dir := t.TempDir()

	// First run: over budget, so that groups and entries spill.
	st := openAggStore(t, filepath.Join(dir, "work1"))
	var rec recorder
	first := mustPresenceAgg(t, st, false, 1, keys, 0, 1, !fromCounts)
	runPresence(t, []*groupAggOp{first}, keys, batches[:third], &rec)
	if !first.st.Backed() || !first.dv.st.Backed() {
		t.Fatal("the groups and DISTINCT entries never spilled")
	}
	snap1 := filepath.Join(dir, "snap1")
	checkpointAgg(t, first, st, snap1)

	// Second run: restored over budget; some values come back, some
	// for other calls of their family.
	st = restoreAggStore(t, snap1, filepath.Join(dir, "work2"))
	v := storedVersions(t, st, distinctStateName)
	if g := storedVersions(t, st, groupsStateName); fromCounts != (v[distinctRecordVersion] > 0 && v[distinctPresenceVersion] == 0 && g[groupPresenceVersion] == 0) {
		t.Fatalf("first checkpoint: entries of versions %v, groups %v", v, g)
	}
	second := mustPresenceAgg(t, st, true, 1, keys, 0, 1, true)
	runPresence(t, []*groupAggOp{second}, keys, batches[third:2*third], &rec)
	snap2 := filepath.Join(dir, "snap2")
	checkpointAgg(t, second, st, snap2)
	if fromCounts {
		st = restoreAggStore(t, snap2, filepath.Join(dir, "check2"))
		v := storedVersions(t, st, distinctStateName)
		g := storedVersions(t, st, groupsStateName)
		st.Close()
		if v[distinctRecordVersion] == 0 || v[distinctPresenceVersion] == 0 || g[groupPresenceVersion] == 0 {
			t.Fatalf("second checkpoint: entries of versions %v (counts left from the first, masks since), groups %v (those the second run saw rewritten)", v, g)
		}
	}

	for _, tc := range []struct {
		name   string
		budget int64
		par    int
	}{{"over budget", 1, 1}, {"into memory", 64 << 20, 1}, {"parallelism 2", 1, 2}} {
		got := slices.Clone(rec.rows)
		stores := make([]*statestore.Store, tc.par)
		ops := make([]*groupAggOp, tc.par)
		for s := range tc.par {
			work := filepath.Join(dir, fmt.Sprintf("%s-%d", strings.ReplaceAll(tc.name, " ", "-"), s))
			if tc.par == 1 {
				stores[s] = restoreAggStore(t, snap2, work)
			} else {
				lo, hi := state.KeyGroupRange(s, tc.par, 128)
				var err error
				if stores[s], err = statestore.RestoreKeyGroups([]string{snap2}, work, lo, hi, statestore.Options{CacheBytes: 64 << 10}); err != nil {
					t.Fatal(err)
				}
			}
			ops[s] = mustPresenceAgg(t, stores[s], true, tc.budget, keys, s, tc.par, true)
		}
		if tc.budget > 1 && (ops[0].st.Backed() || ops[0].dv.st.Backed()) {
			t.Fatalf("%s: restored state did not load whole", tc.name)
		}
		var rec3 recorder
		runPresence(t, ops, keys, batches[2*third:], &rec3)
		for s := range tc.par {
			if err := ops[s].Finish(&rec3); err != nil {
				t.Fatal(err)
			}
			stores[s].Close()
		}
		got = append(got, rec3.rows...)
		if g := finalRows(t, got); strings.Join(g, "\n") != strings.Join(want, "\n") {
			t.Fatalf("keys %v, seed %d, restored %s: %d rows, want %d\n%s", keys, seed, tc.name, len(g), len(want), firstDiff(g, want))
		}
	}
}

// TestGroupAggPresenceDistinctRefused restores presence-only state into a
// GroupAgg whose input retracts, which needs exact counts: it must fail
// with errPresenceOnly rather than count wrong. The cases: the state as a
// GroupAgg over inserts writes it, into memory and by lookups (over
// budget); the groups' records rewritten as version 4 (an entry's mask
// alone refuses); and state whose entries all hold counts (of version 1,
// written by a GroupAgg over a changelog) but which a GroupAgg over
// inserts then ran on, so that the counts in the store lag (its group
// records refuse).
func TestGroupAggPresenceDistinctRefused(t *testing.T) {
	keys := []int{dcS, dcK}
	r := rand.New(rand.NewPCG(5, 6))
	batches, _ := presenceInput(r, 200, 6000)
	half := len(batches) / 2
	dir := t.TempDir()

	// Presence-only state.
	st := openAggStore(t, filepath.Join(dir, "w-presence"))
	op := mustPresenceAgg(t, st, false, 64<<20, keys, 0, 1, true)
	runPresence(t, []*groupAggOp{op}, keys, batches, &recorder{})
	presence := filepath.Join(dir, "presence")
	checkpointAgg(t, op, st, presence)

	// Counts, then lagging counts.
	st = openAggStore(t, filepath.Join(dir, "w-counts"))
	op = mustPresenceAgg(t, st, false, 64<<20, keys, 0, 1, false)
	runPresence(t, []*groupAggOp{op}, keys, batches[:half], &recorder{})
	counts := filepath.Join(dir, "counts")
	checkpointAgg(t, op, st, counts)
	st = restoreAggStore(t, counts, filepath.Join(dir, "w-lag"))
	op = mustPresenceAgg(t, st, true, 64<<20, keys, 0, 1, true)
	// The first half again: every value seen, no entry written.
	runPresence(t, []*groupAggOp{op}, keys, batches[:half], &recorder{})
	lag := filepath.Join(dir, "lag")
	checkpointAgg(t, op, st, lag)

	for _, tc := range []struct {
		name     string
		snap     string
		groupsV4 bool
	}{{"presence", presence, false}, {"entries' masks", presence, true}, {"lagging counts", lag, false}} {
		for _, budget := range []int64{64 << 20, 1} {
			rs := restoreAggStore(t, tc.snap, filepath.Join(dir, fmt.Sprintf("r-%s-%d", strings.ReplaceAll(tc.name, " ", "-"), budget)))
			v := storedVersions(t, rs, distinctStateName)
			if tc.name == "lagging counts" && (v[distinctPresenceVersion] != 0 || v[distinctRecordVersion] == 0) {
				t.Fatalf("%s: entries of versions %v, want counts only", tc.name, v)
			}
			if tc.groupsV4 {
				rewriteGroupVersions(t, rs, groupStateVersion)
			}
			op, err := openPresenceAgg(t, rs, true, budget, keys, 0, 1, false)
			if err == nil {
				// Over budget: the groups and entries load as rows come.
				err = op.Process(0, batches[0], &recorder{})
			}
			rs.Close()
			if !errors.Is(err, errPresenceOnly) {
				t.Fatalf("%s, budget %d: error %v, want %v", tc.name, budget, err, errPresenceOnly)
			}
		}
	}
}

// rewriteGroupVersions sets the version byte of every stored group record
// in st to version.
func rewriteGroupVersions(t *testing.T, st *statestore.Store, version byte) {
	t.Helper()
	sp, err := st.Space("agg")
	if err != nil {
		t.Fatal(err)
	}
	prefix := append([]byte{byte(len(groupsStateName))}, groupsStateName...)
	hi := append(slices.Clone(prefix[:len(prefix)-1]), prefix[len(prefix)-1]+1)
	for kg := range 128 {
		var ks, vs [][]byte
		err := sp.Scan(kg, prefix, hi, false, func(k, v []byte) (bool, error) {
			ks, vs = append(ks, slices.Clone(k)), append(vs, append([]byte{version}, v[1:]...))
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
}

// TestGroupAggPresenceDistinctWrites checks which entries a presence-only
// GroupAgg writes: a value seen again by the calls that saw it is not
// written (the stored record, replaced in the store by one of counts, stays
// as it is); a call that sees it for the first time writes its mask. And a
// retraction is an error.
func TestGroupAggPresenceDistinctWrites(t *testing.T) {
	st := openAggStore(t, filepath.Join(t.TempDir(), "work"))
	defer st.Close()
	op := mustPresenceAgg(t, st, false, 64<<20, []int{dcK}, 0, 1, true)
	step := func(rows ...[]types.Value) {
		t.Helper()
		b := types.NewBatch(dcWidth, len(rows))
		for _, row := range rows {
			b.Append(types.Insert, row)
		}
		if err := op.Process(0, b, &recorder{}); err != nil {
			t.Fatal(err)
		}
		if err := op.PrepareSnapshot(); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := st.Space("agg")
	if err != nil {
		t.Fatal(err)
	}
	// The key group and key of group 1's entry of 5 in family 0 (v's
	// calls: COUNT, the low and mid FILTERs, SUM of the low one).
	entry := func() (int, []byte) {
		t.Helper()
		dv := op.dv
		gi, ok := op.ints.Get(1)
		if !ok {
			t.Fatal("no group 1")
		}
		slot, ok := dv.fams[0].index.Get(gi, 5)
		if !ok {
			t.Fatal("no entry of 5")
		}
		key := append([]byte{byte(len(distinctStateName))}, distinctStateName...)
		return dv.st.KeyGroupOf(slot), dv.AppendRecordKey(key, slot)
	}
	get := func(kg int, key []byte) []byte {
		t.Helper()
		rec, ok, err := sp.Get(kg, key)
		if err != nil || !ok {
			t.Fatalf("stored entry: %v, %v", ok, err)
		}
		return slices.Clone(rec)
	}
	mid := distinctRow(1, "s", 5, 7, 15) // COUNT(DISTINCT v) and its mid FILTER see 5
	step(mid)
	kg, key := entry()
	if rec := get(kg, key); !slices.Equal(rec, []byte{distinctPresenceVersion, 4, 0b0101}) {
		t.Fatalf("entry %v, want the mask of the calls 0 and 2", rec)
	}
	// A marker the operator would never write: a record of counts.
	marker := []byte{distinctRecordVersion, 4, 9, 0, 9, 0}
	if err := sp.Put(kg, key, marker); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	step(mid, mid)
	if rec := get(kg, key); !slices.Equal(rec, marker) {
		t.Fatalf("entry %v rewritten, though no call saw 5 first", rec)
	}
	step(distinctRow(1, "s", 5, 8, 3)) // the low FILTERs see 5 first
	if rec := get(kg, key); !slices.Equal(rec, []byte{distinctPresenceVersion, 4, 0b1111}) {
		t.Fatalf("entry %v, want the mask of all 4 calls", rec)
	}
	b := types.NewBatch(dcWidth, 1)
	b.Append(types.Delete, mid)
	if err := op.Process(0, b, &recorder{}); err == nil || !strings.Contains(err.Error(), "retraction") {
		t.Fatalf("a retraction: error %v", err)
	}
}

// TestGroupAggPresenceDistinctTTL checks that with a state TTL a
// presence-only entry is restamped whenever its value is seen, as with
// counts: a value seen within the TTL keeps counting once, one not seen
// for the TTL counts again.
func TestGroupAggPresenceDistinctTTL(t *testing.T) {
	calls := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
		{Func: AggCount, Arg: 1, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "v"},
	}
	st := openAggStore(t, filepath.Join(t.TempDir(), "work"))
	defer st.Close()
	op := NewGroupAggOverInserts([]int{0}, calls)().(*groupAggOp)
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: 64 << 20, StateTTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := op.InitState(st, false); err != nil {
		t.Fatal(err)
	}
	if !op.dv.presence {
		t.Fatal("not presence-only")
	}
	step := func(now int64, v int64) []string {
		t.Helper()
		if err := op.advanceTime(now); err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(2, 1)
		b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.BigIntValue(v)})
		var rec recorder
		if err := op.Process(0, b, &rec); err != nil {
			t.Fatal(err)
		}
		return rec.rows
	}
	for _, s := range []struct {
		now, v int64
		want   []string
	}{
		{0, 10, []string{"+I[1, 1, 1]"}},
		{0, 11, []string{"-U[1, 1, 1]", "+U[1, 2, 2]"}},
		{800, 11, []string{"-U[1, 2, 2]", "+U[1, 3, 2]"}},  // 11 restamped at 800
		{1500, 12, []string{"-U[1, 3, 2]", "+U[1, 4, 3]"}}, // 10 expired at 1000: no output
		{1600, 11, []string{"-U[1, 4, 3]", "+U[1, 5, 3]"}}, // 11 lives until 1800
		{1700, 10, []string{"-U[1, 5, 3]", "+U[1, 6, 4]"}}, // 10 counts again
	} {
		if got := step(s.now, s.v); !slices.Equal(got, s.want) {
			t.Fatalf("at %d, %d: %v, want %v", s.now, s.v, got, s.want)
		}
	}
}
