package exec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// ijCollect gathers emitted insert rows as a multiset.
type ijCollect struct{ rows map[string]int }

func (c *ijCollect) Emit(b *types.Batch) error {
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("interval join emitted %s", types.FormatRow(b.Kinds[i], b.Row(i)))
		}
		c.rows[fmt.Sprint(b.Row(i))]++
	}
	return nil
}

type ijEmitFunc func(*types.Batch) error

func (f ijEmitFunc) Emit(b *types.Batch) error { return f(b) }

// ijHarness runs an interval join at some parallelism, routing each row
// to the subtask owning its key's key group, optionally over state stores
// that it snapshots and restores (also at another parallelism).
type ijHarness struct {
	t       *testing.T
	spec    IntervalJoinSpec
	par     int
	budget  int64
	dir     string
	gen     int
	ops     []*intervalJoinOp
	stores  []*statestore.Store
	dropped atomic.Int64
	out     *ijCollect
	batches []*types.Batch
	wm      int64 // the last watermark
	// pick, if set, is given to each subtask once open (pickOutput, as
	// fuseCalcs does for a Calc picking columns after the join): the
	// output is then those columns of the joined rows.
	pick []int
}

const ijMaxPar = 128

// newIJHarness opens par subtasks; with dir, each over a store, restored
// from snaps (the snapshot folders of the previous subtasks) if any.
func newIJHarness(t *testing.T, spec IntervalJoinSpec, par int, budget int64, dir string, snaps []string, out *ijCollect) *ijHarness {
	h := &ijHarness{t: t, spec: spec, par: par, budget: budget, dir: dir, out: out, wm: NoWatermark}
	h.open(snaps)
	return h
}

// newPickedIJHarness is newIJHarness (no snapshots to restore) whose
// subtasks pick the columns pick of their output (nil: every column).
func newPickedIJHarness(t *testing.T, spec IntervalJoinSpec, par int, budget int64, dir string, out *ijCollect, pick []int) *ijHarness {
	h := &ijHarness{t: t, spec: spec, par: par, budget: budget, dir: dir, out: out, wm: NoWatermark, pick: pick}
	h.open(nil)
	return h
}

func (h *ijHarness) open(snaps []string) {
	t := h.t
	h.gen++
	h.ops, h.stores, h.batches = nil, nil, nil
	for sub := range h.par {
		op := NewIntervalJoin(h.spec)().(*intervalJoinOp)
		ctx := &OpContext{ID: "ij", Name: "IntervalJoin", Subtask: sub, Parallelism: h.par, MaxParallelism: ijMaxPar, StateBudget: h.budget, Dropped: &h.dropped}
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		if h.pick != nil && !op.pickOutput(h.pick) {
			t.Fatalf("the interval join refused to pick %v", h.pick)
		}
		if h.dir != "" {
			work := filepath.Join(h.dir, fmt.Sprintf("work-%d-%d", h.gen, sub))
			opts := statestore.Options{MaxParallelism: ijMaxPar}
			var st *statestore.Store
			var err error
			if snaps != nil {
				first, last := state.KeyGroupRange(sub, h.par, ijMaxPar)
				st, err = statestore.RestoreKeyGroups(snaps, work, first, last, opts)
			} else {
				st, err = statestore.Open(work, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if err := op.InitState(st, snaps != nil); err != nil {
				t.Fatal(err)
			}
			h.stores = append(h.stores, st)
		}
		h.ops = append(h.ops, op)
		h.batches = append(h.batches, types.NewBatch(len(h.spec.Left.Kinds), 8))
	}
}

// snapshotRestore snapshots every subtask and reopens the join at par
// subtasks restored from the snapshots.
func (h *ijHarness) snapshotRestore(par int) {
	var snaps []string
	for i, op := range h.ops {
		if err := op.PrepareSnapshot(); err != nil {
			h.t.Fatal(err)
		}
		dir := filepath.Join(h.dir, fmt.Sprintf("snap-%d-%d", h.gen, i))
		if _, err := h.stores[i].Snapshot(dir); err != nil {
			h.t.Fatal(err)
		}
		snaps = append(snaps, dir)
	}
	for _, st := range h.stores {
		_ = st.Close()
	}
	h.par = par
	h.open(snaps)
	// The sources' watermark comes again after a restore, before rows.
	if h.wm != NoWatermark {
		if err := h.watermark(h.wm); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *ijHarness) subtaskOf(row []types.Value, key int) int {
	if row[key].IsNull() {
		return 0
	}
	kg := state.KeyGroup(state.AppendValue(nil, row[key]), ijMaxPar)
	for sub := range h.par {
		if first, last := state.KeyGroupRange(sub, h.par, ijMaxPar); kg >= first && kg <= last {
			return sub
		}
	}
	h.t.Fatalf("key group %d of no subtask", kg)
	return 0
}

// process routes b's rows (side) to their subtasks.
func (h *ijHarness) process(side int, b *types.Batch) error {
	for _, sb := range h.batches {
		sb.Reset()
	}
	for i := range b.Len() {
		h.batches[h.subtaskOf(b.Row(i), 0)].Append(b.Kinds[i], b.Row(i))
	}
	for sub, sb := range h.batches {
		if sb.Len() > 0 {
			if err := h.ops[sub].Process(side, sb, h.out); err != nil {
				return err
			}
			checkQueuedAt(h.t, h.ops[sub])
		}
	}
	return nil
}

func (h *ijHarness) watermark(wm int64) error {
	h.wm = wm
	for _, op := range h.ops {
		if err := op.ProcessWatermark(wm, h.out); err != nil {
			return err
		}
		checkQueuedAt(h.t, op)
	}
	return nil
}

// checkQueuedAt checks what a sweep relies on to skip reading a key's
// first row (sweepSlot): each key's qat per input is its first row's
// expiry, computed here from the row's time, or math.MaxInt64 with no
// row; and a key with rows is in the sweep queue at that time.
func checkQueuedAt(t *testing.T, op *intervalJoinOp) {
	t.Helper()
	queued := map[ijSweep]bool{}
	for _, e := range op.queue.b0 {
		queued[e] = true
	}
	for i := range op.queue.b {
		b := &op.queue.b[i]
		for k := range b.blocks {
			for _, e := range b.block(k) {
				queued[e] = true
			}
		}
	}
	for s := range op.keys.Cap() {
		if !op.keys.Used(s) {
			continue
		}
		k := op.rec(s)
		for side := range 2 {
			want := int64(math.MaxInt64)
			if r := k.side[side]; len(r) > 0 {
				d := 1 - op.spec.Lower
				if side == 0 {
					d = op.spec.Upper + 1
				}
				// Saturating, and below MaxInt64 (which means no row).
				want = r[0].Int() + d
				if (d > 0 && want < r[0].Int()) || want == math.MaxInt64 {
					want = math.MaxInt64 - 1
				} else if d < 0 && want > r[0].Int() {
					want = math.MinInt64
				}
			}
			if k.qat[side] != want {
				t.Fatalf("slot %d input %d: queued at %d, its first row expires at %d", s, side, k.qat[side], want)
			}
			if want != math.MaxInt64 && !queued[ijSweep{at: want, slot: s, side: uint8(side)}] {
				t.Fatalf("slot %d input %d: not in the sweep queue at %d", s, side, want)
			}
		}
	}
}

// checkEmpty checks that no subtask holds rows, keys or sweeps, in memory
// or (with stores) in the store after a snapshot.
func (h *ijHarness) checkEmpty(seed uint64) {
	h.t.Helper()
	for i, op := range h.ops {
		if n := op.keys.Len(); n != 0 || op.mem != 0 || op.queue.n != 0 || op.dues.Len() != 0 {
			h.t.Fatalf("seed %d: subtask %d holds %d keys (%d bytes), %d sweeps and %d spilled sweeps after the final watermark",
				seed, i, n, op.mem, op.queue.n, op.dues.Len())
		}
		if h.dir == "" {
			continue
		}
		if err := op.PrepareSnapshot(); err != nil {
			h.t.Fatal(err)
		}
		sp, err := h.stores[i].Space("ij")
		if err != nil {
			h.t.Fatal(err)
		}
		n := 0
		for kg := range ijMaxPar {
			if err := sp.Scan(kg, nil, nil, false, func(k, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
				h.t.Fatal(err)
			}
		}
		if n != 0 {
			h.t.Fatalf("seed %d: subtask %d's store holds %d entries after the final watermark", seed, i, n)
		}
	}
}

// TestIntervalJoinRandom drives the interval join with random rows (k INT,
// ts TIMESTAMP, v BIGINT) on both inputs, out of order within the
// watermark's delay and beyond (late), with NULL keys and times, and
// random watermark advances, then a final +∞ watermark; the output must
// equal the answer computed here: a row is dropped (and counted) when its
// time is behind the watermark when it arrives; the kept rows of both
// sides join when their keys are equal and right.ts - left.ts is within
// the bounds; each kept row of a preserved side that joined nothing goes
// out NULL-padded. Every join type, several bounds; in memory at
// parallelism 1 and 3, and over stores with a snapshot and restore at
// another parallelism in the middle, with a large budget and with a tiny
// one (every batch spills). After the final watermark no state is left.
func TestIntervalJoinRandom(t *testing.T) {
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}
	modes := []struct {
		name       string
		par, par2  int
		store      bool
		budget     int64
		restoreAt  int
		restoreAt2 int
	}{
		{name: "memory-p1", par: 1, par2: 1},
		{name: "memory-p3", par: 3, par2: 3},
		{name: "store-p2-to-p3", par: 2, par2: 3, store: true, budget: 64 << 20, restoreAt: 300},
		{name: "spill-p3-to-p1", par: 3, par2: 1, store: true, budget: 1, restoreAt: 200, restoreAt2: 450},
	}
	for ti, typ := range []JoinType{InnerJoin, LeftOuterJoin, RightOuterJoin, FullOuterJoin} {
		for bi, b := range [][2]int64{{0, 10}, {-10, 0}, {-5, 20}, {3, 3}} {
			for mi, m := range modes {
				if !raceRuns(4, ti, bi, mi) {
					continue // under -race: every bounds and mode, each with one join type
				}
				t.Run(fmt.Sprintf("type%d/bounds%v/%s", typ, b, m.name), func(t *testing.T) {
					s := seed + uint64(typ)*100 + uint64(bi)*10 + uint64(mi)
					spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
						Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
						Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
						LeftTime: 1, RightTime: 1, Lower: b[0], Upper: b[1]}
					dir := ""
					if m.store {
						dir = t.TempDir()
					}
					out := &ijCollect{rows: map[string]int{}}
					h := newIJHarness(t, spec, m.par, m.budget, dir, nil, out)
					runRandomIntervalJoin(t, s, h, func(step int) {
						if m.store && (step == m.restoreAt || step == m.restoreAt2) {
							par := m.par2
							if step == m.restoreAt2 {
								par = m.par
							}
							h.snapshotRestore(par)
						}
					})
				})
			}
		}
	}
}

func runRandomIntervalJoin(t *testing.T, seed uint64, h *ijHarness, at func(step int)) {
	runRandomIntervalJoinSized(t, seed, h, at, 5, 3, 600)
}

// runRandomIntervalJoinSized is runRandomIntervalJoin with rows of keys
// keys (0 to keys-1), batches of 1 to maxBatch rows and steps steps.
func runRandomIntervalJoinSized(t *testing.T, seed uint64, h *ijHarness, at func(step int), keys, maxBatch, steps int) {
	runRandomIntervalJoinOpts(t, seed, h, at, ijRandOpts{keys: keys, maxBatch: maxBatch, steps: steps})
}

// ijRandOpts shapes runRandomIntervalJoinOpts' rows: keys 0 to keys-1,
// batches of 1 to maxBatch rows, steps steps; mutate (if set) may change a
// row made at step before it is sent (not its key's number nor its time),
// and residual (if set) is the join's residual condition, computed in Go.
type ijRandOpts struct {
	keys, maxBatch, steps int
	mutate                func(step int, row []types.Value)
	residual              func(l, r []types.Value) bool
}

// runRandomIntervalJoinOpts is runRandomIntervalJoin shaped by opts.
func runRandomIntervalJoinOpts(t *testing.T, seed uint64, h *ijHarness, at func(step int), opts ijRandOpts) {
	keys, maxBatch, steps := opts.keys, opts.maxBatch, opts.steps
	r := rand.New(rand.NewPCG(seed, 10))
	spec := h.spec
	width := len(spec.Left.Kinds) // 3 (k, ts, v) or 2 (k, ts)
	var kept [2][][]types.Value
	var wantDropped int64
	wm := int64(NoWatermark)
	clock := int64(0)
	b := types.NewBatch(width, maxBatch)
	for step := range steps {
		at(step)
		if r.IntN(8) == 0 {
			if next := clock - int64(r.IntN(15)); next > wm {
				wm = next
				if err := h.watermark(wm); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
			continue
		}
		clock += int64(r.IntN(3))
		side := r.IntN(2)
		b.Reset()
		for range 1 + r.IntN(maxBatch) {
			row := []types.Value{types.IntValue(int64(r.IntN(keys))), types.TimestampValue(clock - int64(r.IntN(25))), types.BigIntValue(int64(step))}
			row = row[:width]
			if opts.mutate != nil {
				opts.mutate(step, row)
			}
			if r.IntN(15) == 0 {
				row[0] = types.Value{}
			}
			if r.IntN(40) == 0 {
				row[1] = types.Value{}
			}
			if row[1].IsNull() || row[1].Int() < wm {
				wantDropped++
			} else {
				kept[side] = append(kept[side], row)
			}
			b.Append(types.Insert, row)
		}
		if err := h.process(side, b); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if err := h.watermark(MaxWatermark); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}

	want := map[string]int{}
	// wantRow counts a joined row (left ++ right) in want, its columns
	// h.pick if set.
	wantRow := func(row []types.Value) {
		if h.pick != nil {
			picked := make([]types.Value, len(h.pick))
			for k, c := range h.pick {
				picked[k] = row[c]
			}
			row = picked
		}
		want[fmt.Sprint(row)]++
	}
	null := make([]types.Value, width)
	matched := [2][]bool{make([]bool, len(kept[0])), make([]bool, len(kept[1]))}
	// The right rows by key, in order: a NULL key joins nothing, and the
	// pairs of a key are those of the nested loop over both sides.
	rightByKey := map[int64][]int{}
	for j, rr := range kept[1] {
		if !rr[0].IsNull() {
			rightByKey[rr[0].Int()] = append(rightByKey[rr[0].Int()], j)
		}
	}
	for i, l := range kept[0] {
		if l[0].IsNull() {
			continue
		}
		for _, j := range rightByKey[l[0].Int()] {
			rr := kept[1][j]
			if d := rr[1].Int() - l[1].Int(); d < spec.Lower || d > spec.Upper {
				continue
			}
			if opts.residual != nil && !opts.residual(l, rr) {
				continue
			}
			wantRow(append(slices.Clone(l), rr...))
			matched[0][i], matched[1][j] = true, true
		}
	}
	for i, l := range kept[0] {
		if !matched[0][i] && (spec.Type == LeftOuterJoin || spec.Type == FullOuterJoin) {
			wantRow(append(slices.Clone(l), null...))
		}
	}
	for j, rr := range kept[1] {
		if !matched[1][j] && (spec.Type == RightOuterJoin || spec.Type == FullOuterJoin) {
			wantRow(append(slices.Clone(null), rr...))
		}
	}
	if !ijSameMultiset(h.out.rows, want) {
		t.Fatalf("seed %d: output differs (got x, want y):\n%s", seed, strings.Join(ijDiff(h.out.rows, want), "\n"))
	}
	if h.dropped.Load() != wantDropped {
		t.Fatalf("seed %d: %d rows counted as dropped, want %d", seed, h.dropped.Load(), wantDropped)
	}
	if wantDropped == 0 {
		t.Fatalf("seed %d: no late rows generated", seed)
	}
	h.checkEmpty(seed)
}

func ijSameMultiset(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

// ijDiff lists the rows whose counts differ (at most 20).
func ijDiff(got, want map[string]int) []string {
	var ks []string
	for k, n := range got {
		if want[k] != n {
			ks = append(ks, fmt.Sprintf("%s %d %d", k, n, want[k]))
		}
	}
	for k, n := range want {
		if _, ok := got[k]; !ok {
			ks = append(ks, fmt.Sprintf("%s 0 %d", k, n))
		}
	}
	sort.Strings(ks)
	return ks[:min(len(ks), 20)]
}

// TestIntervalJoinRandomWide is TestIntervalJoinRandom with 300 keys and
// batches of up to 200 rows, so that the reads ahead of the arriving rows
// (64 at a time, new keys taking freed slots) and of the due sweeps (up to
// sweepChunk at a time, hundreds due at a watermark) cross their chunks'
// ends; the outer types (whose unmatched rows the sweeps emit), in memory
// and over stores with a snapshot and restore at another parallelism
// (once with every batch spilling). The output must equal the answer
// computed in the test.
func TestIntervalJoinRandomWide(t *testing.T) {
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}
	modes := []struct {
		name      string
		par, par2 int
		store     bool
		budget    int64
	}{
		{name: "memory-p1", par: 1, par2: 1},
		{name: "store-p2-to-p3", par: 2, par2: 3, store: true, budget: 64 << 20},
		{name: "spill-p3-to-p1", par: 3, par2: 1, store: true, budget: 1},
	}
	for _, typ := range []JoinType{InnerJoin, LeftOuterJoin, FullOuterJoin} {
		for mi, m := range modes {
			t.Run(fmt.Sprintf("type%d/%s", typ, m.name), func(t *testing.T) {
				t.Parallel() // each case has its own stores and seed
				s := seed + uint64(typ)*100 + uint64(mi)
				spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
					Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
					Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
					LeftTime: 1, RightTime: 1, Lower: -5, Upper: 20}
				dir := ""
				if m.store {
					dir = t.TempDir()
				}
				out := &ijCollect{rows: map[string]int{}}
				h := newIJHarness(t, spec, m.par, m.budget, dir, nil, out)
				runRandomIntervalJoinSized(t, s, h, func(step int) {
					if m.store && step == 150 {
						h.snapshotRestore(m.par2)
					}
				}, 300, 200, 300)
			})
		}
	}
}

// TestIntervalJoinRandomTimesOnly is TestIntervalJoinRandom on rows of
// a key and a time only (k INT, ts TIMESTAMP), W10's shape, whose layout
// keeps no column but the meta value (stride 1): a key's rows hold no
// references, and a sweep of a key's single row does not read it. Few
// keys (many rows a key) and many (about one), every join type, in memory
// and over stores restored at another parallelism twice, once spilling
// every batch; the harness checks after every call that each key is
// queued at its first row's expiry (checkQueuedAt). Randomized: prints
// its seed.
func TestIntervalJoinRandomTimesOnly(t *testing.T) {
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindInt, types.KindTimestamp}
	modes := []struct {
		name      string
		par, par2 int
		store     bool
		budget    int64
	}{
		{name: "memory-p1", par: 1, par2: 1},
		{name: "store-p2-to-p3", par: 2, par2: 3, store: true, budget: 64 << 20},
		{name: "spill-p3-to-p1", par: 3, par2: 1, store: true, budget: 1},
	}
	for ti, typ := range []JoinType{InnerJoin, LeftOuterJoin, RightOuterJoin, FullOuterJoin} {
		for ki, keys := range []int{5, 300} {
			for mi, m := range modes {
				if !raceRuns(2, ti, ki, mi) {
					continue // under -race: every keys and mode, with two of the join types
				}
				t.Run(fmt.Sprintf("type%d/keys%d/%s", typ, keys, m.name), func(t *testing.T) {
					s := seed + uint64(typ)*100 + uint64(ki)*10 + uint64(mi)
					spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
						Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
						Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
						LeftTime: 1, RightTime: 1, Lower: -10, Upper: 3}
					dir := ""
					if m.store {
						dir = t.TempDir()
					}
					out := &ijCollect{rows: map[string]int{}}
					h := newIJHarness(t, spec, m.par, m.budget, dir, nil, out)
					if l := h.ops[0].lay; l[0].stride != 1 || l[1].stride != 1 {
						t.Fatalf("strides %d and %d, want 1", l[0].stride, l[1].stride)
					}
					runRandomIntervalJoinSized(t, s, h, func(step int) {
						if m.store && (step == 200 || step == 450) {
							par := m.par2
							if step == 450 {
								par = m.par
							}
							h.snapshotRestore(par)
						}
					}, keys, 1+keys/10, 600)
				})
			}
		}
	}
}

// TestIntervalJoinRandomSpillSome is TestIntervalJoinRandom with a state
// budget that a subtask passes now and then, not at every call: after a
// spill the subtask is backed by its store, and the keys that rows load
// back stay in memory across calls, queued in the operator's sweep queue
// while their spilled due times (RecordDues) are still pending. That is
// the case where a key's queued time (qat) must be reset when RecordDues
// sweeps it (sweep): the modes that spill at every call drop every key
// before the next call, and the in-memory modes never spill. Rows of a
// key and a time only (stride 1) and with a value; every join type; a
// snapshot and restore at another parallelism in the middle. The test
// fails if no subtask ever held keys in memory while backed.
// Randomized: prints its seed.
func TestIntervalJoinRandomSpillSome(t *testing.T) {
	seed := testseed.Seed(t)
	for wi, kinds := range [][]types.Kind{
		{types.KindInt, types.KindTimestamp},
		{types.KindInt, types.KindTimestamp, types.KindBigInt},
	} {
		for ti, typ := range []JoinType{InnerJoin, LeftOuterJoin, RightOuterJoin, FullOuterJoin} {
			for ki, keys := range []int{5, 300} {
				if !raceRuns(2, wi, ti, ki) {
					continue // under -race: every width and keys, with two of the join types
				}
				t.Run(fmt.Sprintf("width%d/type%d/keys%d", len(kinds), typ, keys), func(t *testing.T) {
					s := seed + uint64(wi)*1000 + uint64(typ)*100 + uint64(ki)*10
					spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: typ,
						Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
						Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
						LeftTime: 1, RightTime: 1, Lower: -10, Upper: 3}
					// About two thirds of what a subtask's keys take.
					budget := int64(keys) * keyOverhead / 3
					if keys > 100 {
						budget /= 3
					}
					out := &ijCollect{rows: map[string]int{}}
					h := newIJHarness(t, spec, 2, budget, t.TempDir(), nil, out)
					backedWithKeys := 0
					runRandomIntervalJoinSized(t, s, h, func(step int) {
						for _, op := range h.ops {
							if op.st.Backed() && op.keys.Len() > 0 {
								backedWithKeys++
							}
						}
						if step == 300 {
							h.snapshotRestore(3)
						}
					}, keys, 1+keys/10, 600)
					if backedWithKeys == 0 {
						t.Fatalf("seed %d: no subtask held keys in memory while backed", s)
					}
				})
			}
		}
	}
}

// TestIntervalJoinSpillKeepsSweeps checks that rows spilled to the store
// (a tiny budget) are still swept by the watermark: the unmatched rows of
// a left outer join go out NULL-padded, once, when their intervals close,
// though no row of their keys comes again, and the store is empty after.
func TestIntervalJoinSpillKeepsSweeps(t *testing.T) {
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: LeftOuterJoin,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: 0, Upper: 10}
	out := &ijCollect{rows: map[string]int{}}
	h := newIJHarness(t, spec, 1, 1, t.TempDir(), nil, out)
	b := types.NewBatch(3, 8)
	const keys = 2000
	for k := range keys {
		b.Reset()
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(k)), types.TimestampValue(int64(k % 50)), types.BigIntValue(int64(k))})
		if err := h.process(0, b); err != nil {
			t.Fatal(err)
		}
	}
	op := h.ops[0]
	if !op.st.Backed() || op.keys.Len() >= keys {
		t.Fatalf("no spill: %d keys in memory, backed %v", op.keys.Len(), op.st.Backed())
	}
	// Rows at times < 25 expire at the watermark 35 (t + Upper + 1 <= 35).
	if err := h.watermark(35); err != nil {
		t.Fatal(err)
	}
	// The answer, built in Go: each left row (k, k%50, k) NULL-padded,
	// once; at watermark 35 those with k%50 < 25.
	want := map[string]int{}
	padded := func(k int64) string {
		return fmt.Sprint([]types.Value{types.BigIntValue(k), types.TimestampValue(k % 50), types.BigIntValue(k),
			types.NullValue(), types.NullValue(), types.NullValue()})
	}
	for k := range int64(keys) {
		if k%50 < 25 {
			want[padded(k)] = 1
		}
	}
	checkIJRows(t, "at watermark 35", out.rows, want)
	if err := h.watermark(MaxWatermark); err != nil {
		t.Fatal(err)
	}
	for k := range int64(keys) {
		want[padded(k)] = 1
	}
	checkIJRows(t, "at the end", out.rows, want)
	h.checkEmpty(0)
}

// checkIJRows fails the test unless the multiset of rows got equals want.
func checkIJRows(t *testing.T, when string, got, want map[string]int) {
	t.Helper()
	var diffs []string
	for row, n := range want {
		if got[row] != n {
			diffs = append(diffs, fmt.Sprintf("%s: %d times, want %d", row, got[row], n))
		}
	}
	for row, n := range got {
		if _, ok := want[row]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %d times, want none", row, n))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Fatalf("%s: %d rows differ from the answer (%d rows), e.g.:\n%s", when, len(diffs), ijTotal(want), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
	}
}

func ijTotal(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// TestIntervalJoinOldLayout checks that restoring a checkpoint of the
// earlier layout (keyed sorted maps "left" and "right") fails with a
// clear error rather than silently losing the rows.
func TestIntervalJoinOldLayout(t *testing.T) {
	dir := t.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "old"), statestore.Options{MaxParallelism: ijMaxPar})
	if err != nil {
		t.Fatal(err)
	}
	k, err := state.Open(st, state.Options{OperatorID: "ij", MaxParallelism: ijMaxPar})
	if err != nil {
		t.Fatal(err)
	}
	left, err := state.NewValueState[int64](k, "left", state.Int64{})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SetCurrentKeyRow([]types.Value{types.BigIntValue(7)}, []int{0}); err != nil {
		t.Fatal(err)
	}
	if err := left.Update(1); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "snap")
	if _, err := st.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp}
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: InnerJoin,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: 0, Upper: 10}
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{ID: "ij", Name: "IntervalJoin", MaxParallelism: ijMaxPar}); err != nil {
		t.Fatal(err)
	}
	rst, err := statestore.Restore(snap, filepath.Join(dir, "work"), statestore.Options{MaxParallelism: ijMaxPar})
	if err != nil {
		t.Fatal(err)
	}
	defer rst.Close()
	err = op.InitState(rst, true)
	if !errors.Is(err, errOldLayout) || !strings.Contains(err.Error(), "IntervalJoin") {
		t.Fatalf("restore of the old layout: %v, want the old-layout error naming the operator", err)
	}
}

// TestIntervalJoinCleanupAllocs checks that the interval join's cleanup
// of a key's rows (the watermark passing their intervals) allocates
// nothing per removed row once its buffers have grown, and that it emits
// each unmatched row of a preserved side NULL-padded, once.
func TestIntervalJoinCleanupAllocs(t *testing.T) {
	const rows = 256
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindBigInt}
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: LeftOuterJoin,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: 0, Upper: 10}
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	padded := 0
	out := ijEmitFunc(func(b *types.Batch) error {
		for i := range b.Len() {
			if b.Kinds[i] != types.Insert || !b.Row(i)[3].IsNull() {
				t.Fatalf("cleanup emitted %s, want NULL-padded inserts", types.FormatRow(b.Kinds[i], b.Row(i)))
			}
			padded++
		}
		return nil
	})
	b := types.NewBatch(3, rows)
	var mallocs uint64
	for round := range 3 {
		b.Reset()
		for i := range rows {
			b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i % 4)), types.BigIntValue(int64(round*1000 + i)), types.BigIntValue(int64(i))})
		}
		if err := op.Process(0, b, ijEmitFunc(func(*types.Batch) error { return nil })); err != nil {
			t.Fatal(err)
		}
		padded = 0
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := op.ProcessWatermark(int64(round*1000+rows+100), out)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if padded != rows {
			t.Fatalf("round %d: cleanup emitted %d padded rows, want %d", round, padded, rows)
		}
		mallocs = after.Mallocs - before.Mallocs
	}
	if mallocs > 8 {
		t.Fatalf("cleanup of %d rows allocated %d times", rows, mallocs)
	}
}

// BenchmarkIntervalJoinOperator measures the interval join's operator
// alone on W10's shape: rows (k, ts, v) on both inputs, 100,000 keys, times
// advancing 1 ms every 10 rows, joined within 10 s, the watermark 1 s
// behind after every batch of 1024 (sweeping the expired rows), state in
// memory. It reports ns per input row.
func BenchmarkIntervalJoinOperator(b *testing.B) {
	const keys = 100_000
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: InnerJoin,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: -10_000, Upper: 10_000}
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		b.Fatal(err)
	}
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	batch := types.NewBatch(3, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	var n int64
	b.ResetTimer()
	for done := 0; done < b.N; {
		batch.Reset()
		for range min(1024, b.N-done) {
			batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.TimestampValue(n / 10), types.BigIntValue(n)})
			n++
		}
		if err := op.Process(int(n/1024)%2, batch, discard); err != nil {
			b.Fatal(err)
		}
		if err := op.ProcessWatermark(n/10-1000, discard); err != nil {
			b.Fatal(err)
		}
		done += batch.Len()
	}
}

// countRows counts the kept rows of keys 0 to 4 of a sorted map by time
// (the temporal join test's).
func countRows(t *testing.T, k *state.Keyed, s *state.SortedMapState[timeKey, joinRec]) int {
	t.Helper()
	n := 0
	for key := range 5 {
		if err := k.SetCurrentKeyRow([]types.Value{types.IntValue(int64(key))}, []int{0}); err != nil {
			t.Fatal(err)
		}
		if err := s.Ascend(func(timeKey, joinRec) (bool, error) { n++; return true, nil }); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// BenchmarkIntervalJoinW10 measures the interval join's operator alone on
// the shape one subtask of W10 sees: 50,000 keys, both inputs' times
// advancing 1 ms a row each (batches of 1024 taking turns), right rows
// joined within the 10 s before the left row's time (as W10's b.ts
// BETWEEN a.ts - 10 s AND a.ts), the watermark 1 s behind the slower
// input after every batch, state in memory. It reports ns per input row.
func BenchmarkIntervalJoinW10(b *testing.B) {
	const keys = 50_000
	op := openKeyTimeIntervalJoin(b, -10_000)
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	batch := types.NewBatch(2, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	var n [2]int64
	b.ResetTimer()
	for done, side := 0, 0; done < b.N; side = 1 - side {
		batch.Reset()
		for range min(1024, b.N-done) {
			batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.TimestampValue(n[side])})
			n[side]++
		}
		if err := op.Process(side, batch, discard); err != nil {
			b.Fatal(err)
		}
		if err := op.ProcessWatermark(min(n[0], n[1])-1000, discard); err != nil {
			b.Fatal(err)
		}
		done += batch.Len()
	}
}

// BenchmarkIntervalJoinW10Store is BenchmarkIntervalJoinW10 over a state
// store, as a W10 subtask runs: each key added tells the store's records
// (key group, fresh), each removal forgets it, and the changed keys are
// written every 1,000,000 rows (a checkpoint a second at W10's rate per
// subtask). Both inputs' times advance 2 ms a row (a subtask sees half of
// each input's rows), the watermark 1 s behind the slower input after
// every batch of 1024. It reports ns per input row.
func BenchmarkIntervalJoinW10Store(b *testing.B) {
	const keys, snapEvery = 50_000, 1_000_000
	spec := openKeyTimeIntervalJoin(b, -10_000).spec
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{ID: "ij", MaxParallelism: ijMaxPar, Parallelism: 1}); err != nil {
		b.Fatal(err)
	}
	st, err := statestore.Open(b.TempDir(), statestore.Options{MaxParallelism: ijMaxPar})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := op.InitState(st, false); err != nil {
		b.Fatal(err)
	}
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	batch := types.NewBatch(2, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	var n [2]int64
	sinceSnap := 0
	b.ResetTimer()
	for done, side := 0, 0; done < b.N; side = 1 - side {
		batch.Reset()
		for range min(1024, b.N-done) {
			batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.TimestampValue(n[side])})
			n[side] += 2
		}
		if err := op.Process(side, batch, discard); err != nil {
			b.Fatal(err)
		}
		if err := op.ProcessWatermark(min(n[0], n[1])-1000, discard); err != nil {
			b.Fatal(err)
		}
		done += batch.Len()
		if sinceSnap += batch.Len(); sinceSnap >= snapEvery {
			sinceSnap = 0
			if err := op.PrepareSnapshot(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestIntervalJoinStateFollowsWatermark streams 200,000 rows of W10's
// shape (1,000 keys, both inputs' times advancing 1 ms a row, right rows
// within the 10 s before the left row's, the watermark 1 s behind the
// slower input after every batch) through the operator in memory and,
// after every watermark, compares the rows it holds with the rows that
// can still match, counted here from what was fed: a left row until the
// watermark passes its time, a right row until it passes its time + 10 s.
// So the state follows the watermark and stays bounded; after the final
// watermark nothing is left (no key, row, sweep or memory).
func TestIntervalJoinStateFollowsWatermark(t *testing.T) {
	const keys, rows = 1000, 200_000
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 10))
	op := openKeyTimeIntervalJoin(t, -10_000)
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	held := func() (n int) {
		for s := range op.keys.Cap() {
			if op.keys.Used(s) {
				k := op.rec(s)
				n += len(k.side[0])/(op.lay[0].stride) + len(k.side[1])/(op.lay[1].stride)
			}
		}
		return n
	}
	var fed [2][]int64 // the times fed, per input (ascending)
	batch := types.NewBatch(2, 1000)
	var n [2]int64
	peak := 0
	for done, side := 0, 0; done < rows; side = 1 - side {
		batch.Reset()
		for range 1000 {
			batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(r.IntN(keys))), types.TimestampValue(n[side])})
			fed[side] = append(fed[side], n[side])
			n[side]++
		}
		if err := op.Process(side, batch, discard); err != nil {
			t.Fatal(err)
		}
		wm := min(n[0], n[1]) - 1000
		if err := op.ProcessWatermark(wm, discard); err != nil {
			t.Fatal(err)
		}
		done += batch.Len()
		want := 0
		for _, ts := range fed[0] {
			if ts+op.spec.Upper+1 > wm {
				want++
			}
		}
		for _, ts := range fed[1] {
			if ts-op.spec.Lower+1 > wm {
				want++
			}
		}
		if got := held(); got != want {
			t.Fatalf("after %d rows (watermark %d): %d rows held, want %d", done, wm, got, want)
		}
		peak = max(peak, want)
	}
	if err := op.ProcessWatermark(MaxWatermark, discard); err != nil {
		t.Fatal(err)
	}
	if op.keys.Len() != 0 || op.mem != 0 || op.queue.n != 0 || held() != 0 {
		t.Fatalf("after the final watermark: %d keys, %d bytes, %d sweeps, %d rows", op.keys.Len(), op.mem, op.queue.n, held())
	}
	t.Logf("at most %d rows held of %d fed", peak, rows)
}

// TestIntervalJoinFreesPeakMemory buffers one row on each of 50,000 keys,
// then lets the watermark expire them all: the freed slots may keep their
// row slices for the next keys, but no more of them than there are keys
// (plus retainSlack), so the memory follows the keys held, not their peak.
// Rows of (k, ts) (kept in the records, inline) keep none; rows of (k, ts,
// v) keep slices of their own.
func TestIntervalJoinFreesPeakMemory(t *testing.T) {
	for _, w := range []int{2, 3} {
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { testFreesPeakMemory(t, w) })
	}
}

func testFreesPeakMemory(t *testing.T, w int) {
	const keys = 50_000
	op := openKeyTimeWidthIntervalJoin(t, -10, w)
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	retaining := func() (n int) {
		for s := range op.keys.Cap() {
			if k := op.rec(s); !op.keys.Used(s) && heapRoom(k) {
				n++
			}
		}
		return n
	}
	b := types.NewBatch(w, 1000)
	for i := 0; i < keys; i += 1000 {
		b.Reset()
		for j := range 1000 {
			b.Append(types.Insert, keyTimeRow(w, int64(i+j), int64(i+j)))
		}
		if err := op.Process(0, b, discard); err != nil {
			t.Fatal(err)
		}
	}
	if op.keys.Len() != keys {
		t.Fatalf("%d keys, want %d", op.keys.Len(), keys)
	}
	if err := op.ProcessWatermark(keys+10, discard); err != nil {
		t.Fatal(err)
	}
	if op.keys.Len() != 0 {
		t.Fatalf("%d keys left", op.keys.Len())
	}
	if n := retaining(); n > retainSlack || n != op.retained {
		t.Fatalf("%d free slots keep row slices with no key held (%d counted), at most %d allowed", n, op.retained, retainSlack)
	}
	if w == 2 && op.retained != 0 {
		t.Fatalf("%d free slots keep row slices of their own, want none (the records hold one row)", op.retained)
	}
}

// keyTimeRow returns a row of (k BIGINT, ts TIMESTAMP), and with w 3 a
// BIGINT v (k + ts) after them.
func keyTimeRow(w int, k, ts int64) []types.Value {
	if w == 3 {
		return []types.Value{types.BigIntValue(k), types.TimestampValue(ts), types.BigIntValue(k + ts)}
	}
	return []types.Value{types.BigIntValue(k), types.TimestampValue(ts)}
}

// TestIntervalJoinRoomFollowsRows checks that the room for rows follows
// the rows held, not what a slot or a key once held: 2,000 keys buffer
// one to four rows each and expire, after which no free slot keeps room
// for more than one row (what a new key takes first; more is pooled,
// within the pool's bounds: checkRowPool); then one key buffers 10,000
// rows and the watermark expires all but the last 10, after which its
// slice has room for at most 20 rows, and a row arriving matches exactly
// those 10 (their times computed here).
func TestIntervalJoinRoomFollowsRows(t *testing.T) {
	op := openKeyTimeIntervalJoin(t, -10)
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	b := types.NewBatch(2, 1024)
	feed := func(side int, key, ts int64) {
		b.Append(types.Insert, []types.Value{types.BigIntValue(key), types.TimestampValue(ts)})
		if b.Len() == 1024 {
			if err := op.Process(side, b, discard); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	flush := func(side int) {
		if b.Len() > 0 {
			if err := op.Process(side, b, discard); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	for i := range int64(4) {
		for key := range int64(2000) {
			if i <= key%4 { // one to four rows a key
				feed(0, key, 100+i)
			}
		}
	}
	flush(0)
	if err := op.ProcessWatermark(1000, discard); err != nil {
		t.Fatal(err)
	}
	if op.keys.Len() != 0 {
		t.Fatalf("%d keys left", op.keys.Len())
	}
	for s := range op.keys.Cap() {
		k := op.rec(s)
		for side, r := range k.side {
			if stride := op.lay[side].stride; cap(r) >= 2*stride {
				t.Fatalf("free slot %d keeps room for %d values of input %d, more than one row (%d)", s, cap(r), side, stride)
			}
		}
	}

	checkRowPool(t, op)

	const n, kept, key = 10_000, 10, 7
	for ts := range int64(n) {
		feed(1, key, 2000+ts)
	}
	flush(1)
	// A right row at ts expires at ts + 11 (lower bound -10).
	last := int64(2000 + n - 1)
	if err := op.ProcessWatermark(last-kept+11, discard); err != nil { // expires all but the last 10
		t.Fatal(err)
	}
	s, ok := op.keys.Find([]types.Value{types.BigIntValue(key)})
	if !ok {
		t.Fatal("the key is gone")
	}
	rows, stride := op.rec(s).side[1], op.lay[1].stride
	if len(rows) != kept*stride || cap(rows) > 2*kept*stride {
		t.Fatalf("the key holds %d values with room for %d, want %d values and room for at most %d", len(rows), cap(rows), kept*stride, 2*kept*stride)
	}
	var got []int64
	collect := ijEmitFunc(func(out *types.Batch) error {
		for i := range out.Len() {
			got = append(got, out.Row(i)[3].Int())
		}
		return nil
	})
	// At the watermark (not late), it matches the right rows from 10 ms
	// before it on.
	wm := last - kept + 11
	b.Append(types.Insert, []types.Value{types.BigIntValue(key), types.TimestampValue(wm)})
	if err := op.Process(0, b, collect); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for ts := wm - 10; ts <= last; ts++ {
		want = append(want, ts)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the row matched right rows at %v, want %v", got, want)
	}
}

// checkRowPool checks the interval join's pool of row slices against its
// bounds: per input and class c at most (keys + retainSlack) >> c
// slices, each empty with room for exactly 1<<c rows, its values cleared
// (no references kept), none in class 0; and that a free slot keeps room
// for one row at most.
func checkRowPool(t *testing.T, op *intervalJoinOp) {
	t.Helper()
	for side := range op.pool {
		stride := op.lay[side].stride
		for c, p := range op.pool[side] {
			if limit := (op.keys.Len() + retainSlack) >> c; len(p) > limit {
				t.Fatalf("input %d class %d: %d pooled slices for %d keys, at most %d allowed", side, c, len(p), op.keys.Len(), limit)
			}
			if c == 0 && len(p) > 0 {
				t.Fatalf("input %d: %d pooled slices of room for one row (the free slots keep those)", side, len(p))
			}
			for _, r := range p {
				if len(r) != 0 || cap(r) != stride<<c {
					t.Fatalf("input %d class %d: a pooled slice of %d values with room for %d, want 0 and %d", side, c, len(r), cap(r), stride<<c)
				}
				for _, v := range r[:cap(r)] {
					if v != (types.Value{}) {
						t.Fatalf("input %d class %d: a pooled slice keeps value %v", side, c, v)
					}
				}
			}
		}
	}
	for s := range op.keys.Cap() {
		if op.keys.Used(s) {
			continue
		}
		for side, r := range op.rec(s).side {
			if stride := op.lay[side].stride; cap(r) >= 2*stride || len(r) != 0 {
				t.Fatalf("free slot %d keeps %d values of input %d with room for %d, want none and room for one row (%d) at most", s, len(r), side, cap(r), stride)
			}
		}
	}
}

// TestIntervalJoinPoolFollowsKeys lets the number of keys rise and fall
// (as W10's does between watermarks), keys holding one to a dozen rows,
// and checks after every watermark that the pool of row slices keeps
// within its share of the keys held, holds only emptied slices of its
// classes' sizes, and that freed slots keep no room (checkRowPool); at the
// end nothing is held. Randomized, the seed is printed.
func TestIntervalJoinPoolFollowsKeys(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 21))
	op := openKeyTimeIntervalJoin(t, -10)
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	b := types.NewBatch(2, 1000)
	ts, key := int64(0), int64(0)
	for range 200 {
		for range 1 + r.IntN(8) {
			b.Reset()
			for range 1 + r.IntN(1000) {
				// Mostly new keys; some rows on a recent key, which grows.
				k := key
				if r.IntN(4) == 0 && key > 0 {
					k = key - 1 - r.Int64N(min(key, 50))
				} else {
					key++
				}
				b.Append(types.Insert, []types.Value{types.BigIntValue(k), types.TimestampValue(ts)})
			}
			if err := op.Process(r.IntN(2), b, discard); err != nil {
				t.Fatal(err)
			}
			ts += int64(r.IntN(3))
		}
		if err := op.ProcessWatermark(ts-int64(r.IntN(5)), discard); err != nil {
			t.Fatal(err)
		}
		checkRowPool(t, op)
	}
	if err := op.ProcessWatermark(ts+100, discard); err != nil {
		t.Fatal(err)
	}
	if op.keys.Len() != 0 || op.mem != 0 {
		t.Fatalf("after the final watermark: %d keys, %d bytes", op.keys.Len(), op.mem)
	}
	checkRowPool(t, op)
}

// openKeyTimeIntervalJoin opens an inner interval join of two inputs of
// (BIGINT key, TIMESTAMP time), joining a left row with the right rows of
// the same key within [lower, 0] ms of its time, state in memory.
func openKeyTimeIntervalJoin(tb testing.TB, lower int64) *intervalJoinOp {
	tb.Helper()
	return openKeyTimeWidthIntervalJoin(tb, lower, 2)
}

// openKeyTimeWidthIntervalJoin is openKeyTimeIntervalJoin of rows of w
// columns: w 3 adds a BIGINT after the time (keyTimeRow), which the rows'
// layout keeps.
func openKeyTimeWidthIntervalJoin(tb testing.TB, lower int64, w int) *intervalJoinOp {
	tb.Helper()
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}[:w]
	spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: InnerJoin,
		Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
		Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
		LeftTime: 1, RightTime: 1, Lower: lower, Upper: 0}
	op := NewIntervalJoin(spec)().(*intervalJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		tb.Fatal(err)
	}
	return op
}

// TestIntervalJoinRecordLines checks that a key's record (ijKey) fills
// two 64-byte cache lines, the inline rows the second, so that the slab's
// pages (whose size is a multiple of 128) hold each record's rows' slices
// and queue times in one line.
func TestIntervalJoinRecordLines(t *testing.T) {
	if n := unsafe.Sizeof(ijKey{}); n != 128 {
		t.Fatalf("ijKey is %d bytes, want 128", n)
	}
	if off := unsafe.Offsetof(ijKey{}.inl); off != 64 {
		t.Fatalf("ijKey.inl is at byte %d, want 64", off)
	}
}

// heapRoom reports whether record k keeps room for rows outside itself
// (not its inline rooms): the room a free slot may keep for its next key,
// which retained counts.
func heapRoom(k *ijKey) bool {
	lo := uintptr(unsafe.Pointer(k))
	hi := lo + unsafe.Sizeof(*k)
	for _, r := range k.side {
		if cap(r) == 0 {
			continue
		}
		if p := uintptr(unsafe.Pointer(&r[:1][0])); p < lo || p >= hi {
			return true
		}
	}
	return false
}

// inRecord reports whether rows are held in record k itself.
func inRecord(k *ijKey, rows []types.Value) bool {
	if cap(rows) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(k))
	p := uintptr(unsafe.Pointer(&rows[:1][0]))
	return p >= lo && p < lo+unsafe.Sizeof(*k)
}

// TestIntervalJoinTrimKeepsNextSlots lets the number of keys rise and fall
// (as W10's does between watermarks) and checks after every watermark
// that the free slots keeping row slices are exactly those counted
// (retained), never more than the keys held plus retainSlack, and that a
// trim released the slices of the slots the next keys take last: the
// slots NextFree gives first keep theirs.
//
// The rows are (k, ts, v), which keep slices of their own; rows of (k,
// ts) keep theirs in the records (TestIntervalJoinFreesPeakMemory).
func TestIntervalJoinTrimKeepsNextSlots(t *testing.T) {
	onOneGoroutine(t)
	const w = 3
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 21))
	op := openKeyTimeWidthIntervalJoin(t, -10, w)
	discard := ijEmitFunc(func(*types.Batch) error { return nil })
	keeps := func(s int32) bool { return heapRoom(op.rec(s)) }
	b := types.NewBatch(w, 1000)
	ts, key := int64(0), int64(0)
	trimmed := 0
	for round := range 200 {
		for range 1 + r.IntN(8) {
			b.Reset()
			for range 1 + r.IntN(1000) {
				b.Append(types.Insert, keyTimeRow(w, key, ts))
				key++ // a new key each row: every row takes a slot
			}
			if err := op.Process(r.IntN(2), b, discard); err != nil {
				t.Fatal(err)
			}
			ts += int64(r.IntN(3))
		}
		if err := op.ProcessWatermark(ts-int64(r.IntN(5)), discard); err != nil {
			t.Fatal(err)
		}
		n := 0
		for s := range op.keys.Cap() {
			if !op.keys.Used(s) && keeps(s) {
				n++
			}
		}
		if n != op.retained {
			t.Fatalf("round %d: %d free slots keep row slices, %d counted", round, n, op.retained)
		}
		if n > op.keys.Len()+retainSlack {
			t.Fatalf("round %d: %d free slots keep row slices for %d keys", round, n, op.keys.Len())
		}
		// The slots that keep slices come first in the free list (here
		// only a trim leaves a slot bare: every key has one small row).
		seenBare := false
		for j := range op.keys.FreeLen() {
			s, _ := op.keys.NextFree(j)
			if !keeps(s) {
				seenBare = true
			} else if seenBare {
				t.Fatalf("round %d: free slot %d (the %d-th taken) keeps its slices behind one that does not", round, s, j)
			}
		}
		if seenBare {
			trimmed++
		}
	}
	if trimmed == 0 {
		t.Fatal("no trim happened")
	}
}

// TestIntervalJoinLayouts checks the rows' layouts (ijLayout): a row of
// (k INT, ts TIMESTAMP, v BIGINT) is stored as its meta value and v, the
// key and time made again for the output, the residual (here on both
// times, left out) and the records written at snapshots. Rows whose key or
// time is of another kind than the column's (a SMALLINT key, from step
// 200 on; TIMESTAMP_LTZ times) widen the input's layout to every column
// while keys hold rows, in memory, and on restore from records (the new
// subtasks start compact). Every output must equal the answer computed in
// Go, kinds included. Randomized: prints its seed.
func TestIntervalJoinLayouts(t *testing.T) {
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindInt, types.KindTimestamp, types.KindBigInt}
	tsDiffer, err := expr.NewCompare("<>", expr.NewColumn(1, types.Timestamp, "lts"), expr.NewColumn(4, types.Timestamp, "rts"))
	if err != nil {
		t.Fatal(err)
	}
	// Key 3 is SMALLINT from step 200 on (4 before), on both inputs.
	smallKey := func(step int, row []types.Value) {
		if row[0].Int() == 3 {
			if step < 200 {
				row[0] = types.IntValue(4)
			} else {
				row[0] = types.SmallIntValue(3)
			}
		}
	}
	cases := []struct {
		name      string
		typ       JoinType
		par, par2 int
		store     bool
		budget    int64
		residual  bool
		ltz       bool // some times TIMESTAMP_LTZ from step 250 on
		small     bool // smallKey
		wide      bool // the layouts end wide
	}{
		{name: "compact-residual-memory", typ: FullOuterJoin, par: 1, par2: 1, residual: true},
		{name: "compact-residual-store", typ: LeftOuterJoin, par: 2, par2: 3, store: true, budget: 64 << 20, residual: true},
		{name: "widen-memory", typ: FullOuterJoin, par: 1, par2: 1, ltz: true, small: true, wide: true},
		{name: "widen-memory-p3", typ: InnerJoin, par: 3, par2: 3, ltz: true, small: true, wide: true},
		{name: "widen-store", typ: FullOuterJoin, par: 2, par2: 3, store: true, budget: 64 << 20, small: true, wide: true},
		{name: "widen-spill", typ: RightOuterJoin, par: 3, par2: 1, store: true, budget: 1, small: true, wide: true},
	}
	for ci, c := range cases {
		if raceEnabled && c.name != "compact-residual-store" && c.name != "widen-memory-p3" && c.name != "widen-spill" {
			// Under -race (the operators on the test's goroutine) one
			// case of each path: compact on a store, widening in memory
			// and while spilling (CI runs all without -race).
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			s := seed + uint64(ci)
			spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: c.typ,
				Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
				Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
				LeftTime: 1, RightTime: 1, Lower: -5, Upper: 20}
			opts := ijRandOpts{keys: 8, maxBatch: 30, steps: 600}
			if c.residual {
				spec.Residual = tsDiffer
				opts.residual = func(l, r []types.Value) bool { return l[1].Int() != r[1].Int() }
			}
			ltz := rand.New(rand.NewPCG(s, 11))
			opts.mutate = func(step int, row []types.Value) {
				if c.small {
					smallKey(step, row)
				}
				if c.ltz && step >= 250 && ltz.IntN(10) == 0 {
					row[1] = types.TimestampLTZValue(row[1].Int())
				}
			}
			dir := ""
			if c.store {
				dir = t.TempDir()
			}
			out := &ijCollect{rows: map[string]int{}}
			h := newIJHarness(t, spec, c.par, c.budget, dir, nil, out)
			for _, op := range h.ops {
				if op.lay[0].stride != 2 || op.lay[1].stride != 2 {
					t.Fatalf("rows of (k, ts, v) take %d and %d values, want 2 (meta, v)", op.lay[0].stride, op.lay[1].stride)
				}
			}
			widened := [2]bool{}
			runRandomIntervalJoinOpts(t, s, h, func(step int) {
				if c.store && (step == 300 || step == 450) {
					par := c.par2
					if step == 450 {
						par = c.par
					}
					h.snapshotRestore(par)
				}
				for _, op := range h.ops {
					for side := range 2 {
						widened[side] = widened[side] || op.lay[side].stride == 4
					}
				}
			}, opts)
			if widened != [2]bool{c.wide, c.wide} {
				t.Fatalf("seed %d: inputs widened %v, want both %v", s, widened, c.wide)
			}
		})
	}
}

// TestIntervalJoinRecordBytes checks that the records written at
// checkpoints keep their format whatever the rows' layout: per key, the
// version byte, then per input the row count and each row's matched flag
// and every column's value in time order, as encoded here in Go from the
// rows fed (a row is matched when a row of the other input of its key is
// within the bounds; no watermark comes). Rows of (k BIGINT, ts TIMESTAMP,
// v BIGINT), out of order; then again after a TIMESTAMP_LTZ time widened
// the left input. Randomized: prints its seed.
func TestIntervalJoinRecordBytes(t *testing.T) {
	seed := testseed.Seed(t)
	kinds := []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt}
	for _, widen := range []bool{false, true} {
		r := rand.New(rand.NewPCG(seed, 12))
		spec := IntervalJoinSpec{JoinSpec: JoinSpec{Type: InnerJoin,
			Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
			Right: JoinSide{Keys: []int{0}, Kinds: kinds}},
			LeftTime: 1, RightTime: 1, Lower: -5, Upper: 5}
		op := NewIntervalJoin(spec)().(*intervalJoinOp)
		if err := op.Open(&OpContext{ID: "ij", Name: "IntervalJoin", Parallelism: 1, MaxParallelism: ijMaxPar}); err != nil {
			t.Fatal(err)
		}
		discard := ijEmitFunc(func(*types.Batch) error { return nil })
		var fed [2][][]types.Value
		ltz := false
		b := types.NewBatch(3, 8)
		for i := range 400 {
			side := r.IntN(2)
			row := []types.Value{types.BigIntValue(int64(r.IntN(10))), types.TimestampValue(int64(r.IntN(200))), types.BigIntValue(int64(i))}
			if widen && side == 0 && i >= 200 && !ltz {
				row[1] = types.TimestampLTZValue(row[1].Int())
				ltz = true
			}
			fed[side] = append(fed[side], row)
			b.Reset()
			b.Append(types.Insert, row)
			if err := op.Process(side, b, discard); err != nil {
				t.Fatal(err)
			}
		}
		if want := [2]int{2, 2}; widen {
			if op.lay[0].stride != 4 || op.lay[1].stride != 2 {
				t.Fatalf("strides %d and %d, want 4 (widened) and 2", op.lay[0].stride, op.lay[1].stride)
			}
		} else if [2]int{op.lay[0].stride, op.lay[1].stride} != want {
			t.Fatalf("strides %d and %d, want 2 and 2", op.lay[0].stride, op.lay[1].stride)
		}
		for key := range int64(10) {
			want := []byte{ijoinRecVersion}
			for side := range 2 {
				var rows [][]types.Value
				for _, row := range fed[side] {
					if row[0].Int() == key {
						rows = append(rows, row)
					}
				}
				sort.SliceStable(rows, func(i, j int) bool { return rows[i][1].Int() < rows[j][1].Int() })
				want = binary.AppendUvarint(want, uint64(len(rows)))
				for _, row := range rows {
					f := byte(0)
					for _, o := range fed[1-side] {
						if d := row[1].Int() - o[1].Int(); o[0].Int() == key && (side == 0 && -d >= spec.Lower && -d <= spec.Upper || side == 1 && d >= spec.Lower && d <= spec.Upper) {
							f = 1
						}
					}
					want = append(want, f)
					for _, v := range row {
						want = state.AppendValue(want, v)
					}
				}
			}
			s, ok := op.keys.Find([]types.Value{types.BigIntValue(key)})
			if !ok {
				t.Fatalf("seed %d: key %d not held", seed, key)
			}
			if got := op.AppendRecord(nil, s); !bytes.Equal(got, want) {
				t.Fatalf("seed %d, widen %v: key %d's record\n%x\nwant\n%x", seed, widen, key, got, want)
			}
		}
	}
}

// TestIntervalJoinInlineRows checks where rows of (k, ts) live: a key's
// single row of an input in its record (ijKey.inl), its rows in a slice of
// their own once it holds two, and again in the record for the next key
// of a slot after the watermark expires them; and the output, against the
// count of pairs within the bounds computed here.
func TestIntervalJoinInlineRows(t *testing.T) {
	op := openKeyTimeIntervalJoin(t, -10)
	var got int
	count := ijEmitFunc(func(out *types.Batch) error { got += out.Len(); return nil })
	b := types.NewBatch(2, 1024)
	feed := func(side int, rows [][2]int64) {
		b.Reset()
		for _, r := range rows {
			b.Append(types.Insert, []types.Value{types.BigIntValue(r[0]), types.TimestampValue(r[1])})
		}
		if err := op.Process(side, b, count); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string) {
		t.Helper()
		for s := range op.keys.Cap() {
			k := op.rec(s)
			for side, r := range k.side {
				n := len(r) / op.lay[side].stride
				// One row, or room for one, is in the record; two or
				// more are not (no key here shrinks back to one).
				if want := n <= 1 && cap(r) > 0; inRecord(k, r) != want {
					t.Fatalf("%s: slot %d (used %v) input %d: %d rows, room for %d, in the record %v", step, s, op.keys.Used(s), side, n, cap(r), !want)
				}
			}
		}
	}
	for round := range int64(3) {
		base := 1000 * round
		var left, right, more [][2]int64
		for key := range int64(1000) {
			left = append(left, [2]int64{key, base + 100})
			if key < 500 {
				right = append(right, [2]int64{key, base + 95}) // matches the left row at 100
			}
			if key < 100 {
				more = append(more, [2]int64{key, base + 101}) // a second left row; matches nothing
			}
		}
		got = 0
		feed(0, left)
		check("one row a key")
		for key := range int64(1000) {
			s, ok := op.keys.Find([]types.Value{types.BigIntValue(key)})
			if !ok || !inRecord(op.rec(s), op.rec(s).side[0]) {
				t.Fatalf("round %d: key %d's row is not in its record (found %v)", round, key, ok)
			}
		}
		feed(0, more)
		feed(1, right)
		check("two left rows on 100 keys")
		// Right rows at 95 match left rows in [95, 105]: keys below 100
		// have two (100 and 101), the others below 500 one.
		if want := 100*2 + 400; got != want {
			t.Fatalf("round %d: %d rows joined, want %d", round, got, want)
		}
		if err := op.ProcessWatermark(base+1000, count); err != nil {
			t.Fatal(err)
		}
		if op.keys.Len() != 0 || op.retained != 0 {
			t.Fatalf("round %d: %d keys and %d slots with room of their own left", round, op.keys.Len(), op.retained)
		}
		check("expired")
		checkRowPool(t, op)
	}
}
