package exec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// goSessions computes the session rows "[k start end end-1 count sum]" of
// each key's events (ts, v) with the given gap, independently of the
// operator: a key's events sorted by time, split where two are more than
// the gap apart.
func goSessions(byKey map[int64][][2]int64, gap int64) []string {
	var want []string
	for k, evs := range byKey {
		evs = slices.Clone(evs)
		slices.SortFunc(evs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
		for i := 0; i < len(evs); {
			j := i + 1
			for j < len(evs) && evs[j][0]-evs[j-1][0] <= gap {
				j++
			}
			var sum int64
			for _, e := range evs[i:j] {
				sum += e[1]
			}
			start, end := evs[i][0], evs[j-1][0]+gap
			want = append(want, fmt.Sprint([]types.Value{types.BigIntValue(k), types.TimestampValue(start), types.TimestampValue(end),
				types.TimestampValue(end - 1), types.BigIntValue(int64(j - i)), types.BigIntValue(sum)}))
			i = j
		}
	}
	slices.Sort(want)
	return want
}

// sessionRecords returns op's state records, key -> record, as state.Records
// would write them at a checkpoint.
func sessionRecords(op *sessionWindowOp) map[string][]byte {
	recs := map[string][]byte{}
	for gi := range op.skeys {
		if op.skeys[gi].n > 0 {
			recs[string(op.AppendRecordKey(nil, int32(gi)))] = op.AppendRecord(nil, int32(gi))
		}
	}
	return recs
}

// TestSessionFusedMatchesGroups feeds COUNT(*) and SUM session aggregates,
// one on the fused path (state in the session) and one forced onto the
// accumulator groups, batches in which a key repeats: each batch has, per
// key it touches, rows that open two sessions and then a row between them
// that merges them, rows that extend a session, and rows of keys whose
// sessions the watermark fires after the batch. The two emit the same rows,
// which match the sessions computed in Go; their checkpoint records are
// byte for byte the same (a checkpoint of either restores into the other);
// and halfway each is restored from the other's records into a new
// operator, which goes on to the same answer.
func TestSessionFusedMatchesGroups(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 23))
	calls := windowTestCalls(t)[:2]
	const gap, keys, steps = 20, 30, 200
	spec := WindowSpec{Kind: WindowSession, Gap: gap, TimeCol: 2}
	open := func(fused bool) *sessionWindowOp {
		op := NewSessionWindowAgg([]int{0}, spec, calls)().(*sessionWindowOp)
		if err := op.Open(&OpContext{MaxParallelism: 128, Name: "session"}); err != nil {
			t.Fatal(err)
		}
		if op.fused == nil {
			t.Fatal("COUNT(*) and SUM(BIGINT) are not fused")
		}
		if !fused {
			op.fused = nil
		}
		return op
	}
	ops := [2]*sessionWindowOp{open(true), open(false)}
	outs := [2]*rowCollector{{}, {}}
	byKey := map[int64][][2]int64{}
	b := types.NewBatch(3, 64)
	merges := 0
	for step := range steps {
		now := int64(step) * 10
		b.Reset()
		add := func(k, ts int64) {
			v := int64(r.IntN(100))
			b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v), types.TimestampValue(ts)})
			byKey[k] = append(byKey[k], [2]int64{ts, v})
		}
		for range 4 {
			k := int64(r.IntN(keys))
			switch r.IntN(3) {
			case 0: // two sessions, then a row that merges them
				add(k, now+3*gap)
				add(k, now+gap+gap/2+1)
				add(k, now+2*gap+gap/4)
				merges++
			case 1: // a session extended twice
				add(k, now+gap)
				add(k, now+gap+5)
				add(k, now+gap+2)
			default:
				add(k, now+gap+int64(r.IntN(gap)))
			}
		}
		for i, op := range ops {
			if err := op.Process(0, b, outs[i]); err != nil {
				t.Fatal(err)
			}
			if err := op.ProcessWatermark(now, outs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if step == steps/2 {
			recs := [2]map[string][]byte{sessionRecords(ops[0]), sessionRecords(ops[1])}
			if len(recs[0]) == 0 || len(recs[0]) != len(recs[1]) {
				t.Fatalf("%d and %d keys' records", len(recs[0]), len(recs[1]))
			}
			for key, rec := range recs[0] {
				if !bytes.Equal(rec, recs[1][key]) {
					t.Fatalf("key %x: fused record %x, groups' %x", key, rec, recs[1][key])
				}
			}
			// Each goes on restored from the other's records.
			for i := range ops {
				fresh := open(i == 0)
				for key, rec := range recs[1-i] {
					if _, err := fresh.LoadRecord([]byte(key), rec); err != nil {
						t.Fatal(err)
					}
				}
				if err := fresh.ProcessWatermark(now, outs[i]); err != nil {
					t.Fatal(err)
				}
				ops[i] = fresh
			}
		}
	}
	for i, op := range ops {
		if err := op.ProcessWatermark(MaxWatermark, outs[i]); err != nil {
			t.Fatal(err)
		}
		if nk, ns := op.stateSize(); nk != 0 || ns != 0 || op.due.len() != 0 {
			t.Fatalf("op %d after every session fired: %d keys, %d sessions, %d timers", i, nk, ns, op.due.len())
		}
	}
	want := goSessions(byKey, gap)
	for i, name := range []string{"fused", "groups"} {
		got := slices.Sorted(slices.Values(outs[i].rows))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d sessions, want %d\nfirst got  %v\nfirst want %v", name, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
	if merges == 0 || len(want) == 0 {
		t.Fatalf("%d merging batches, %d sessions: the test exercised nothing", merges, len(want))
	}
	t.Logf("%d sessions, %d merging row triples", len(want), merges)
}

// TestSessionTimerFollowsGrowth: a session that grows keeps its one timer
// (no entry per row); when that timer comes before the session's new end
// it is queued again at the end, and the session fires once, when the
// watermark reaches its end - 1. A session merged into another leaves a
// stale timer that fires nothing.
func TestSessionTimerFollowsGrowth(t *testing.T) {
	const gap = 100
	spec := WindowSpec{Kind: WindowSession, Gap: gap, TimeCol: 2}
	op := NewSessionWindowAgg([]int{0}, spec, windowTestCalls(t)[:2])().(*sessionWindowOp)
	if err := op.Open(&OpContext{MaxParallelism: 128, Name: "session"}); err != nil {
		t.Fatal(err)
	}
	out := &rowCollector{}
	feed := func(rows ...[2]int64) { // (ts, v) of key 7
		t.Helper()
		b := types.NewBatch(3, len(rows))
		for _, r := range rows {
			b.Append(types.Insert, []types.Value{types.BigIntValue(7), types.BigIntValue(r[1]), types.TimestampValue(r[0])})
		}
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
	}
	watermark := func(wm int64, wantRows, wantTimers int) {
		t.Helper()
		if err := op.ProcessWatermark(wm, out); err != nil {
			t.Fatal(err)
		}
		if len(out.rows) != wantRows || op.due.len() != wantTimers {
			t.Fatalf("after watermark %d: %d rows %v, %d timers; want %d rows, %d timers", wm, len(out.rows), out.rows, op.due.len(), wantRows, wantTimers)
		}
	}
	// One batch: [1000, 1100) grown by three rows to [1000, 1250).
	feed([2]int64{1000, 1}, [2]int64{1050, 2}, [2]int64{1100, 3}, [2]int64{1150, 4})
	if op.due.len() != 1 {
		t.Fatalf("%d timers for one growing session, want 1", op.due.len())
	}
	watermark(1099, 0, 1) // the timer came at 1100 and went again at 1250
	watermark(1248, 0, 1)
	watermark(1249, 1, 0)
	want := fmt.Sprint([]types.Value{types.BigIntValue(7), types.TimestampValue(1000), types.TimestampValue(1250),
		types.TimestampValue(1249), types.BigIntValue(4), types.BigIntValue(1 + 2 + 3 + 4)})
	if out.rows[0] != want {
		t.Fatalf("fired %s, want %s", out.rows[0], want)
	}
	// Two sessions, [2000, 2100) and [2200, 2300), then [2100, 2200)
	// touches both: one session [2000, 2300) keeping the later one's timer
	// (the first the row touches); the earlier one's goes stale.
	feed([2]int64{2200, 10}, [2]int64{2000, 20})
	feed([2]int64{2100, 30})
	if _, n := op.stateSize(); n != 1 {
		t.Fatalf("%d sessions after the bridging row, want 1", n)
	}
	watermark(2150, 1, 1) // the stale timer at 2100 fired nothing
	watermark(2299, 2, 0)
	want = fmt.Sprint([]types.Value{types.BigIntValue(7), types.TimestampValue(2000), types.TimestampValue(2300),
		types.TimestampValue(2299), types.BigIntValue(3), types.BigIntValue(60)})
	if out.rows[1] != want {
		t.Fatalf("fired %s, want %s", out.rows[1], want)
	}
}

// TestSessionFusedCountAvgNulls: COUNT(v) and AVG(v) of a BIGINT column
// with NULLs are fused (three words) and give, per session, the count of
// non-NULL v and their integer average (NULL when all are NULL),
// computed here.
func TestSessionFusedCountAvgNulls(t *testing.T) {
	var calls []AggCall
	for _, name := range []string{"COUNT", "AVG"} {
		f, err := aggfunc.Builtins().Lookup(name, false)
		if err != nil {
			t.Fatal(err)
		}
		typ := types.Type{Kind: types.KindBigInt, NotNull: name == "COUNT"}
		calls = append(calls, AggCallOf(aggfunc.Call{Func: f, Arg: 1, ArgType: types.Type{Kind: types.KindBigInt}, Type: typ, Name: name}))
	}
	const gap = 10
	op := NewSessionWindowAgg([]int{0}, WindowSpec{Kind: WindowSession, Gap: gap, TimeCol: 2}, calls)().(*sessionWindowOp)
	if err := op.Open(&OpContext{MaxParallelism: 128, Name: "session"}); err != nil {
		t.Fatal(err)
	}
	if len(op.fused) != 2 {
		t.Fatalf("%d fused calls, want COUNT(v) and AVG(v)", len(op.fused))
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 29))
	type ev struct {
		ts int64
		v  *int64
	}
	byKey := map[int64][]ev{}
	b := types.NewBatch(3, 200)
	for i := range 200 {
		k, ts := int64(r.IntN(5)), int64(i*3+r.IntN(3))
		e := ev{ts: ts}
		v := types.NullValue()
		if r.IntN(3) > 0 {
			n := int64(r.IntN(1000)) - 500
			e.v, v = &n, types.BigIntValue(n)
		}
		b.Append(types.Insert, []types.Value{types.BigIntValue(k), v, types.TimestampValue(ts)})
		byKey[k] = append(byKey[k], e)
	}
	out := &rowCollector{}
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	if err := op.ProcessWatermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	var want []string
	for k, evs := range byKey {
		slices.SortFunc(evs, func(a, b ev) int { return int(a.ts - b.ts) })
		for i := 0; i < len(evs); {
			j := i + 1
			for j < len(evs) && evs[j].ts-evs[j-1].ts <= gap {
				j++
			}
			var n, sum int64
			for _, e := range evs[i:j] {
				if e.v != nil {
					n, sum = n+1, sum+*e.v
				}
			}
			avg := types.NullValue()
			if n > 0 {
				avg = types.BigIntValue(sum / n)
			}
			end := evs[j-1].ts + gap
			want = append(want, fmt.Sprint([]types.Value{types.BigIntValue(k), types.TimestampValue(evs[i].ts), types.TimestampValue(end),
				types.TimestampValue(end - 1), types.BigIntValue(n), avg}))
			i = j
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(out.rows))
	if !slices.Equal(got, want) {
		t.Fatalf("%d sessions, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	t.Logf("%d sessions", len(got))
}
