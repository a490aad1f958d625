package exec

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// This file tests the window assigner and the window join against windows
// and joins computed here: random rows (k INT with NULLs, ts, v) on both
// sides arrive out of order under a bounded-delay watermark; rows whose
// window has closed when they arrive are late (dropped, counted); every
// window is joined once when the watermark passes its end.

// refWindows returns the [start, end) windows that hold ts, computed
// directly from the definitions of TUMBLE, HOP and CUMULATE.
func refWindows(w WindowSpec, ts int64) [][2]int64 {
	floor := func(x, m int64) int64 { return x - ((x%m)+m)%m }
	var out [][2]int64
	switch w.Kind {
	case WindowTumble:
		s := floor(ts, w.Size)
		out = append(out, [2]int64{s, s + w.Size})
	case WindowHop:
		for s := floor(ts, w.Slide); s > ts-w.Size; s -= w.Slide {
			out = append(out, [2]int64{s, s + w.Size})
		}
	case WindowCumulate:
		p := floor(ts, w.Size)
		for e := p + w.Slide; e <= p+w.Size; e += w.Slide {
			if e > ts {
				out = append(out, [2]int64{p, e})
			}
		}
	}
	return out
}

type wjEvent struct {
	side int
	k    types.Value
	ts   int64
	v    int64
}

func TestWindowJoinRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	specs := []WindowSpec{
		{Kind: WindowTumble, Size: 10_000, TimeCol: 1},
		{Kind: WindowHop, Size: 10_000, Slide: 5_000, TimeCol: 1},
		{Kind: WindowCumulate, Size: 12_000, Slide: 4_000, TimeCol: 1},
	}
	type kind struct {
		typ        JoinType
		semi, anti bool
	}
	kinds := []kind{{InnerJoin, false, false}, {LeftOuterJoin, false, false}, {RightOuterJoin, false, false},
		{FullOuterJoin, false, false}, {InnerJoin, true, false}, {InnerJoin, false, true}}
	for si, spec := range specs {
		for ki, kd := range kinds {
			for _, residual := range []bool{false, true} {
				name := fmt.Sprintf("%s/type%d/semi=%v/anti=%v/residual=%v", spec.Kind, kd.typ, kd.semi, kd.anti, residual)
				t.Run(name, func(t *testing.T) {
					s := seed + uint64(si*100+ki*2)
					if residual {
						s++
					}
					runRandomWindowJoin(t, s, spec, kd.typ, kd.semi, kd.anti, residual, 0)
				})
			}
		}
	}
}

// TestWindowJoinRestore is TestWindowJoinRandom over a store, with
// checkpoints and restores at random batch boundaries (the output and the
// reference go back to the checkpoint's), its cache large (the window
// rows are lists kept whole in memory) or small (spilled to Pebble).
func TestWindowJoinRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for i, spec := range []WindowSpec{
		{Kind: WindowTumble, Size: 10_000, TimeCol: 1},
		{Kind: WindowHop, Size: 10_000, Slide: 5_000, TimeCol: 1},
	} {
		for j, typ := range []JoinType{InnerJoin, FullOuterJoin} {
			for ci, cache := range []int64{64 << 20, 4 << 10} {
				if !raceRuns(2, i, j, ci) {
					// Under -race half of the cases: each window kind
					// with each join type and each cache size (CI runs
					// all without -race).
					continue
				}
				t.Run(fmt.Sprintf("%s/type%d/cache=%d", spec.Kind, typ, cache), func(t *testing.T) {
					runRandomWindowJoin(t, seed+uint64(i*10+j), spec, typ, false, false, true, cache)
				})
			}
		}
	}
}

// runRandomWindowJoin runs the window join on random rows and compares its
// output with a join computed here; with cache > 0 its state is on a store
// of that cache, checkpointed and restored at random.
func runRandomWindowJoin(t *testing.T, seed uint64, spec WindowSpec, typ JoinType, semi, anti, residual bool, cache int64) {
	r := rand.New(rand.NewPCG(seed, 16))
	const delay = 2_000
	// Events in time order, then shuffled locally: a row arrives up to
	// 8 s after rows later than it, so some are behind the watermark.
	var evs []wjEvent
	for i := range 300 {
		k := types.IntValue(int64(r.IntN(5)))
		if r.IntN(12) == 0 {
			k = types.Value{}
		}
		evs = append(evs, wjEvent{side: r.IntN(2), k: k, ts: int64(i)*200 + int64(r.IntN(8_000)), v: int64(r.IntN(5))})
	}
	kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt, types.KindTimestamp, types.KindTimestamp, types.KindTimestamp}
	js := WindowJoinSpec{JoinSpec: JoinSpec{Type: typ,
		Left:  JoinSide{Keys: []int{0, 3, 4}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0, 3, 4}, Kinds: kinds}},
		Semi: semi, Anti: anti, LeftEnd: 4, RightEnd: 4}
	if residual {
		c, err := expr.NewCompare("<=", expr.NewColumn(2, types.BigInt, "lv"), expr.NewColumn(8, types.BigInt, "rv"))
		if err != nil {
			t.Fatal(err)
		}
		js.Residual = c
	}
	var late atomic.Int64
	ctx := &OpContext{MaxParallelism: 128, Late: &late}
	assign := [2]Operator{NewWindowAssign(spec)(), NewWindowAssign(spec)()}
	for _, op := range assign {
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var (
		join  *windowJoinOp
		k     *state.Keyed
		store *statestore.Store
		gen   int
	)
	dir := t.TempDir()
	// open makes the join operator afresh, over the checkpoint in from.
	open := func(from string) {
		join = NewWindowJoin(js)().(*windowJoinOp)
		if err := join.Open(ctx); err != nil {
			t.Fatal(err)
		}
		var err error
		if cache == 0 {
			k, err = state.NewMemory(state.Options{})
		} else {
			gen++
			work := filepath.Join(dir, fmt.Sprint("work", gen))
			sopts := statestore.Options{CacheBytes: cache, MaxParallelism: 128}
			if from == "" {
				store, err = statestore.Open(work, sopts)
			} else {
				store, err = statestore.Restore(from, work, sopts)
			}
			if err != nil {
				t.Fatal(err)
			}
			k, err = state.Open(store, state.Options{OperatorID: "wj", MaxParallelism: 128})
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := join.OpenKeyed(k); err != nil {
			t.Fatal(err)
		}
	}
	open("")
	if cache > 0 {
		defer func() { _ = store.Close() }()
	}
	got := map[string]int{}
	var sinkErr error
	sink := emitFunc(func(b *types.Batch) error {
		for i := range b.Len() {
			if b.Kinds[i] != types.Insert {
				sinkErr = fmt.Errorf("window join emitted %s", types.FormatRow(b.Kinds[i], b.Row(i)))
			}
			got[fmt.Sprint(b.Row(i))]++
		}
		return nil
	})
	fire := func(wm int64) {
		if err := k.AdvanceWatermark(wm, func(tm state.Timer) error { return join.OnTimer(tm, sink) }); err != nil {
			t.Fatal(err)
		}
	}
	// The reference: the kept (window, row) pairs per side.
	type wrow struct {
		win [2]int64
		row []types.Value
	}
	var kept [2][]wrow
	var wantLate int64
	wm := int64(math.MinInt64)
	maxTS := int64(math.MinInt64)
	// The last checkpoint: its folder and what the test had then.
	type checkpoint struct {
		dir            string
		i              int
		wm, maxTS      int64
		wantLate, late int64
		kept           [2][]wrow
		got            map[string]int
	}
	var ck *checkpoint
	cks, restores := 0, 0
	for i := 0; i < len(evs); {
		if cache > 0 && r.IntN(6) == 0 {
			cks++
			ck = &checkpoint{dir: filepath.Join(dir, fmt.Sprint("chk", cks)), i: i, wm: wm, maxTS: maxTS,
				wantLate: wantLate, late: late.Load(), kept: [2][]wrow{slices.Clip(kept[0]), slices.Clip(kept[1])}, got: maps.Clone(got)}
			if _, err := store.Snapshot(ck.dir); err != nil {
				t.Fatal(err)
			}
		}
		if ck != nil && r.IntN(10) == 0 {
			// A failure: the operator goes, and comes back from the
			// checkpoint with the watermark it had.
			restores++
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			open(ck.dir)
			i, wm, maxTS, wantLate = ck.i, ck.wm, ck.maxTS, ck.wantLate
			late.Store(ck.late)
			kept, got = ck.kept, maps.Clone(ck.got)
			fire(wm)
		}
		n := 1 + r.IntN(5)
		for side := range 2 {
			b := types.NewBatch(3, n)
			for _, e := range evs[i:min(i+n, len(evs))] {
				if e.side != side {
					continue
				}
				row := []types.Value{e.k, types.TimestampValue(e.ts), types.BigIntValue(e.v)}
				b.Append(types.Insert, row)
				for _, w := range refWindows(spec, e.ts) {
					if w[1]-1 <= wm {
						wantLate++
						continue
					}
					kept[side] = append(kept[side], wrow{w, append(slices.Clone(row), types.TimestampValue(w[0]), types.TimestampValue(w[1]), types.TimestampValue(w[1]-1))})
				}
			}
			if err := assign[side].Process(0, b, emitFunc(func(ab *types.Batch) error { return join.Process(side, ab, sink) })); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range evs[i:min(i+n, len(evs))] {
			maxTS = max(maxTS, e.ts)
		}
		i += n
		if maxTS-delay > wm {
			wm = maxTS - delay
			fire(wm)
		}
	}
	fire(math.MaxInt64)
	if cache > 0 {
		t.Logf("%d checkpoints, %d restores", cks, restores)
	}
	if sinkErr != nil {
		t.Fatal(sinkErr)
	}
	if late.Load() != wantLate || wantLate == 0 {
		t.Fatalf("seed %d: %d late rows, want %d (> 0)", seed, late.Load(), wantLate)
	}
	want := map[string]int{}
	null := make([]types.Value, 6)
	match := func(l, r wrow) bool {
		return l.win == r.win && !l.row[0].IsNull() && !r.row[0].IsNull() && l.row[0].Int() == r.row[0].Int() &&
			(!residual || l.row[2].Int() <= r.row[2].Int())
	}
	hitR := make([]bool, len(kept[1]))
	for _, l := range kept[0] {
		n := 0
		for j, r := range kept[1] {
			if match(l, r) {
				n++
				hitR[j] = true
				if !semi && !anti {
					want[fmt.Sprint(append(slices.Clone(l.row), r.row...))]++
				}
			}
		}
		switch {
		case semi && n > 0, anti && n == 0:
			want[fmt.Sprint(l.row)]++
		case !semi && !anti && n == 0 && (typ == LeftOuterJoin || typ == FullOuterJoin):
			want[fmt.Sprint(append(slices.Clone(l.row), null...))]++
		}
	}
	if !semi && !anti && (typ == RightOuterJoin || typ == FullOuterJoin) {
		for j, r := range kept[1] {
			if !hitR[j] {
				want[fmt.Sprint(append(slices.Clone(null), r.row...))]++
			}
		}
	}
	if !equalMultiset(got, want) {
		t.Fatalf("seed %d: output (%d rows)\n%v\nwant (%d rows)\n%v", seed, len(got), keysOf(got), len(want), keysOf(want))
	}
	if entries, _, ok := k.MemoryStats(); ok && entries != 0 {
		t.Fatalf("seed %d: %d state entries left after every window fired", seed, entries)
	}
}
