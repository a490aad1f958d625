package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// globalFeed is the exchange of a two-phase test: it hands the local
// operators' partial batches to the global operator.
type globalFeed struct {
	g    *globalWindowOp
	rows int
}

func (f *globalFeed) Emit(b *types.Batch) error { f.rows += b.Len(); return f.g.Process(0, b, nil) }

// rowCollector keeps copies of the rows it is given, as text.
type rowCollector struct{ rows []string }

func (c *rowCollector) Emit(b *types.Batch) error {
	for i := range b.Len() {
		c.rows = append(c.rows, fmt.Sprint(b.Row(i)))
	}
	return nil
}

func windowTestCalls(t testing.TB) []AggCall {
	t.Helper()
	var calls []AggCall
	for _, c := range []struct {
		name     string
		star     bool
		distinct bool
		arg      int
	}{{"COUNT", true, false, -1}, {"SUM", false, false, 1}, {"MAX", false, false, 1}, {"COUNT", false, true, 1}} {
		f, err := aggfunc.Builtins().Lookup(c.name, c.star)
		if err != nil {
			t.Fatal(err)
		}
		typ := types.Type{Kind: types.KindBigInt}
		if c.name == "COUNT" {
			typ.NotNull = true
		}
		calls = append(calls, AggCallOf(aggfunc.Call{Func: f, Arg: c.arg, Distinct: c.distinct, ArgType: types.Type{Kind: types.KindBigInt}, Type: typ, Name: c.name}))
	}
	return calls
}

// windowsOf returns the [start, end) of every window of spec that holds ts.
func windowsOf(spec WindowSpec, ts int64) [][2]int64 {
	var out [][2]int64
	switch spec.Kind {
	case WindowTumble:
		s := ts - floorMod(ts-spec.Offset, spec.Size)
		out = append(out, [2]int64{s, s + spec.Size})
	case WindowHop:
		last := ts - floorMod(ts-spec.Offset, spec.Slide) // the latest start <= ts
		for s := last; s > ts-spec.Size; s -= spec.Slide {
			out = append(out, [2]int64{s, s + spec.Size})
		}
	case WindowCumulate:
		p := ts - floorMod(ts-spec.Offset, spec.Size)
		for e := p + spec.Slide; e <= p+spec.Size; e += spec.Slide {
			if ts < e {
				out = append(out, [2]int64{p, e})
			}
		}
	}
	return out
}

// TestTwoPhaseWindowsMatchGo runs random rows, out of order within the
// watermark delay, through two local window aggregates (as two source
// subtasks) into one global aggregate, with watermarks (the global's the
// least of the locals') and checkpoint-barrier flushes at random points,
// and compares the windows with those computed here. It also checks that
// the global operator's state stays bounded by the open windows and is
// empty once they fired.
func TestTwoPhaseWindowsMatchGo(t *testing.T) {
	onOneGoroutine(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	calls := windowTestCalls(t)
	specs := []WindowSpec{
		{Kind: WindowTumble, Size: 100, TimeCol: 2},
		{Kind: WindowTumble, Size: 100, Offset: 30, TimeCol: 2},
		{Kind: WindowHop, Size: 300, Slide: 100, TimeCol: 2},
		{Kind: WindowCumulate, Size: 400, Slide: 100, TimeCol: 2},
	}
	const keys, perStep, steps, delay = 300, 200, 300, 40
	for _, spec := range specs {
		t.Run(fmt.Sprintf("%s/offset%d", spec.Kind, spec.Offset), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(spec.Kind)*7+uint64(spec.Offset)))
			g := NewGlobalWindowAgg(1, spec, calls)().(*globalWindowOp)
			if err := g.Open(&OpContext{MaxParallelism: 128, Name: "global"}); err != nil {
				t.Fatal(err)
			}
			feed := &globalFeed{g: g}
			var locals [2]*localWindowAggOp
			for i := range locals {
				locals[i] = NewLocalWindowAgg([]int{0}, spec, calls)().(*localWindowAggOp)
				if err := locals[i].Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
					t.Fatal(err)
				}
			}
			out := &rowCollector{}
			type acc struct{ n, sum, mx int64 }
			want := map[string]*acc{}
			distinct := map[string]map[int64]bool{}
			wms := [2]int64{NoWatermark, NoWatermark}
			// A cell is a (key, slice) accumulator of the global phase: at
			// any step at most keys × the slices between the global
			// watermark and the newest row (plus the slices of windows
			// still open behind the watermark) may be held, whatever the
			// input's length.
			maxCells, maxLag := 0, int64(0)
			slice := spec.Size
			if spec.Kind != WindowTumble {
				slice = spec.Slide
			}
			b := types.NewBatch(3, perStep)
			input := 0
			for step := range steps {
				now := int64(step * 10)
				for li, l := range locals {
					b.Reset()
					for range perStep / 2 {
						k, v, ts := int64(r.IntN(keys)), int64(r.IntN(1000)), now-int64(r.IntN(delay))
						b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v), types.TimestampValue(ts)})
						for _, w := range windowsOf(spec, ts) {
							id := fmt.Sprint(k, w[0], w[1])
							a := want[id]
							if a == nil {
								a = &acc{mx: math.MinInt64}
								want[id] = a
								distinct[id] = map[int64]bool{}
							}
							a.n++
							a.sum += v
							a.mx = max(a.mx, v)
							distinct[id][v] = true
						}
						input++
					}
					if err := l.Process(0, b, feed); err != nil {
						t.Fatal(err)
					}
					if r.IntN(4) == 0 {
						wms[li] = now - delay
						if err := l.ProcessWatermark(wms[li], feed); err != nil {
							t.Fatal(err)
						}
						if err := g.ProcessWatermark(min(wms[0], wms[1]), out); err != nil {
							t.Fatal(err)
						}
					}
					if r.IntN(20) == 0 {
						if err := l.flushBeforeBarrier(feed); err != nil {
							t.Fatal(err)
						}
					}
				}
				_, cells := g.stateSize()
				maxCells = max(maxCells, cells)
				if gw := min(wms[0], wms[1]); gw != NoWatermark {
					maxLag = max(maxLag, now-gw)
				} else {
					maxLag = max(maxLag, now+delay)
				}
			}
			if bound := keys * int(maxLag/slice+spec.Size/slice+2); maxCells > bound {
				t.Errorf("state not bounded by the open windows: %d cells at most, %d allowed (%d keys, watermark at most %d ms behind)", maxCells, bound, keys, maxLag)
			}
			for _, l := range locals {
				if err := l.ProcessWatermark(MaxWatermark, feed); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.ProcessWatermark(MaxWatermark, out); err != nil {
				t.Fatal(err)
			}
			if nk, nc := g.stateSize(); nk != 0 || nc != 0 || len(g.ends) != 0 || len(g.slices) != 0 {
				t.Fatalf("after every window fired: %d keys, %d cells, %d slices", nk, nc, len(g.ends))
			}
			var wantRows []string
			for id, a := range want {
				var k, s, e int64
				fmt.Sscan(id, &k, &s, &e)
				row := []types.Value{types.BigIntValue(k), types.TimestampValue(s), types.TimestampValue(e), types.TimestampValue(e - 1),
					types.BigIntValue(a.n), types.BigIntValue(a.sum), types.BigIntValue(a.mx), types.BigIntValue(int64(len(distinct[id])))}
				wantRows = append(wantRows, fmt.Sprint(row))
			}
			slices.Sort(wantRows)
			got := slices.Sorted(slices.Values(out.rows))
			if !slices.Equal(got, wantRows) {
				t.Fatalf("seed %d: %d windows, want %d\nfirst got  %v\nfirst want %v", seed, len(got), len(wantRows), got[:min(3, len(got))], wantRows[:min(3, len(wantRows))])
			}
			if feed.rows >= input {
				t.Errorf("the local phase sent %d partial rows for %d input rows", feed.rows, input)
			}
			t.Logf("%d rows in, %d partial rows, %d windows, at most %d cells", input, feed.rows, len(got), maxCells)
		})
	}
}

// TestSessionWindowsMatchGo runs random rows, out of order within the
// watermark delay, through the event-time session aggregate keyed by an
// integer column (the int-table path) and by two columns (the map path),
// and compares its sessions with those computed here (a key's rows sorted
// by time, split where two are more than the gap apart). The watermark
// trails by the delay plus the gap, so no row comes after a session it
// touches fired. The state stays bounded and is empty at the end. It runs
// COUNT(*), SUM, MAX and COUNT(DISTINCT) (accumulator groups) and COUNT(*)
// and SUM alone (the fused path: the state in the session).
func TestSessionWindowsMatchGo(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	allCalls := windowTestCalls(t)
	const keys, perStep, steps, delay, gap = 40, 100, 300, 30, 25
	spec := WindowSpec{Kind: WindowSession, Gap: gap, TimeCol: 2}
	for _, keyCols := range [][]int{{0}, {3, 0}} {
		for _, fused := range []bool{false, true} {
			calls := allCalls
			if fused {
				calls = allCalls[:2]
			}
			t.Run(fmt.Sprint(keyCols, " fused ", fused), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(len(keyCols))))
				op := NewSessionWindowAgg(keyCols, spec, calls)().(*sessionWindowOp)
				if err := op.Open(&OpContext{MaxParallelism: 128, Name: "session"}); err != nil {
					t.Fatal(err)
				}
				if (op.fused != nil) != fused {
					t.Fatalf("fused path %v, want %v", op.fused != nil, fused)
				}
				out := &rowCollector{}
				type ev struct{ ts, v int64 }
				byKey := map[int64][]ev{}
				b := types.NewBatch(4, perStep)
				maxSess, early := 0, 0
				for step := range steps {
					if step == steps/5 {
						early = maxSess
					}
					now := int64(step * 10)
					b.Reset()
					for range perStep {
						// A key is active in bursts: sessions of several rows
						// with gaps between them.
						k := int64(r.IntN(keys))
						if (now/200+k)%3 == 0 {
							continue
						}
						ts, v := now-int64(r.IntN(delay)), int64(r.IntN(50))
						b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v), types.TimestampValue(ts), types.StringValue(fmt.Sprint("s", k%3))})
						byKey[k] = append(byKey[k], ev{ts, v})
					}
					if err := op.Process(0, b, out); err != nil {
						t.Fatal(err)
					}
					if err := op.ProcessWatermark(now-delay-gap, out); err != nil {
						t.Fatal(err)
					}
					_, n := op.stateSize()
					maxSess = max(maxSess, n)
				}
				if maxSess > early*2 {
					t.Errorf("state grew with the input: %d sessions after 20%% of it, %d at most later", early, maxSess)
				}
				if err := op.ProcessWatermark(MaxWatermark, out); err != nil {
					t.Fatal(err)
				}
				if nk, ns := op.stateSize(); nk != 0 || ns != 0 || op.due.len() != 0 {
					t.Fatalf("after every session fired: %d keys, %d sessions, %d timers", nk, ns, op.due.len())
				}
				var want []string
				for k, evs := range byKey {
					slices.SortFunc(evs, func(a, b ev) int { return int(a.ts - b.ts) })
					for i := 0; i < len(evs); {
						j := i + 1
						for j < len(evs) && evs[j].ts-evs[j-1].ts <= gap {
							j++
						}
						var sum int64
						mx := int64(math.MinInt64)
						seen := map[int64]bool{}
						for _, e := range evs[i:j] {
							sum += e.v
							mx = max(mx, e.v)
							seen[e.v] = true
						}
						start, end := evs[i].ts, evs[j-1].ts+gap
						row := []types.Value{types.BigIntValue(k)}
						if len(keyCols) == 2 {
							row = []types.Value{types.StringValue(fmt.Sprint("s", k%3)), types.BigIntValue(k)}
						}
						row = append(row, types.TimestampValue(start), types.TimestampValue(end), types.TimestampValue(end-1),
							types.BigIntValue(int64(j-i)), types.BigIntValue(sum))
						if !fused {
							row = append(row, types.BigIntValue(mx), types.BigIntValue(int64(len(seen))))
						}
						want = append(want, fmt.Sprint(row))
						i = j
					}
				}
				slices.Sort(want)
				got := slices.Sorted(slices.Values(out.rows))
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: %d sessions, want %d\nfirst got  %v\nfirst want %v", seed, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
				}
				t.Logf("%d sessions, at most %d open", len(got), maxSess)
			})
		}
	}
}

// TestTwoPhaseWindowsFullFlushKeepsNewestSlice feeds a local TUMBLE
// aggregate, whose group bound is lowered, rows in time order over several
// slices, every key in every slice: when it holds too many groups it
// flushes the complete slices and keeps the newest, so each key and slice
// goes out as exactly one partial row, and the global phase's windows
// match the counts and sums computed here.
func TestTwoPhaseWindowsFullFlushKeepsNewestSlice(t *testing.T) {
	calls := windowTestCalls(t)
	spec := WindowSpec{Kind: WindowTumble, Size: 100, TimeCol: 2}
	g := NewGlobalWindowAgg(1, spec, calls)().(*globalWindowOp)
	if err := g.Open(&OpContext{MaxParallelism: 128, Name: "global"}); err != nil {
		t.Fatal(err)
	}
	l := NewLocalWindowAgg([]int{0}, spec, calls)().(*localWindowAggOp)
	if err := l.Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
		t.Fatal(err)
	}
	const keys, nslices, perSlice = 60, 6, 600
	l.maxGroups = 150 // two and a half slices of groups: the third slice is half full when the bound is reached
	feed := &globalFeed{g: g}
	type acc struct{ n, sum int64 }
	want := map[[2]int64]*acc{}
	b := types.NewBatch(3, 50)
	for i := range nslices * perSlice {
		ts := int64(i) * 100 / perSlice // perSlice rows in each 100 ms
		k, v := int64(i%keys), int64(i%7)
		b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v), types.TimestampValue(ts)})
		id := [2]int64{k, ts - ts%100}
		if want[id] == nil {
			want[id] = &acc{}
		}
		want[id].n++
		want[id].sum += v
		if b.Len() == 50 {
			if err := l.Process(0, b, feed); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := l.ProcessWatermark(MaxWatermark, feed); err != nil {
		t.Fatal(err)
	}
	if feed.rows != keys*nslices {
		t.Errorf("%d partial rows, want one per key and slice (%d)", feed.rows, keys*nslices)
	}
	out := &rowCollector{}
	if err := g.ProcessWatermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	var wantRows []string
	for id, a := range want {
		s := id[1]
		// COUNT(DISTINCT v) over the key's rows in the slice, computed here.
		vs := map[int64]bool{}
		for i := range nslices * perSlice {
			if ts := int64(i) * 100 / perSlice; int64(i%keys) == id[0] && ts-ts%100 == s {
				vs[int64(i%7)] = true
			}
		}
		mx := int64(math.MinInt64)
		for v := range vs {
			mx = max(mx, v)
		}
		row := []types.Value{types.BigIntValue(id[0]), types.TimestampValue(s), types.TimestampValue(s + 100), types.TimestampValue(s + 99),
			types.BigIntValue(a.n), types.BigIntValue(a.sum), types.BigIntValue(mx), types.BigIntValue(int64(len(vs)))}
		wantRows = append(wantRows, fmt.Sprint(row))
	}
	slices.Sort(wantRows)
	got := slices.Sorted(slices.Values(out.rows))
	if !slices.Equal(got, wantRows) {
		t.Fatalf("%d windows, want %d\nfirst got  %v\nfirst want %v", len(got), len(wantRows), got[:min(3, len(got))], wantRows[:min(3, len(wantRows))])
	}
}
