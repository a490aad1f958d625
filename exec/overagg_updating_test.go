package exec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// overUpdIn is a row of the updating OVER tests' input (k BIGINT, ts
// TIMESTAMP, s BIGINT, d DOUBLE): partition k, ordered by s, ties by the
// row (so by ts: each row has its own), aggregating s and d.
type overUpdIn struct {
	k, ts, s int64
	d        float64
}

func (r overUpdIn) values() []types.Value {
	return []types.Value{types.BigIntValue(r.k), types.TimestampValue(r.ts), types.BigIntValue(r.s), types.DoubleValue(r.d)}
}

// overUpdCase is one OVER of the tests: its frame and calls, and the Go
// computation of a row's results over its frame (rows in order).
type overUpdCase struct {
	name  string
	frame OverFrame
	calls []string // "SUM", "MIN", "COUNT(*)", "AVG(s)", "AVG(d)"
}

func (c overUpdCase) spec(t *testing.T) OverSpec {
	t.Helper()
	b := aggfunc.Builtins()
	bigint, double := types.Type{Kind: types.KindBigInt}, types.Type{Kind: types.KindDouble}
	var calls []aggfunc.Call
	for _, name := range c.calls {
		var call aggfunc.Call
		var err error
		switch name {
		case "SUM", "MIN":
			call = aggfunc.Call{Arg: 2, ArgType: bigint, Type: bigint, Name: name + "(s)"}
			call.Func, err = b.Lookup(name, false)
		case "AVG(s)":
			call = aggfunc.Call{Arg: 2, ArgType: bigint, Type: bigint, Name: name}
			call.Func, err = b.Lookup("AVG", false)
		case "COUNT(*)":
			call = aggfunc.Call{Arg: -1, Type: types.Type{Kind: types.KindBigInt, NotNull: true}, Name: name}
			call.Func, err = b.Lookup("COUNT", true)
		case "AVG(d)":
			call = aggfunc.Call{Arg: 3, ArgType: double, Type: double, Name: name}
			call.Func, err = b.Lookup("AVG", false)
		}
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, call)
	}
	return OverSpec{Partition: []int{0}, Frame: c.frame, Calls: calls,
		Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt, types.KindDouble},
		Order: []SortKey{{Col: 2}}}
}

// results computes the calls over fr, in order, as the accumulators do
// when they start empty (AVG(d): the DOUBLE sum in frame order).
func (c overUpdCase) results(fr []overUpdIn) []types.Value {
	var out []types.Value
	for _, name := range c.calls {
		switch name {
		case "SUM":
			var s int64
			for _, r := range fr {
				s += r.s
			}
			out = append(out, types.BigIntValue(s))
		case "MIN":
			m := fr[0].s
			for _, r := range fr {
				m = min(m, r.s)
			}
			out = append(out, types.BigIntValue(m))
		case "COUNT(*)":
			out = append(out, types.BigIntValue(int64(len(fr))))
		case "AVG(s)": // BIGINT: the quotient truncated
			var s int64
			for _, r := range fr {
				s += r.s
			}
			out = append(out, types.BigIntValue(s/int64(len(fr))))
		case "AVG(d)":
			s := 0.0
			for _, r := range fr {
				s += r.d
			}
			out = append(out, types.DoubleValue(s/float64(len(fr))))
		}
	}
	return out
}

// want is the batch OVER over rows: each row with its results, as
// FormatRow prints it without the kind.
func (c overUpdCase) want(rows []overUpdIn) []string {
	var out []string
	for _, r := range c.wantRows(rows) {
		out = append(out, types.FormatRow(types.Insert, r)[2:])
	}
	slices.Sort(out)
	return out
}

// wantRows is the batch OVER over rows: each row with its results.
func (c overUpdCase) wantRows(rows []overUpdIn) [][]types.Value {
	per := map[int64][]overUpdIn{}
	for _, r := range rows {
		per[r.k] = append(per[r.k], r)
	}
	var out [][]types.Value
	for _, rs := range per {
		slices.SortFunc(rs, overUpdOrder)
		for i, r := range rs {
			out = append(out, append(r.values(), c.results(c.frameOf(rs, i))...))
		}
	}
	return out
}

// overUpdOrder is the order of a partition's rows: by s, ties by the
// row (k is the partition's, so by ts).
func overUpdOrder(a, b overUpdIn) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.ts, b.ts)) }

// frameOf is the frame of row i of the sorted partition rs.
func (c overUpdCase) frameOf(rs []overUpdIn, i int) []overUpdIn {
	switch f := c.frame; {
	case !f.IsRows: // RANGE UNBOUNDED: every row not after i's sort key
		end := i
		for end < len(rs) && rs[end].s == rs[i].s {
			end++
		}
		return rs[:end]
	case f.Unbounded:
		return rs[:i+1]
	default:
		return rs[max(0, i-int(f.Rows)) : i+1]
	}
}

var overUpdCases = []overUpdCase{
	{"rows2-exact", OverFrame{IsRows: true, Rows: 2}, []string{"SUM", "MIN", "COUNT(*)"}},
	{"rows3-double", OverFrame{IsRows: true, Rows: 3}, []string{"SUM", "AVG(d)"}},
	// q6's call (AVG of a BIGINT) with others: exact, one pass (resultsRows).
	{"rows4-exact-avg", OverFrame{IsRows: true, Rows: 4}, []string{"AVG(s)", "MIN", "COUNT(*)"}},
	{"rows-unbounded", OverFrame{IsRows: true, Unbounded: true}, []string{"MIN", "AVG(d)"}},
	{"range-unbounded", OverFrame{Unbounded: true}, []string{"SUM", "COUNT(*)", "AVG(d)"}},
}

// overUpdChanges makes n changes to rows of 5 partitions: inserts, updates
// (-U old, +U new) and deletes of live rows, and now and then the
// retraction of a row that was never there (ignored). It returns the
// changelog and the rows live at its end.
func overUpdChanges(seed uint64, n int) (kinds []types.RowKind, rows [][]types.Value, final []overUpdIn) {
	rng := rand.New(rand.NewPCG(seed, 17))
	ts := int64(1_000)
	next := func(k int64) overUpdIn {
		ts++
		return overUpdIn{k: k, ts: ts, s: rng.Int64N(6), d: float64(rng.IntN(1000)) / 7}
	}
	return changelogOf[overUpdIn]{keys: 5, mix: changelogMix{insert: 45, same: 45, update: 85, del: 97},
		next: next, key: func(r overUpdIn) int64 { return r.k }, values: overUpdIn.values}.make(rng, n)
}

// newOverUpdHarness is the tumbling-count harness (source S, HASH on k,
// a keyed vertex at parallelism par, checkpoints through Pebble with a
// small cache) running the updating OVER of spec.
func newOverUpdHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint, spec OverSpec) *tumbleHarness {
	return newOverUpdPickHarness(t, dir, par, restore, spec, nil)
}

// newOverUpdPickHarness is newOverUpdHarness with, when pick is set, a
// Calc chained after the OVER that picks the columns pick of its output.
func newOverUpdPickHarness(t *testing.T, dir string, par int, restore *checkpoint.Checkpoint, spec OverSpec, pick []int) *tumbleHarness {
	h := &tumbleHarness{t: t, reader: &posReader{}, sink: &recordSink{}}
	ops := []OperatorSpec{{Name: "UpdatingOverAggregate", ID: "over", OutWidth: 4 + len(spec.Calls),
		New: NewOverAggUpdating(spec)}}
	if pick != nil {
		var proj []expr.Expr
		for _, c := range pick {
			proj = append(proj, expr.NewColumn(c, types.BigInt, fmt.Sprintf("c%d", c)))
		}
		ops = append(ops, OperatorSpec{Name: "Calc", ID: "calc", OutWidth: len(pick), New: NewCalc(nil, proj)})
	}
	g := &JobGraph{Name: "overupd", Vertices: []*Vertex{
		{ID: "s", Name: "S", Parallelism: 1, Source: posSource{h.reader}, SourceWidth: 4, SourceName: "s", Watermark: tumbleWatermark()},
		{Name: "Over", Parallelism: par,
			Inputs:    []Input{{From: 0, Partition: Partitioning{Kind: Hash, Keys: []int{0}}}},
			Operators: ops,
			Sink:      h.sink, SinkName: "out"},
	}}
	opts := Options{BatchSize: 16, ChannelBuffer: 64, AutoWatermarkInterval: wmInterval,
		Checkpoint: testCheckpointing(t, dir, "overupd", restore, 1<<12)}
	h.start(g, opts, par)
	return h
}

// emitChanges is emit with the rows' kinds.
func (h *tumbleHarness) emitChanges(kinds []types.RowKind, rows [][]types.Value) {
	b := types.NewBatch(len(rows[0]), len(rows))
	for i, r := range rows {
		b.Append(kinds[i], r)
	}
	h.emitBatch(b)
}

// TestOverUpdatingCheckpointRestore runs updating OVER aggregates (ROWS n
// with exact and with DOUBLE aggregates, ROWS and RANGE UNBOUNDED) over a
// random changelog, checkpoints mid-way, goes on (output a crash loses),
// restores at the same and other parallelisms and replays the rest: the
// output before the checkpoint plus the restored run's, applied (every
// retraction must retract a row emitted before), is the batch OVER over
// the rows live at the end, computed here.
func TestOverUpdatingCheckpointRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	kinds, rows, final := overUpdChanges(seed, 700)
	const batch, cut = 20, 400
	for ci, c := range overUpdCases {
		want := c.want(final)
		for pi, pp := range [][2]int{{1, 1}, {2, 1}, {1, 3}} {
			if !raceRuns(3, ci, pi) {
				continue // under -race: every case, at one of the parallelism pairs in turn
			}
			t.Run(fmt.Sprintf("%s/p%d-to-p%d", c.name, pp[0], pp[1]), func(t *testing.T) {
				spec := c.spec(t)
				h := newOverUpdHarness(t, t.TempDir(), pp[0], nil, spec)
				for i := 0; i < cut; i += batch {
					h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
				}
				ck := h.checkpoint()
				before := slices.Clone(h.sink.rows)
				for i := cut; i < cut+5*batch; i += batch {
					h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
				}
				r := newOverUpdHarness(t, t.TempDir(), pp[1], ck, spec)
				r.reader.pos = cut
				for i := cut; i < len(rows); i += batch {
					j := min(i+batch, len(rows))
					r.emitChanges(kinds[i:j], rows[i:j])
				}
				r.end()
				if got := applyChangelog(t, append(before, r.sink.rows...)); !slices.Equal(got, want) {
					t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), got, want)
				}
			})
		}
	}
}

// TestOverUpdatingPickedOutput is TestOverUpdatingCheckpointRestore with
// a Calc after the OVER that picks some of its columns in another order
// (the shape of Nexmark q6, whose Calc keeps the partition column and the
// result): the Calc is folded into the OVER (fuseCalcs), and the output,
// applied across a checkpoint and a restore at another parallelism, is
// the picked columns of the batch OVER computed here.
func TestOverUpdatingPickedOutput(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	kinds, rows, final := overUpdChanges(seed, 700)
	const batch, cut = 20, 400
	for _, c := range overUpdCases {
		nc := len(c.calls)
		// The last result, k, the first result, s: the input columns
		// decoded for emitting are k and s (ts and d only where read).
		pick := []int{4 + nc - 1, 0, 4, 2}
		var want []string
		for _, r := range c.wantRows(final) {
			var p []types.Value
			for _, col := range pick {
				p = append(p, r[col])
			}
			want = append(want, types.FormatRow(types.Insert, p)[2:])
		}
		slices.Sort(want)
		for _, pp := range [][2]int{{1, 2}, {2, 1}} {
			t.Run(fmt.Sprintf("%s/p%d-to-p%d", c.name, pp[0], pp[1]), func(t *testing.T) {
				spec := c.spec(t)
				h := newOverUpdPickHarness(t, t.TempDir(), pp[0], nil, spec, pick)
				for _, tk := range h.keyed {
					if o := tk.ops[0].(*overUpdOp); !slices.Equal(o.pick, pick) {
						t.Fatalf("the OVER picks %v, want %v (the Calc not folded)", o.pick, pick)
					}
				}
				for i := 0; i < cut; i += batch {
					h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
				}
				ck := h.checkpoint()
				before := slices.Clone(h.sink.rows)
				for i := cut; i < cut+5*batch; i += batch {
					h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
				}
				r := newOverUpdPickHarness(t, t.TempDir(), pp[1], ck, spec, pick)
				r.reader.pos = cut
				for i := cut; i < len(rows); i += batch {
					j := min(i+batch, len(rows))
					r.emitChanges(kinds[i:j], rows[i:j])
				}
				r.end()
				if got := applyChangelog(t, append(before, r.sink.rows...)); !slices.Equal(got, want) {
					t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), got, want)
				}
			})
		}
	}
}

// TestOverUpdatingReadsEarlierLayout puts a partition's rows into state as
// earlier versions wrote them (the value: uvarint len | row | results),
// then applies changes: rows are read from that layout, and the output
// applied after the rows' first emission is the batch OVER over the rows
// live at the end.
func TestOverUpdatingReadsEarlierLayout(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, c := range overUpdCases {
		t.Run(c.name, func(t *testing.T) {
			spec := c.spec(t)
			op, k := openOverUpdMemory(t, spec)
			// The initial rows, written in the earlier layout with their
			// results, as if emitted.
			kinds, rows, initial := overUpdChanges(seed, 200)
			// Through the operator's own state handles.
			urows, useq := op.(*overUpdOp).rows, op.(*overUpdOp).seq
			rk := NewRowKey(spec.Partition, 128)
			var log []string
			for _, line := range c.want(initial) {
				log = append(log, "+I"+line)
			}
			for n, r := range initial {
				row := r.values()
				res := resultsOf(c, initial, r)
				if err := rk.Set(k, row); err != nil {
					t.Fatal(err)
				}
				enc := state.Values{}.Append(nil, row)
				mk := binary.BigEndian.AppendUint64(append(encodeSortKey(nil, spec.Order, row), enc...), uint64(n))
				v := append(binary.AppendUvarint(nil, uint64(len(enc))), enc...)
				v = state.Values{}.Append(v, res)
				if err := urows.Put(mk, v); err != nil {
					t.Fatal(err)
				}
				if err := useq.Update(int64(len(initial))); err != nil {
					t.Fatal(err)
				}
			}
			// More changes: updates and deletes of the initial rows, new rows.
			kinds, rows = kinds[:0], rows[:0]
			rng := rand.New(rand.NewPCG(seed, 29))
			live := slices.Clone(initial)
			ts := int64(1 << 20)
			for range 150 {
				i := rng.IntN(len(live))
				switch p := rng.IntN(3); {
				case p == 0 || len(live) < 3:
					ts++
					r := overUpdIn{k: live[i].k, ts: ts, s: rng.Int64N(6), d: float64(rng.IntN(1000)) / 7}
					kinds, rows = append(kinds, types.UpdateBefore, types.UpdateAfter), append(rows, live[i].values(), r.values())
					live[i] = r
				case p == 1:
					kinds, rows = append(kinds, types.Delete), append(rows, live[i].values())
					live = slices.Delete(live, i, i+1)
				default:
					ts++
					r := overUpdIn{k: rng.Int64N(5), ts: ts, s: rng.Int64N(6), d: float64(rng.IntN(1000)) / 7}
					kinds, rows = append(kinds, types.Insert), append(rows, r.values())
					live = append(live, r)
				}
			}
			sink := &recordSink{}
			out := recordEmitter{recordWriter{sink}}
			b := types.NewBatch(4, len(rows))
			for i, r := range rows {
				b.Append(kinds[i], r)
			}
			if err := op.Process(0, b, out); err != nil {
				t.Fatal(err)
			}
			if got, want := applyChangelog(t, append(log, sink.rows...)), c.want(live); !slices.Equal(got, want) {
				t.Fatalf("seed %d:\n got  %v\n want %v", seed, got, want)
			}
		})
	}
}

// resultsOf is r's results in the batch OVER over rows.
func resultsOf(c overUpdCase, rows []overUpdIn, r overUpdIn) []types.Value {
	per := slices.DeleteFunc(slices.Clone(rows), func(q overUpdIn) bool { return q.k != r.k })
	slices.SortFunc(per, overUpdOrder)
	return c.results(c.frameOf(per, slices.Index(per, r)))
}

// recordEmitter records what an operator emits into a recordSink.
type recordEmitter struct{ w recordWriter }

func (e recordEmitter) Emit(b *types.Batch) error { return e.w.Write(b) }

// TestOverUpdatingRetractsWhatItEmitted feeds MIN over ROWS 2 of a
// DECIMAL column whose equal values differ in scale (5.0, 5.00): every
// -U/-D the operator sends must be a row it emitted before and not yet
// retracted. A sliding MIN would show the first added of the equal values
// and so recompute an old result that was never emitted.
func TestOverUpdatingRetractsWhatItEmitted(t *testing.T) {
	dec := types.Decimal(10, 1)
	c := aggfunc.Call{Arg: 2, ArgType: dec, Type: dec, Name: "MIN(v)"}
	var err error
	if c.Func, err = aggfunc.Builtins().Lookup("MIN", false); err != nil {
		t.Fatal(err)
	}
	spec := OverSpec{Partition: []int{0}, Frame: OverFrame{IsRows: true, Rows: 2}, Calls: []aggfunc.Call{c},
		Kinds: []types.Kind{types.KindBigInt, types.KindBigInt, types.KindDecimal}, Order: []SortKey{{Col: 1}}}
	op, _ := openOverUpdMemory(t, spec)
	row := func(s, unscaled int64, scale int) []types.Value {
		return []types.Value{types.BigIntValue(1), types.BigIntValue(s), types.DecimalValue(unscaled, scale)}
	}
	var live [][]types.Value
	out := emitFunc(func(b *types.Batch) error {
		for i := range b.Len() {
			r := slices.Clone(b.Row(i))
			if !b.Kinds[i].IsRetraction() {
				live = append(live, r)
				continue
			}
			j := slices.IndexFunc(live, func(x []types.Value) bool { return slices.Equal(x, r) })
			if j < 0 {
				t.Errorf("%s of a row never emitted: %v (emitted and live: %v)", b.Kinds[i], r, live)
				continue
			}
			live = slices.Delete(live, j, j+1)
		}
		return nil
	})
	for _, r := range [][]types.Value{row(10, 50, 1), row(20, 500, 2), row(30, 50, 1), row(40, 90, 1), row(25, 70, 1), row(35, 10, 1)} {
		b := types.NewBatch(3, 1)
		b.Append(types.Insert, r)
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
	}
	if len(live) != 6 {
		t.Errorf("%d rows live after 6 inserts, want 6: %v", len(live), live)
	}
}

// openOverUpdMemory opens an updating OVER of spec alone (parallelism 1)
// on a memory state backend.
func openOverUpdMemory(tb testing.TB, spec OverSpec) (Operator, *state.Keyed) {
	tb.Helper()
	op := NewOverAggUpdating(spec)()
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "over"}); err != nil {
		tb.Fatal(err)
	}
	k, err := state.NewMemory(state.Options{MaxParallelism: 128})
	if err != nil {
		tb.Fatal(err)
	}
	if err := op.(KeyedOperator).OpenKeyed(k); err != nil {
		tb.Fatal(err)
	}
	return op, k
}
