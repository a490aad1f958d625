package exec

import (
	"math/bits"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// A probe table is a read-only copy of an ended join side's rows, laid
// out for the other side's probes (W9's steady state: every fact row
// probes the dimension's rows once the dimension input ended). In the
// regular state a probe reads the key's index entry (state.IntTable),
// then its rowList in the slab, then the list's metadata and values, each
// a separate allocation and a cache miss after the one before. A probe
// table holds the side's rows in one flat slice, w values each, in one of
// four layouts (probeLayout):
//
//   - a side with one row per key, each of count 1 (a unique key within
//     the join key, W9's dimension), has its rows in place: key k's row
//     is row k - base when the keys are dense (their span at most
//     probeDenseSpan times their number, as serial ids are), else in an
//     open-addressing table of rows (linear probing by the key, at most
//     half full); a place whose key column is NULL is empty. A probe
//     costs one cache miss, the row.
//   - any other side has its rows grouped by key, and per key a run
//     {first row, number of rows}, in an array indexed by k - base when
//     the keys are dense, else in an open-addressing table of runs. A
//     probe costs two misses, the run and the row. Counts other than 1
//     (duplicate rows of a side without a unique key) are in their own
//     slice, nil when every count is 1.
//
// It is a cache derived from the regular state, which stays the state's
// source of truth (snapshots, spills, restores): it is never written to
// the store, and any change to the side's rows drops it (joinRows.unprobe).
// The join builds it at the end of the side's input (EndInput) when
// nothing else may change the rows: the side's rows are all in memory (not
// spilled), its rows do not count their matches (an outer side, whose
// match counts the probes update), no state TTL and no join retention
// expire them, its join key is one integer-stored column, and the table
// fits in the state budget with the state. After a restore the end of the
// input comes again (as a finished source's does) and builds it anew.
type probeTable struct {
	probeLayout
	w, kc int           // the row width and the key column
	vals  []types.Value // the rows, w values each
	cnts  []int64       // per row its count (runs only); nil when every count is 1
	runs  []probeRun    // dense runs: key k's is runs[k-base]
	slots []probeSlot   // hashed runs
}

// probeLayout is how a probe table finds a key's rows (see probeTable).
type probeLayout struct {
	inPlace bool  // rows in place, else runs
	dense   bool  // indexed by key - base, else hashed
	base    int64 // the smallest key, if dense
	size    int   // places (rows in place) or runs or slots
	shift   uint  // 64 - log2(size), if hashed
	keys    int   // the number of keys
	rows    int   // the number of rows
}

// probeRun is a key's rows in a probeTable: rows off to off+n-1.
type probeRun struct {
	off, n int32
}

// probeSlot is a slot of a probeTable's hashed runs (n == 0: empty).
type probeSlot struct {
	key int64
	probeRun
}

// probeDenseSpan is how many times the number of keys their span (the
// largest minus the smallest, plus one) may be for a dense layout: its
// array then has up to probeDenseSpan places a key, as a hashed table (at
// most half full, doubled as it grows) has at worst.
const probeDenseSpan = 4

// probeChunk is how many arriving rows the probe resolves at a time: it
// looks up their rows, then reads their matches' first values, then
// joins them, so that the cache misses of different rows overlap.
const probeChunk = 64

// bytes returns the memory of a table of layout l for rows of w values.
func (l probeLayout) bytes(w int) int64 {
	if l.inPlace {
		return int64(l.size) * int64(w) * 32
	}
	n := int64(l.rows)*int64(w)*32 + int64(l.rows)*8 // counts at worst
	if l.dense {
		return n + int64(l.size)*8
	}
	return n + int64(l.size)*16
}

// home returns the place where k's probe starts (Fibonacci hashing).
func (l *probeLayout) home(k int64) int {
	return int((uint64(k) * 0x9e3779b97f4a7c15) >> l.shift)
}

// find returns key k's rows (n == 0 if the side has no row of k).
func (t *probeTable) find(k int64) probeRun {
	switch {
	case t.inPlace && t.dense:
		if i := uint64(k) - uint64(t.base); i < uint64(t.size) && t.vals[int(i)*t.w+t.kc].Kind() != types.KindNull {
			return probeRun{off: int32(i), n: 1}
		}
		return probeRun{}
	case t.inPlace:
		mask := t.size - 1
		for i := t.home(k); ; i = (i + 1) & mask {
			v := t.vals[i*t.w+t.kc]
			if v.Kind() == types.KindNull {
				return probeRun{}
			}
			if v.Int() == k {
				return probeRun{off: int32(i), n: 1}
			}
		}
	case t.dense:
		if i := uint64(k) - uint64(t.base); i < uint64(t.size) {
			return t.runs[i]
		}
		return probeRun{}
	}
	mask := t.size - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.n == 0 || s.key == k {
			return s.probeRun
		}
	}
}

// row returns row j.
func (t *probeTable) row(j int32) []types.Value {
	o := int(j) * t.w
	return t.vals[o : o+t.w : o+t.w]
}

// count returns row j's count.
func (t *probeTable) count(j int32) int64 {
	if t.cnts == nil {
		return 1
	}
	return t.cnts[j]
}

// bytes returns the table's memory.
func (t *probeTable) bytes() int64 {
	return int64(cap(t.runs))*8 + int64(cap(t.slots))*16 + int64(cap(t.vals))*32 + int64(cap(t.cnts))*8
}

// probeable reports whether a probe table may stand for the side's rows
// (see probeTable): one integer-stored join key, every row in memory
// (never spilled: no key in the store only, nor holding blind writes),
// match counts not tracked, no TTL. The join adds its own conditions
// (retention, the budget).
func (s *joinRows) probeable() bool {
	return s.keys.IntKeyed() && !s.track && !s.st.Backed() && !s.st.HasTTL()
}

// probeLayout returns the layout of a probe table of the side's rows in
// memory (see probeTable).
func (s *joinRows) probeLayout() probeLayout {
	l := probeLayout{keys: s.keys.Len(), rows: int(s.rows), inPlace: true}
	lo, hi := int64(0), int64(-1)
	for slot := range s.keys.Cap() {
		if !s.keys.Used(slot) {
			continue
		}
		if ls := s.list(slot); ls.n() != 1 || ls.metaAt(0).cnt != 1 {
			l.inPlace = false
		}
		k := s.keys.IntKey(slot)
		if hi < lo {
			lo, hi = k, k
		} else {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	// d is the span less one (it may not overflow).
	if d := uint64(hi) - uint64(lo); l.keys > 0 && d < 1<<31 && (d+1)/probeDenseSpan < uint64(l.keys) {
		l.dense, l.base, l.size = true, lo, int(d+1)
		return l
	}
	l.size = 64
	for l.size < 2*l.keys+2 {
		l.size <<= 1
	}
	l.shift = uint(64 - bits.TrailingZeros(uint(l.size)))
	return l
}

// buildProbe makes the side's probe table of layout l from its rows in
// memory.
func (s *joinRows) buildProbe(l probeLayout) {
	t := &probeTable{probeLayout: l, w: s.w, kc: s.spec.Keys[0]}
	if l.inPlace {
		t.vals = make([]types.Value, l.size*s.w)
	} else {
		t.vals = make([]types.Value, 0, l.rows*s.w)
		if l.dense {
			t.runs = make([]probeRun, l.size)
		} else {
			t.slots = make([]probeSlot, l.size)
		}
	}
	for slot := range s.keys.Cap() {
		if !s.keys.Used(slot) {
			continue
		}
		ls, k := s.list(slot), s.keys.IntKey(slot)
		if l.inPlace {
			i := int(uint64(k) - uint64(l.base))
			if !l.dense {
				mask := l.size - 1
				for i = t.home(k); t.vals[i*s.w+t.kc].Kind() != types.KindNull; i = (i + 1) & mask {
				}
			}
			copy(t.vals[i*s.w:(i+1)*s.w], ls.row(0, s.w))
			continue
		}
		run := probeRun{off: int32(len(t.vals) / s.w), n: int32(ls.n())}
		for j := range ls.n() {
			t.vals = append(t.vals, ls.row(j, s.w)...)
			if c := ls.metaAt(j).cnt; c != 1 && t.cnts == nil {
				t.cnts = make([]int64, int(run.off)+j, l.rows)
				for i := range t.cnts {
					t.cnts[i] = 1
				}
			}
			if t.cnts != nil {
				t.cnts = append(t.cnts, ls.metaAt(j).cnt)
			}
		}
		if run.n == 0 {
			continue
		}
		if l.dense {
			t.runs[uint64(k)-uint64(l.base)] = run
			continue
		}
		mask := l.size - 1
		i := t.home(k)
		for t.slots[i].n != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = probeSlot{key: k, probeRun: run}
	}
	s.pt = t
}

// unprobe drops the side's probe table: its rows are about to change.
func (s *joinRows) unprobe() { s.pt = nil }

// probeAfterEnd builds the probe table of side (whose input ended) when
// it may stand for its rows: see probeTable; retained says that join
// retention drops the side's rows. A table that would not fit in the
// state budget with the state is not built.
func (o *joinState) probeAfterEnd(side int, retained bool) {
	s := o.sides[side]
	if o.noProbe || retained || !s.probeable() {
		return
	}
	l := s.probeLayout()
	if s.st.Persisted() {
		if l.bytes(s.w)+o.sides[0].bytes()+o.sides[1].bytes() > o.budget {
			s.probeSkipped++
			return
		}
	}
	s.buildProbe(l)
}

// findRows sets runs[j] to the run of the key in column col of b's row
// from+j (none for NULL), for a chunk's rows at once.
func (pt *probeTable) findRows(runs []probeRun, b *types.Batch, col, from int) {
	for j := range runs {
		if v := b.Vals[(from+j)*b.Width+col]; state.IntStored(v.Kind()) {
			runs[j] = pt.find(v.Int())
		} else {
			runs[j] = probeRun{} // NULL: no match
		}
	}
}

// processProbe is Process for rows of input once the other side has a
// probe table: they are matched with its rows and never kept (the other
// input ended). The rows of a chunk are joined in three passes: their
// runs are looked up, then their matches' first values read, then the
// joined rows emitted; the passes' reads of different rows do not depend
// on each other, so their cache misses overlap.
func (o *joinOp) processProbe(input int, b *types.Batch, out Emitter) error {
	me, other := o.sides[input], o.sides[1-input]
	pt, col, outer := other.pt, me.spec.Keys[0], me.track
	var runs [probeChunk]probeRun
	sink := 0
	for from := 0; from < b.Len(); from += probeChunk {
		to := min(from+probeChunk, b.Len())
		pt.findRows(runs[:to-from], b, col, from)
		for _, r := range runs[:to-from] {
			if r.n > 0 {
				sink += int(pt.vals[int(r.off)*pt.w].Kind())
			}
		}
		for i := from; i < to; i++ {
			row, kind, r := b.Row(i), b.Kinds[i], runs[i-from]
			var matched int64
			for j := r.off; j < r.off+r.n; j++ {
				m := pt.row(j)
				ok, err := o.matches(input, row, m)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				c := pt.count(j)
				matched += c
				if err := o.emitRow(kind, input, row, m, c, out); err != nil {
					return err
				}
			}
			if outer && matched == 0 {
				if err := o.emitRow(kind, input, row, nil, 1, out); err != nil {
					return err
				}
			}
		}
		other.probed += int64(to - from)
	}
	other.warmSink += sink
	return o.flush(out)
}

// bytes returns the memory the side holds, its probe table's included,
// and tells its Records the part they do not count (the rows).
func (s *joinRows) bytes() int64 {
	s.st.SetExtraBytes(s.rows*s.rowBytes + s.probeBytes())
	return s.st.Bytes()
}

// probeBytes returns the memory of the side's probe table (0 if none).
func (s *joinRows) probeBytes() int64 {
	if s.pt == nil {
		return 0
	}
	return s.pt.bytes()
}

// processProbe is Process for left rows once the right input ended and
// its rows have a probe table (the left rows are then never kept): a
// left row goes out if the right rows of its key that match it count
// more than zero (semi) or none (anti). The rows of a chunk are looked up
// first, so that their cache misses overlap (joinOp.processProbe).
func (o *semiJoinOp) processProbe(b *types.Batch, out Emitter) error {
	right := o.sides[1]
	pt, col := right.pt, o.sides[0].spec.Keys[0]
	var runs [probeChunk]probeRun
	for from := 0; from < b.Len(); from += probeChunk {
		to := min(from+probeChunk, b.Len())
		pt.findRows(runs[:to-from], b, col, from)
		for i := from; i < to; i++ {
			row, r := b.Row(i), runs[i-from]
			var matched int64
			for j := r.off; j < r.off+r.n; j++ {
				ok, err := o.matches(row, pt.row(j))
				if err != nil {
					return err
				}
				if ok {
					matched += pt.count(j)
				}
			}
			if (matched > 0) != o.spec.Anti {
				if err := o.emit(b.Kinds[i], row, 1, out); err != nil {
					return err
				}
			}
		}
		right.probed += int64(to - from)
	}
	return o.flush(out)
}
