package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/types"
)

// newDedupHarness is the tumbling-count harness (source S, HASH on k, a
// vertex at parallelism par, checkpoints through Pebble with a 4 KiB state
// budget, so that more than state.MinRecords keys spill) running a
// deduplication of rows (k, ts) per k.
func newDedupHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint, spec DedupSpec) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	g := &JobGraph{Name: "dedup", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Dedup", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Deduplicate", ID: "dedup", OutWidth: 2, New: NewDedup(spec)}},
			Sink:      h.sink, SinkName: "out"},
	}}
	opts := Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval,
		Checkpoint: testCheckpointing(t, dir, "dedup", restore, 1<<12)}
	h.start(g, opts, par)
	return h
}

// TestDedupCheckpointRestore deduplicates 6,000 rows over about 3,000
// keys (some NULL), more than the state budget keeps in memory, takes a
// checkpoint halfway, goes on (output a crash loses), restores at the same
// and other parallelisms and replays the rest: the changelog before the
// checkpoint plus the restored run's is, per key, the row each form keeps,
// computed here; keep-first on processing time is insert-only.
func TestDedupCheckpointRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	// 6,000 rows over 3,000 keys, or half of each under -race (the same
	// rows per key; CI runs it at full size without).
	n, keys := 6000, 3000
	if raceEnabled {
		n, keys = 3000, 1500
	}
	rows := make([][]types.Value, n)
	for i := range rows {
		k := types.BigIntValue(int64(r.IntN(keys)))
		if r.IntN(40) == 0 {
			k = types.Value{} // NULL: the operator's string-keyed path
		}
		rows[i] = []types.Value{k, types.TimestampValue(int64(r.IntN(1000)))}
	}
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp}
	modes := []struct {
		name string
		spec DedupSpec
		keep func(old, new []types.Value) bool // new replaces old
	}{
		{"proctime-last", DedupSpec{Keys: []int{0}, TimeCol: 1, KeepLast: true, Kinds: kinds}, func(_, _ []types.Value) bool { return true }},
		{"proctime-first", DedupSpec{Keys: []int{0}, TimeCol: 1, Kinds: kinds}, func(_, _ []types.Value) bool { return false }},
		{"rowtime-last", DedupSpec{Keys: []int{0}, TimeCol: 1, KeepLast: true, Rowtime: true, Kinds: kinds},
			func(o, n []types.Value) bool { return n[1].Int() >= o[1].Int() }},
		{"rowtime-first", DedupSpec{Keys: []int{0}, TimeCol: 1, Rowtime: true, Kinds: kinds},
			func(o, n []types.Value) bool { return n[1].Int() < o[1].Int() }},
	}
	const batch = 20
	cut := n / 2
	for _, m := range modes {
		kept := map[string][]types.Value{}
		for _, row := range rows {
			k := row[0].String()
			if old, ok := kept[k]; !ok || m.keep(old, row) {
				kept[k] = row
			}
		}
		var want []string
		for _, row := range kept {
			want = append(want, types.FormatRow(types.Insert, row)[2:])
		}
		slices.Sort(want)
		for _, pp := range [][2]int{{1, 1}, {2, 1}, {1, 3}, {2, 3}} {
			t.Run(fmt.Sprintf("%s-p%d-to-p%d", m.name, pp[0], pp[1]), func(t *testing.T) {
				h := newDedupHarness(t, t.TempDir(), pp[0], nil, m.spec)
				for i := 0; i < cut; i += batch {
					h.emit(rows[i : i+batch])
				}
				c := h.checkpoint()
				before := slices.Clone(h.sink.rows)
				for i := cut; i < cut+5*batch; i += batch {
					h.emit(rows[i : i+batch])
				}
				r := newDedupHarness(t, t.TempDir(), pp[1], c, m.spec)
				r.reader.pos = int64(cut)
				for i := cut; i < len(rows); i += batch {
					r.emit(rows[i:min(i+batch, len(rows))])
				}
				r.end()
				all := append(before, r.sink.rows...)
				if got := applyChangelog(t, all); !slices.Equal(got, want) {
					t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), head(got), head(want))
				}
				if m.name == "proctime-first" {
					for _, row := range all {
						if row[:2] != "+I" {
							t.Fatalf("seed %d: keep-first on processing time emitted %s", seed, row)
						}
					}
				}
			})
		}
	}
}

func head(rows []string) []string { return rows[:min(len(rows), 8)] }

// newDedupTTLHarness is the TTL harness (the test as scheduler and clock)
// running a keep-last deduplication on processing time of rows (k, v) per k.
func newDedupTTLHarness(t *testing.T, par int, ttl time.Duration, ck *CheckpointOptions) *ttlHarness {
	h := &ttlHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	spec := DedupSpec{Keys: []int{0}, TimeCol: 1, KeepLast: true, Kinds: []types.Kind{types.KindBigInt, types.KindBigInt}}
	g := &JobGraph{Name: "ttl", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s"},
		{Name: "Dedup", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{{Name: "Deduplicate", ID: "dedup", OutWidth: 2, New: NewDedup(spec)}},
			Sink:      h.sink, SinkName: "out"},
	}}
	h.start(g, Options{BatchSize: 16, ChannelBuffer: 64, StateTTL: ttl, Checkpoint: ck}, par)
	return h
}

// TestDedupStateTTL: 'table.exec.state.ttl' reaches the deduplication: a
// key whose row was not replaced for the TTL is forgotten without output,
// and its next row is a first row (+I), never -U/+U against the expired
// row; in memory and over checkpointed state restored at the same and at
// another parallelism. The answer is a Go model's.
func TestDedupStateTTL(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	const ttl = 1000
	steps := ttlSteps(seed, 80)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int64) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	type model struct {
		kept map[int64][]types.Value
		last map[int64]int64
	}
	run := func(t *testing.T, h *ttlHarness, m *model, steps []ttlStep) int {
		t.Helper()
		h.sink.rows = nil
		var want []string
		expired := 0
		for _, s := range steps {
			h.emit(at(s.at), s.rows)
			for _, r := range s.rows {
				k := r[0].Int()
				old, had := m.kept[k]
				switch {
				case had && m.last[k]+ttl > s.at:
					want = append(want, types.FormatRow(types.UpdateBefore, old), types.FormatRow(types.UpdateAfter, r))
				case had:
					expired++
					fallthrough
				default:
					want = append(want, types.FormatRow(types.Insert, r))
				}
				m.kept[k], m.last[k] = r, s.at
			}
		}
		if got := sortedCopy(h.sink.rows); !slices.Equal(got, sortedCopy(want)) {
			t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, sortedCopy(want))
		}
		return expired
	}
	newModel := func() *model { return &model{kept: map[int64][]types.Value{}, last: map[int64]int64{}} }
	t.Run("memory", func(t *testing.T) {
		h := newDedupTTLHarness(t, 2, ttl*time.Millisecond, nil)
		if n := run(t, h, newModel(), steps); n == 0 {
			t.Fatalf("seed %d: no key expired: the test proves nothing", seed)
		}
	})
	for _, pp := range [][2]int{{2, 2}, {2, 3}, {3, 1}} {
		t.Run(fmt.Sprintf("checkpoint-p%d-to-p%d", pp[0], pp[1]), func(t *testing.T) {
			cut := len(steps) / 2
			h := newDedupTTLHarness(t, pp[0], ttl*time.Millisecond, testCheckpointing(t, t.TempDir(), "ttl", nil, 1<<12))
			m := newModel()
			run(t, h, m, steps[:cut])
			c := h.checkpoint()
			r := newDedupTTLHarness(t, pp[1], ttl*time.Millisecond, testCheckpointing(t, t.TempDir(), "ttl", c, 1<<12))
			run(t, r, m, steps[cut:])
		})
	}
}

// TestDedupRepeatedKeysInBatch feeds the operator batches in which a key
// often comes several times, new keys included (Process looks up a
// batch's slots before it handles its rows, so a key the batch itself adds
// must be found again): the changelog is, row by row, the one computed
// here from a map of kept rows.
func TestDedupRepeatedKeysInBatch(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp}
	for _, m := range []struct {
		name string
		spec DedupSpec
		keep func(old, new []types.Value) bool // new replaces old
	}{
		{"proctime-last", DedupSpec{Keys: []int{0}, TimeCol: 1, KeepLast: true, Kinds: kinds}, func(_, _ []types.Value) bool { return true }},
		{"proctime-first", DedupSpec{Keys: []int{0}, TimeCol: 1, Kinds: kinds}, func(_, _ []types.Value) bool { return false }},
		{"rowtime-first", DedupSpec{Keys: []int{0}, TimeCol: 1, Rowtime: true, Kinds: kinds},
			func(o, n []types.Value) bool { return n[1].Int() < o[1].Int() }},
	} {
		t.Run(m.name, func(t *testing.T) {
			op := NewDedup(m.spec)()
			if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, ID: "dedup", StateBudget: 64 << 20}); err != nil {
				t.Fatal(err)
			}
			var got []string
			out := ijEmitFunc(func(b *types.Batch) error {
				for i := range b.Len() {
					got = append(got, types.FormatRow(b.Kinds[i], b.Row(i)))
				}
				return nil
			})
			kept := map[string][]types.Value{}
			var want []string
			for range 50 {
				b := types.NewBatch(2, 64)
				for range 1 + r.IntN(64) {
					k := types.BigIntValue(int64(r.IntN(40)))
					if r.IntN(20) == 0 {
						k = types.Value{} // NULL: the string-keyed path
					}
					row := []types.Value{k, types.TimestampValue(int64(r.IntN(1000)))}
					b.Append(types.Insert, row)
					old, ok := kept[k.String()]
					switch {
					case !ok:
						want = append(want, types.FormatRow(types.Insert, row))
					case m.keep(old, row):
						want = append(want, types.FormatRow(types.UpdateBefore, old), types.FormatRow(types.UpdateAfter, row))
					default:
						continue
					}
					kept[k.String()] = row
				}
				if err := op.Process(0, b, out); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("changelog differs:\ngot  %d rows %v\nwant %d rows %v", len(got), got, len(want), want)
			}
		})
	}
}

// BenchmarkDedupKeepLast1M is the operator of W13 alone: keep-last on
// processing time over 1,000,000 keys, batches of 1,024 rows of random
// keys, every key already in memory (ns/op is per row).
func BenchmarkDedupKeepLast1M(b *testing.B) {
	const keys, batch = 1_000_000, 1024
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindTimestamp}
	op := NewDedup(DedupSpec{Keys: []int{0}, TimeCol: 2, KeepLast: true, Kinds: kinds})()
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, ID: "dedup", StateBudget: 1 << 30}); err != nil {
		b.Fatal(err)
	}
	out := ijEmitFunc(func(*types.Batch) error { return nil })
	r := rand.New(rand.NewPCG(1, 2))
	in := types.NewBatch(3, batch)
	fill := func(k func(i int) int64) {
		in.Reset()
		for i := range batch {
			in.Append(types.Insert, []types.Value{types.BigIntValue(k(i)), types.BigIntValue(int64(i)), types.TimestampValue(int64(i))})
		}
	}
	for base := 0; base < keys; base += batch {
		fill(func(i int) int64 { return int64((base + i) % keys) })
		if err := op.Process(0, in, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		b.StopTimer()
		fill(func(int) int64 { return r.Int64N(keys) })
		b.StartTimer()
		if err := op.Process(0, in, out); err != nil {
			b.Fatal(err)
		}
	}
}
