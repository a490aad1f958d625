package exec

import (
	"cmp"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// The operator tests of DECIMAL SUM/AVG run the real tasks (as the TTL
// harness does: the test is the scheduler and the processing-time clock)
// over rows (k BIGINT, v DECIMAL(38, s)) whose per-key sums pass 2^127 and
// 2^128 and come back, checkpoint while the sums are past 128 bits (so
// the wide state is written) and restore at another parallelism; the
// answer is the math/big model's.

// decRow is one input row of the operator tests.
type decRow struct {
	kind types.RowKind
	k    int64
	u    *big.Int // v's unscaled value
}

// decJob is a job S → (HASH on column 0) → the keyed operator at
// parallelism par, S possibly with chained operators (a local aggregate).
type decJob struct {
	h     *ttlHarness
	scale int
}

func newDecJob(t *testing.T, par, scale int, ck *CheckpointOptions, srcOps []OperatorSpec, keyed OperatorSpec) *decJob {
	h := &ttlHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	g := &JobGraph{Name: "dec", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 2, SourceName: "s", Operators: srcOps},
		{Name: "Agg", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{keyed},
			Sink:      h.sink, SinkName: "out"},
	}}
	h.start(g, Options{BatchSize: 16, ChannelBuffer: 64, Checkpoint: ck}, par)
	return &decJob{h: h, scale: scale}
}

// emit has S read rows at processing time now (the keyed tasks' clock),
// flush its chain (a local aggregate emits its partials), and the keyed
// subtasks handle them.
func (j *decJob) emit(now time.Time, rows []decRow) {
	h := j.h
	h.advance(now)
	b := types.NewBatch(2, len(rows))
	for _, r := range rows {
		b.Append(r.kind, []types.Value{types.BigIntValue(r.k), decOf(h.t, r.u, j.scale)})
	}
	h.reader.pos += int64(len(rows))
	if err := h.src.push(0, b); err != nil {
		h.t.Fatal(err)
	}
	if err := h.src.flushAll(); err != nil {
		h.t.Fatal(err)
	}
	for _, tk := range h.keyed {
		drainInbox(h.t, tk)
	}
}

// decModelVals returns SUM's and AVG's results (scale s, AVG's max(s, 6))
// of the model as values, NULL where the model's text is.
func decModelVals(t testing.TB, m *decModel, scale int) []types.Value {
	var out []types.Value
	for i, text := range []string{m.sumText(scale), m.avgText(scale, max(scale, 6))} {
		if text == "NULL" {
			out = append(out, types.NullValue())
			continue
		}
		s := scale
		if i == 1 {
			s = max(scale, 6)
		}
		u := bigDec(t, strings.Replace(text, ".", "", 1))
		out = append(out, decOf(t, u, s))
	}
	return out
}

// decInput is the rows of the operator tests: per key, values of ±2^126
// and ±(10^38 - 1) (and small ones) that take its sum past 2^128 in the
// first half and back within 38 digits in the second, by retractions of
// values present when retract is set, else by inserts of their negations.
// It returns the two halves.
func decInput(t *testing.T, keys int, retract bool) (first, second [][]decRow) {
	p126, max38 := bigDec(t, dec2p126), bigDec(t, decMax)
	neg := func(u *big.Int) *big.Int { return new(big.Int).Neg(u) }
	for k := range int64(keys) {
		big1, big2 := p126, max38
		if k%2 == 1 {
			big1, big2 = neg(p126), neg(max38)
		}
		small := big.NewInt(k*7 - 11)
		var up, down []decRow
		// Past 2^128: 4 × 2^126 + (10^38 - 1), which 128 bits wrap to 10^38 - 1.
		for i := range 5 {
			u := big1
			if i == 2 {
				u = big2
			}
			up = append(up, decRow{types.Insert, k, u})
		}
		up = append(up, decRow{types.Insert, k, small})
		// Back: four of the five big values are retracted (or, insert-only,
		// their negations inserted), and one small value comes.
		for i := range 4 {
			u := big1
			if i == 2 {
				u = big2
			}
			if retract {
				down = append(down, decRow{types.Delete, k, u})
			} else {
				down = append(down, decRow{types.Insert, k, neg(u)})
			}
		}
		down = append(down, decRow{types.Insert, k, big.NewInt(k + 3)})
		first = append(first, up)
		second = append(second, down)
	}
	return first, second
}

// decSteps interleaves the keys' rows into batches of up to n rows, in
// each key's order.
func decSteps(perKey [][]decRow, n int) [][]decRow {
	var steps [][]decRow
	var cur []decRow
	for i := 0; ; i++ {
		any := false
		for _, rows := range perKey {
			if i < len(rows) {
				any = true
				cur = append(cur, rows[i])
				if len(cur) == n {
					steps = append(steps, cur)
					cur = nil
				}
			}
		}
		if !any {
			break
		}
	}
	if len(cur) > 0 {
		steps = append(steps, cur)
	}
	return steps
}

// TestDecimalSumGroupAggRestore: GROUP BY k with SUM(v), AVG(v) over
// DECIMAL(38, s) whose sums pass 2^128 and come back by retraction, in one
// phase (GroupAggregate) and in two (the mini-batch local aggregate
// chained to S, the global one keyed; insert-only, so the sums come back
// by negative values), checkpointed while every sum is
// past 128 bits and restored at the same and at another parallelism; the
// final rows are the model's.
func TestDecimalSumGroupAggRestore(t *testing.T) {
	const keys = 12
	for _, scale := range []int{0, 6} {
		calls := decCalls(1, scale)
		phases := []struct {
			name    string
			retract bool // the local aggregate takes insert-only input
			srcOps  []OperatorSpec
			keyed   OperatorSpec
		}{
			{"one phase", true, nil, OperatorSpec{Name: "GroupAggregate", ID: "agg", OutWidth: 3, New: NewGroupAgg([]int{0}, calls)}},
			{"two phase", false, []OperatorSpec{{Name: "LocalGroupAggregate", ID: "local", OutWidth: 1 + PartialGroupCols, New: NewLocalGroupAgg([]int{0}, calls)}},
				OperatorSpec{Name: "GlobalGroupAggregate", ID: "agg", OutWidth: 3, New: NewGlobalGroupAgg(1, calls)}},
		}
		for _, ph := range phases {
			for _, pp := range [][2]int{{2, 2}, {2, 3}, {3, 1}} {
				t.Run(fmt.Sprintf("scale %d/%s/p%d to p%d", scale, ph.name, pp[0], pp[1]), func(t *testing.T) {
					first, second := decInput(t, keys, ph.retract)
					models := make([]*decModel, keys)
					for k := range models {
						models[k] = newDecModel()
					}
					now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
					run := func(j *decJob, steps [][]decRow) {
						for _, s := range steps {
							j.emit(now, s)
							for _, r := range s {
								models[r.k].apply(r.u, r.kind.IsRetraction())
							}
						}
					}
					want := func() []string {
						var out []string
						for k, m := range models {
							out = append(out, types.FormatRow(types.Insert, append([]types.Value{types.BigIntValue(int64(k))}, decModelVals(t, m, scale)...))[2:])
						}
						slices.Sort(out)
						return out
					}
					dir := t.TempDir()
					j := newDecJob(t, pp[0], scale, testCheckpointing(t, dir, "dec", nil, 1<<12), ph.srcOps, ph.keyed)
					run(j, decSteps(first, 5))
					got := finalRows(t, j.h.sink.rows)
					if w := want(); !slices.Equal(got, w) {
						t.Fatalf("before the checkpoint:\n got  %v\n want %v", got, w)
					}
					for k, m := range models {
						if m.sum.BitLen() <= 127 {
							t.Fatalf("key %d's sum %s fits in 128 bits at the checkpoint: the test proves nothing", k, m.sum)
						}
					}
					c := j.h.checkpoint()
					r := newDecJob(t, pp[1], scale, testCheckpointing(t, t.TempDir(), "dec", c, 1<<12), ph.srcOps, ph.keyed)
					r.h.sink.rows = slices.Clone(j.h.sink.rows)
					run(r, decSteps(second, 5))
					got = finalRows(t, r.h.sink.rows)
					if w := want(); !slices.Equal(got, w) {
						t.Fatalf("after the restore:\n got  %v\n want %v", got, w)
					}
					for k, m := range models {
						if m.sum.BitLen() > 127 {
							t.Fatalf("key %d's sum %s did not come back: the test proves nothing", k, m.sum)
						}
					}
				})
			}
		}
	}
}

// overCall returns the registry call of name (SUM, AVG) over column 1 of
// DECIMAL(38, scale).
func overCall(t *testing.T, name string, scale int) aggfunc.Call {
	f, err := aggfunc.Builtins().Lookup(name, false)
	if err != nil {
		t.Fatal(err)
	}
	typ := types.Decimal(38, scale)
	if name == "AVG" {
		typ = types.Decimal(38, max(scale, 6))
	}
	return aggfunc.Call{Func: f, Arg: 1, ArgType: types.Decimal(38, scale), Type: typ, Name: name + "(v)"}
}

// TestDecimalSumOverRestore: SUM(v), AVG(v) OVER (PARTITION BY k ORDER BY
// proctime) over ROWS UNBOUNDED PRECEDING (the accumulators in state) and
// ROWS 3 PRECEDING (a frame that adds and retracts), over values whose
// running sums pass 2^128 and come back,
// checkpointed in the middle and restored at another parallelism: every
// row's results are the model's over its frame.
func TestDecimalSumOverRestore(t *testing.T) {
	const keys = 6
	for _, scale := range []int{0, 6} {
		for _, frame := range []OverFrame{{Unbounded: true, IsRows: true}, {IsRows: true, Rows: 3}} {
			name := "unbounded"
			if !frame.Unbounded {
				name = "rows 3"
			}
			t.Run(fmt.Sprintf("scale %d/%s", scale, name), func(t *testing.T) {
				spec := OverSpec{Partition: []int{0}, Frame: frame, Calls: []aggfunc.Call{overCall(t, "SUM", scale), overCall(t, "AVG", scale)},
					Kinds: []types.Kind{types.KindBigInt, types.KindDecimal}}
				op := OperatorSpec{Name: "OverAggregate", ID: "over", OutWidth: 4, New: NewOverAgg(spec)}
				first, second := decInput(t, keys, false)
				frames := make([][]*big.Int, keys)
				var want []string
				expect := func(steps [][]decRow) {
					for _, s := range steps {
						for _, r := range s {
							frames[r.k] = append(frames[r.k], r.u)
							m := newDecModel()
							from := 0
							if !frame.Unbounded {
								from = max(0, len(frames[r.k])-int(frame.Rows)-1)
							}
							for _, u := range frames[r.k][from:] {
								m.apply(u, false)
							}
							row := append([]types.Value{types.BigIntValue(r.k), decOf(t, r.u, scale)}, decModelVals(t, m, scale)...)
							want = append(want, types.FormatRow(types.Insert, row))
						}
					}
				}
				now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				j := newDecJob(t, 2, scale, testCheckpointing(t, t.TempDir(), "dec", nil, 1<<12), nil, op)
				steps := decSteps(first, 4)
				for _, s := range steps {
					j.emit(now, s)
				}
				expect(steps)
				c := j.h.checkpoint()
				r := newDecJob(t, 3, scale, testCheckpointing(t, t.TempDir(), "dec", c, 1<<12), nil, op)
				steps = decSteps(second, 4)
				for _, s := range steps {
					r.emit(now, s)
				}
				expect(steps)
				got := append(slices.Clone(j.h.sink.rows), r.h.sink.rows...)
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("rows differ:\n got  %v\n want %v", got, want)
				}
				if !slices.ContainsFunc(want, func(s string) bool { return strings.Contains(s, "<NULL>") }) {
					t.Fatal("no result past 38 digits: the test proves nothing")
				}
			})
		}
	}
}

// newDecWindowJob is a job S (rows k, ts, v; WATERMARK ts - 7 ms) → HASH
// on k → op at parallelism par, S possibly with chained operators.
func newDecWindowJob(t *testing.T, par int, ck *CheckpointOptions, srcOps []OperatorSpec, op OperatorSpec) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	g := &JobGraph{Name: "dec", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 3, SourceName: "s", Watermark: tumbleWatermark(), Operators: srcOps},
		{Name: "Win", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: []OperatorSpec{op},
			Sink:      h.sink, SinkName: "out"},
	}}
	h.start(g, Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval, Checkpoint: ck}, par)
	return h
}

// TestDecimalSumWindowRestore: SUM(v), AVG(v) of an event-time window
// TVF (TUMBLE and HOP, whose windows merge slices; SESSION), in one phase
// and, for TUMBLE and HOP, in two (the local window aggregate chained to
// S, the global one keyed), per key over values whose sums pass 2^128 in
// the first half (then a checkpoint, so the wide state of the slices and
// sessions is written, and a restore at another parallelism) and come back
// in the second, or stay past 2^128 (other keys); each window's results
// are the model's over its rows.
func TestDecimalSumWindowRestore(t *testing.T) {
	const keys = 6
	specs := []WindowSpec{
		{Kind: WindowTumble, Size: 2000, TimeCol: 1},
		{Kind: WindowHop, Size: 2000, Slide: 1000, TimeCol: 1},
		{Kind: WindowSession, Gap: 3000, TimeCol: 1},
	}
	// The first half at 100 ms, the second at 1100 ms (the same TUMBLE
	// window and session; HOP: one window with both halves, one each).
	const firstAt, secondAt = 100, 1100
	windows := func(spec WindowSpec, k, ts int64) [][2]int64 {
		if spec.Kind != WindowSession {
			return windowsOf(spec, ts)
		}
		switch {
		case k < keys: // both halves, one session
			return [][2]int64{{firstAt, secondAt + spec.Gap}}
		case k < keys+3: // the first half only
			return [][2]int64{{firstAt, firstAt + spec.Gap}}
		}
		return [][2]int64{{secondAt, secondAt + spec.Gap}}
	}
	for _, scale := range []int{0, 6} {
		calls := decCalls(2, scale)
		for _, spec := range specs {
			for _, twoPhase := range []bool{false, true} {
				if twoPhase && spec.Kind == WindowSession {
					continue
				}
				phase := "one phase"
				op := OperatorSpec{Name: "WindowAggregate", ID: "win", OutWidth: 6, New: NewWindowAgg([]int{0}, spec, calls)}
				var srcOps []OperatorSpec
				if twoPhase {
					phase = "two phase"
					srcOps = []OperatorSpec{{Name: "LocalWindowAggregate", ID: "local", OutWidth: 1 + PartialWindowCols, New: NewLocalWindowAgg([]int{0}, spec, calls)}}
					op = OperatorSpec{Name: "GlobalWindowAggregate", ID: "win", OutWidth: 6, New: NewGlobalWindowAgg(1, spec, calls)}
				}
				t.Run(fmt.Sprintf("scale %d/%s/%s", scale, spec.Kind, phase), func(t *testing.T) {
					first, second := decInput(t, keys, false)
					// More keys whose sums stay at 2^128 - k - 1 (which 128
					// bits wrap to -k - 1): three through the checkpoint,
					// three after it.
					for k := int64(keys); k < keys+6; k++ {
						var rows []decRow
						for range 4 {
							rows = append(rows, decRow{types.Insert, k, bigDec(t, dec2p126)})
						}
						rows = append(rows, decRow{types.Insert, k, big.NewInt(-k - 1)})
						if k < keys+3 {
							first = append(first, rows)
						} else {
							second = append(second, rows)
						}
					}
					models := map[string]*decModel{}
					run := func(h *tumbleHarness, perKey [][]decRow, ts int64) {
						for _, s := range decSteps(perKey, 4) {
							b := types.NewBatch(3, len(s))
							for _, r := range s {
								b.Append(types.Insert, []types.Value{types.BigIntValue(r.k), types.TimestampValue(ts), decOf(t, r.u, scale)})
								for _, w := range windows(spec, r.k, ts) {
									id := fmt.Sprintf("%d %s %s", r.k, types.TimestampValue(w[0]), types.TimestampValue(w[1]))
									if models[id] == nil {
										models[id] = newDecModel()
									}
									models[id].apply(r.u, false)
								}
							}
							h.emitBatch(b)
						}
					}
					j := newDecWindowJob(t, 2, testCheckpointing(t, t.TempDir(), "dec", nil, 1<<12), srcOps, op)
					run(j, first, firstAt)
					if len(j.sink.rows) != 0 {
						t.Fatalf("windows fired before their end: %v", j.sink.rows)
					}
					c := j.checkpoint()
					r := newDecWindowJob(t, 3, testCheckpointing(t, t.TempDir(), "dec", c, 1<<12), srcOps, op)
					run(r, second, secondAt)
					r.end()
					var want []string
					for id, m := range models {
						vals := decModelVals(t, m, scale)
						want = append(want, fmt.Sprintf("%s %s %s", id, vals[0], vals[1]))
					}
					var got []string
					for _, row := range append(slices.Clone(j.sink.rows), r.sink.rows...) {
						// +I[k, window_start, window_end, window_time, SUM, AVG]
						f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(row, "+I["), "]"), ", ")
						if len(f) != 6 {
							t.Fatalf("row %q: want 6 columns", row)
						}
						got = append(got, strings.Join([]string{f[0], f[1], f[2], f[4], f[5]}, " "))
					}
					slices.Sort(got)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Fatalf("windows differ:\n got  %v\n want %v", got, want)
					}
				})
			}
		}
	}
}

// TestDecimalSumOverUpdatingRestore: SUM(v), AVG(v) of the updating OVER
// (PARTITION BY k ORDER BY s) over ROWS 2 PRECEDING (the frame slides: one
// add and one retract a row) and ROWS UNBOUNDED PRECEDING, over a random
// changelog (inserts and deletes) of values ±2^126, ±(10^38 - 1) and
// small ones, whose frame sums pass 2^127 and 2^128 and come back;
// checkpointed mid-way and restored at another parallelism. The changelog
// applied is the batch OVER over the rows live at the end, computed with
// math/big.
func TestDecimalSumOverUpdatingRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	type in struct {
		k, ts, s int64
		u        *big.Int
	}
	const scale = 6
	values := func(r in) []types.Value {
		return []types.Value{types.BigIntValue(r.k), types.TimestampValue(r.ts), types.BigIntValue(r.s), decOf(t, r.u, scale)}
	}
	rng := rand.New(rand.NewPCG(seed, 41))
	pick := []*big.Int{bigDec(t, dec2p126), bigDec(t, "-"+dec2p126), bigDec(t, decMax), bigDec(t, "-"+decMax), big.NewInt(7), big.NewInt(-3)}
	var kinds []types.RowKind
	var rows [][]types.Value
	var live []in
	for i := range 300 {
		if len(live) > 8 && rng.IntN(3) == 0 {
			j := rng.IntN(len(live))
			kinds, rows = append(kinds, types.Delete), append(rows, values(live[j]))
			live = slices.Delete(live, j, j+1)
			continue
		}
		r := in{k: rng.Int64N(3), ts: int64(1000 + i), s: rng.Int64N(50), u: pick[rng.IntN(len(pick))]}
		kinds, rows = append(kinds, types.Insert), append(rows, values(r))
		live = append(live, r)
	}
	for _, frame := range []OverFrame{{IsRows: true, Rows: 2}, {IsRows: true, Unbounded: true}} {
		t.Run(fmt.Sprintf("rows %d unbounded %v", frame.Rows, frame.Unbounded), func(t *testing.T) {
			spec := OverSpec{Partition: []int{0}, Frame: frame, Calls: []aggfunc.Call{overCall(t, "SUM", scale), overCall(t, "AVG", scale)},
				Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt, types.KindDecimal}, Order: []SortKey{{Col: 2}}}
			for i := range spec.Calls {
				spec.Calls[i].Arg = 3
			}
			per := map[int64][]in{}
			for _, r := range live {
				per[r.k] = append(per[r.k], r)
			}
			var want []string
			nulls := 0
			for _, rs := range per {
				slices.SortFunc(rs, func(a, b in) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.ts, b.ts)) })
				for i, r := range rs {
					from := 0
					if !frame.Unbounded {
						from = max(0, i-int(frame.Rows))
					}
					m := newDecModel()
					for _, f := range rs[from : i+1] {
						m.apply(f.u, false)
					}
					res := decModelVals(t, m, scale)
					if res[0].IsNull() {
						nulls++
					}
					want = append(want, types.FormatRow(types.Insert, append(values(r), res...))[2:])
				}
			}
			slices.Sort(want)
			if nulls == 0 || nulls == len(want) {
				t.Fatalf("seed %d: %d of %d SUMs past 38 digits: the test proves little", seed, nulls, len(want))
			}
			const batch, cut = 20, 160
			h := newOverUpdHarness(t, t.TempDir(), 2, nil, spec)
			for i := 0; i < cut; i += batch {
				h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
			}
			ck := h.checkpoint()
			r := newOverUpdHarness(t, t.TempDir(), 3, ck, spec)
			r.reader.pos = cut
			for i := cut; i < len(rows); i += batch {
				j := min(i+batch, len(rows))
				r.emitChanges(kinds[i:j], rows[i:j])
			}
			r.end()
			if got := applyChangelog(t, append(slices.Clone(h.sink.rows), r.sink.rows...)); !slices.Equal(got, want) {
				t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), got, want)
			}
		})
	}
}
