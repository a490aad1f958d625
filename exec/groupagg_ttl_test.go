package exec

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// newGroupAggTTLHarness is newTTLHarness with a GroupAggregate
// (k, COUNT(*), SUM(v) GROUP BY k) at parallelism par in place of the
// keyed running sum.
func newGroupAggTTLHarness(t *testing.T, par int, ttl time.Duration, ck *CheckpointOptions) *ttlHarness {
	h := &ttlHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	calls := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
		{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
	}
	g := &JobGraph{Name: "ttl", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s"},
		{Name: "Agg", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "GroupAggregate", ID: "agg", OutWidth: 3, New: NewGroupAgg([]int{0}, calls)}},
			Sink:      h.sink, SinkName: "out"},
	}}
	h.start(g, Options{BatchSize: 16, ChannelBuffer: 64, StateTTL: ttl, Checkpoint: ck}, par)
	return h
}

// aggTTLModel is the Go answer for a grouped COUNT(*), SUM(v) with a state
// TTL: per key its count, sum and last write time; a key not written for
// ttl starts from zero and is inserted again (+I), as in Flink.
type aggTTLModel struct {
	ttl              int64
	count, sum, last map[int64]int64
}

func newAggTTLModel(ttl int64) *aggTTLModel {
	return &aggTTLModel{ttl: ttl, count: map[int64]int64{}, sum: map[int64]int64{}, last: map[int64]int64{}}
}

// step applies one batch of rows at time now and returns the changelog a
// GroupAggregate emits for it (one emission per key per batch).
func (m *aggTTLModel) step(now int64, rows [][]types.Value) (out []string, expired int) {
	row := func(kind types.RowKind, k int64) string {
		return types.FormatRow(kind, []types.Value{types.BigIntValue(k), types.BigIntValue(m.count[k]), types.BigIntValue(m.sum[k])})
	}
	var keys []int64
	seen := map[int64]bool{}
	for _, r := range rows {
		if k := r[0].Int(); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		l, had := m.last[k]
		live := had && l+m.ttl > now
		if had && !live {
			expired++
		}
		if live {
			out = append(out, row(types.UpdateBefore, k))
		} else {
			m.count[k], m.sum[k] = 0, 0
		}
		for _, r := range rows {
			if r[0].Int() == k {
				m.count[k]++
				m.sum[k] += r[1].Int()
			}
		}
		m.last[k] = now
		if live {
			out = append(out, row(types.UpdateAfter, k))
		} else {
			out = append(out, row(types.Insert, k))
		}
	}
	return out, expired
}

// TestGroupAggStateTTL: 'table.exec.state.ttl' reaches GroupAggregate (its
// state.Records): a group not written for the TTL is dropped without
// output, and its key's next row starts a new group (+I, count and sum
// from zero), never -U/+U against the expired state; groups written within
// the TTL go on. In memory and over checkpointed state, and after a
// restore at the same and at another parallelism (the write times are
// stored: restored groups expire on time). The answer is a Go model's.
func TestGroupAggStateTTL(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	const ttl = 1000
	steps := ttlSteps(seed, 80)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int64) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	run := func(t *testing.T, h *ttlHarness, m *aggTTLModel, steps []ttlStep) int {
		t.Helper()
		h.sink.rows = nil
		var want []string
		expired := 0
		for _, s := range steps {
			h.emit(at(s.at), s.rows)
			out, e := m.step(s.at, s.rows)
			want = append(want, out...)
			expired += e
		}
		if got := sortedCopy(h.sink.rows); !slices.Equal(got, sortedCopy(want)) {
			t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, sortedCopy(want))
		}
		return expired
	}
	end := steps[len(steps)-1].at

	t.Run("memory", func(t *testing.T) {
		h := newGroupAggTTLHarness(t, 2, ttl*time.Millisecond, nil)
		if n := run(t, h, newAggTTLModel(ttl), steps); n == 0 {
			t.Fatalf("seed %d: no group expired: the test proves nothing", seed)
		}
		if !h.pendingTimers(at(end)) {
			t.Fatal("no expiry pending for the groups written last")
		}
		h.advance(at(end + ttl))
		if h.pendingTimers(at(end + ttl)) {
			t.Fatal("expiry still pending after every group expired")
		}
		for _, tk := range h.keyed {
			if g := tk.ops[0].(*groupAggOp); len(g.heads) != len(g.free) {
				n := len(g.heads) - len(g.free)
				t.Fatalf("%d groups in memory after every group expired", n)
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		h := newGroupAggTTLHarness(t, 2, 0, nil)
		run(t, h, newAggTTLModel(1<<62), steps)
	})
	for _, pp := range [][2]int{{2, 2}, {2, 3}, {3, 1}} {
		t.Run(fmt.Sprintf("checkpoint-p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			cut := len(steps) / 2
			h := newGroupAggTTLHarness(t, pp[0], ttl*time.Millisecond, testCheckpointing(t, t.TempDir(), "ttl", nil, 1<<12))
			m := newAggTTLModel(ttl)
			run(t, h, m, steps[:cut])
			c := h.checkpoint()
			r := newGroupAggTTLHarness(t, pp[1], ttl*time.Millisecond, testCheckpointing(t, t.TempDir(), "ttl", c, 1<<12))
			run(t, r, m, steps[cut:])
			r.advance(at(end + ttl))
			if r.pendingTimers(at(end + ttl)) {
				t.Fatal("expiry still pending after every group expired")
			}
		})
	}
}

// TestGroupAggStateTTLSpilledGroupsLeaveStore: groups spilled to the store
// (far more groups than a 4 KiB state.cache.size keeps in memory) whose
// keys never come again leave the operator's store, and so the next
// checkpoint, once their TTL passed: the store holds no entry of the
// operator after the checkpoint that follows the TTL, while the groups
// written since are read back with their counts.
func TestGroupAggStateTTLSpilledGroupsLeaveStore(t *testing.T) {
	const ttl, keys = 1000, 5000
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int64) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	h := newGroupAggTTLHarness(t, 1, ttl*time.Millisecond, testCheckpointing(t, t.TempDir(), "ttl", nil, 1<<12))
	for k := int64(0); k < keys; k += 100 {
		var rows [][]types.Value
		for i := k; i < k+100; i++ {
			rows = append(rows, []types.Value{types.BigIntValue(i), types.BigIntValue(1)})
		}
		h.emit(at(0), rows)
	}
	h.checkpoint()
	st := h.keyed[0].stores[0]
	count := func() int {
		t.Helper()
		sp, err := st.Space("agg")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for kg := range types.DefaultMaxParallelism {
			if err := sp.Scan(kg, nil, nil, false, func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	if n := count(); n < keys {
		t.Fatalf("the store holds %d entries of %d groups: no spill", n, keys)
	}
	h.sink.rows = nil
	h.emit(at(ttl+500), [][]types.Value{{types.BigIntValue(keys), types.BigIntValue(7)}})
	h.checkpoint()
	if n := count(); n > 3 {
		t.Fatalf("after the TTL the store holds %d entries; want the one live group's", n)
	}
	h.emit(at(ttl+600), [][]types.Value{{types.BigIntValue(keys), types.BigIntValue(1)}, {types.BigIntValue(3), types.BigIntValue(1)}})
	want := []string{"+I[5000, 1, 7]", "-U[5000, 1, 7]", "+U[5000, 2, 8]", "+I[3, 1, 1]"}
	if got := sortedCopy(h.sink.rows); !slices.Equal(got, sortedCopy(want)) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
