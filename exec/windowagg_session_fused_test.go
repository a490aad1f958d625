package exec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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
