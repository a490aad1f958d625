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
// a separate allocation and a cache miss after the one before. The probe
// table holds, per join key, a run {first row, number of rows} of one
// flat slice of all the side's rows, w values each, so that a probe
// costs two cache misses: the run and the row. A side whose keys are
// dense integers (their span at most probeDenseSpan times their number,
// as serial ids are) has its runs in an array indexed by key - base, with
// no hashing and no key to compare; other integer keys have them in an
// open-addressing table. Counts other than 1 (duplicate rows of a side
// without a unique key) are in their own slice, nil when every count is
// 1.
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
	w int
	// dense, for keys base to base+len(dense)-1: the run of key k is
	// dense[k-base] (n == 0: no row).
	dense []probeRun
	base  int64
	// slots, if dense is nil: an open-addressing table (linear probing,
	// at most half full) of the runs by key; shift is 64 - log2(len).
	slots []probeSlot
	shift uint
	vals  []types.Value // the rows, w values each, a key's rows together
	cnts  []int64       // per row its count; nil when every count is 1
	keys  int           // the number of keys
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
// largest minus the smallest, plus one) may be for the dense array: it
// then takes at most 8*probeDenseSpan bytes a key, as much as the
// hashed slots (16 bytes each, at most half full) take at worst.
const probeDenseSpan = 4

// probeChunk is how many arriving rows the probe resolves at a time: it
// looks up their runs, then reads their rows' first values, then joins
// them, so that the cache misses of different rows overlap.
const probeChunk = 64

// home returns the slot where k's probe starts (Fibonacci hashing).
func (t *probeTable) home(k int64) int {
	return int((uint64(k) * 0x9e3779b97f4a7c15) >> t.shift)
}

// find returns key k's run (n == 0 if the side has no row of k).
func (t *probeTable) find(k int64) probeRun {
	if t.dense != nil {
		if i := uint64(k) - uint64(t.base); i < uint64(len(t.dense)) {
			return t.dense[i]
		}
		return probeRun{}
	}
	mask := len(t.slots) - 1
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
	return int64(cap(t.dense))*8 + int64(cap(t.slots))*16 + int64(cap(t.vals))*32 + int64(cap(t.cnts))*8
}

// probeTableBytes returns what buildProbe's table of s will take at most
// (its counts included): the side's rows and keys are known, the span of
// the keys is not, so its runs are taken at the hashed table's size.
func (s *joinRows) probeTableBytes() int64 {
	keys := int64(s.keys.Len())
	slots := int64(1) << bits.Len64(uint64(2*keys+1))
	return slots*16 + s.rows*int64(s.w)*32 + s.rows*8
}

// probeable reports whether a probe table may stand for the side's rows
// (see probeTable): one integer-stored join key, every row in memory
// (never spilled: no key in the store only, nor holding blind writes),
// match counts not tracked, no TTL. The join adds its own conditions
// (retention, the budget).
func (s *joinRows) probeable() bool {
	return s.keys.IntKeyed() && !s.track && !s.st.Backed() && !s.st.HasTTL()
}

// buildProbe makes the side's probe table from its rows in memory.
func (s *joinRows) buildProbe() {
	keys := s.keys.Len()
	t := &probeTable{w: s.w, keys: keys, vals: make([]types.Value, 0, int(s.rows)*s.w)}
	lo, hi := int64(0), int64(-1)
	for slot := range s.keys.Cap() {
		if !s.keys.Used(slot) {
			continue
		}
		k := s.keys.IntKey(slot)
		if hi < lo {
			lo, hi = k, k
		} else {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	// d is the span less one (it may not overflow).
	if d := uint64(hi) - uint64(lo); keys > 0 && d < 1<<31 && (d+1)/probeDenseSpan < uint64(keys) {
		t.dense, t.base = make([]probeRun, d+1), lo
	} else {
		size := 64
		for size < 2*keys+2 {
			size <<= 1
		}
		t.slots = make([]probeSlot, size)
		t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	}
	for slot := range s.keys.Cap() {
		if !s.keys.Used(slot) {
			continue
		}
		l := s.list(slot)
		run := probeRun{off: int32(len(t.vals) / s.w), n: int32(l.n())}
		for j := range l.n() {
			t.vals = append(t.vals, l.row(j, s.w)...)
			if c := l.metaAt(j).cnt; c != 1 && t.cnts == nil {
				t.cnts = make([]int64, int(run.off)+j, s.rows)
				for i := range t.cnts {
					t.cnts[i] = 1
				}
			}
			if t.cnts != nil {
				t.cnts = append(t.cnts, l.metaAt(j).cnt)
			}
		}
		if run.n == 0 {
			continue
		}
		k := s.keys.IntKey(slot)
		if t.dense != nil {
			t.dense[uint64(k)-uint64(t.base)] = run
			continue
		}
		mask := len(t.slots) - 1
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
// it may stand for its rows: see probeTable. A table that would not fit
// in the state budget with the state is not built.
func (o *joinOp) probeAfterEnd(side int) {
	s := o.sides[side]
	if o.noProbe || o.retain[side] != nil || !s.probeable() {
		return
	}
	if s.st.Persisted() {
		used := s.probeTableBytes() + o.sides[0].bytes() + o.sides[1].bytes()
		if used > o.budget {
			s.probeSkipped++
			return
		}
	}
	s.buildProbe()
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
		for i := from; i < to; i++ {
			if v := b.Vals[i*b.Width+col]; state.IntStored(v.Kind()) {
				runs[i-from] = pt.find(v.Int())
			} else {
				runs[i-from] = probeRun{} // NULL: no match
			}
		}
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
