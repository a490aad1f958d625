package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// The rows a regular, semi or anti join keeps of each input live in typed
// memory (joinRows): a state.KeyIndex gives each join key a slot, and the
// slot's rowList holds the side's rows of that key, each with its count
// and, for a side whose matches are counted, its match count. A row is
// found again (a retraction, a count to raise, a unique key's new row) by
// a hash of its identity (its unique key, or the whole row): a short list
// is scanned, a longer one (more than idxMinRows rows) has an
// open-addressing table of its row numbers by identity hash, so finding a
// row costs the same whatever the number of rows of its key.
//
// state.Records writes the changed keys back at checkpoints, spills them
// past the state budget and expires them with the state TTL. A key's rows
// are stored in parts of 1<<joinChunkShift rows (state.PartedSource):
// part 0 under the key with the number of rows, part p under the key and
// p; a list marks the part of each row it changes (dirty), and a snapshot
// rewrites part 0 and the marked parts only, so its cost follows the rows
// that changed, not the rows of the keys that changed.

// joinStateName is the name of a join side's records, in the side's own
// key space (the operator id with joinSpaceSuffix). Version 3: version 2
// ("rows.v2") stored a key's rows as one record, and Weir before it kept
// them in keyed tables "left" and "right" of the operator's space; a
// checkpoint holding either is refused (refuseOldLayout).
const joinStateName = "rows.v3"

// joinOldStateName is version 2's name, refused at restore.
const joinOldStateName = "rows.v2"

// joinChunkShift gives the rows of a stored part: 1<<joinChunkShift.
const joinChunkShift = 6

// idxMinRows is the longest list found by a scan; a longer one has a hash
// table. A scan of the identity hashes, side by side in memory, costs less
// than the table's dependent cache misses up to about this length
// (BenchmarkJoinOperator: a table from 8 rows on was 7% slower on W9's
// shape, from 64 rows on as fast as the scan).
const idxMinRows = 64

// joinSpaceSuffix returns the suffix of the operator id under which side
// (0 left, 1 right) keeps its records: each side's records are its key
// space's only state, so a snapshot may replace them whole.
func joinSpaceSuffix(side int) string { return [...]string{"/L", "/R"}[side] }

// joinRecordVersion leads every stored join record (part 0 of a key's
// rows).
const joinRecordVersion = 2

// rowList is one join key's rows of one side: per row its w values, its
// identity hash and count (side by side: a row found by its hash has its
// count in the same cache line) and its match count (assoc, when
// tracked). The first rowBlockRows rows are in head, whose slices double
// as rows come; the rows after them are in more, blocks of rowBlockRows
// rows each made whole at once. So a key of many rows grows without
// copying its rows (doubling copied them all at each step, and left up
// to half of its memory idle), at an allocation per rowBlockRows rows.
type rowList struct {
	// delta says the list is a delta record (state.DeltaSource): not
	// the key's rows but the writes to them since the last snapshot, in
	// order, each a row with its count +1 (inserted, with its match
	// count) or -1 (taken out). It is next to the head's vals and meta:
	// a probe reads the three (find, eachMatch, warm).
	delta bool
	head  rowBlock
	// more holds the rows from rowBlockRows on: block b has rows
	// (b+1)*rowBlockRows to (b+2)*rowBlockRows-1. Every block but the
	// last is full, and the last holds a row. Blocks past len(more) are
	// empty, kept for the rows to come until the list is reset.
	more []rowBlock
	// idx is nil for a list of up to idxMinRows rows; otherwise an
	// open-addressing table (linear probing, at most half full) of row
	// numbers by identity hash, -1 when empty.
	idx []int32
	// dirty has a bit per stored part whose rows changed since the last
	// snapshot.
	dirty []uint64
	// want is the number of rows a load still expects from the key's
	// stored parts.
	want int
}

// rowBlock is up to rowBlockRows rows of a rowList: their values, w a
// row, their metadata and, when tracked, their match counts.
type rowBlock struct {
	vals  []types.Value
	meta  []rowMeta
	assoc []int64
}

// rowBlockShift gives the rows of a block: rowBlockRows.
const (
	rowBlockShift = 6
	rowBlockRows  = 1 << rowBlockShift
)

// A list without a hash table is its head block (indexOf scans it).
var _ [rowBlockRows - idxMinRows]struct{}

// rowMeta is a kept row's identity hash and count.
type rowMeta struct {
	hash uint64
	cnt  int64
}

// n returns the number of rows. A list that its head holds is told by
// the head alone: a probe reads the head's slices (and warm reads them
// ahead), not more, which lies in another cache line.
func (l *rowList) n() int {
	if n := len(l.head.meta); n < rowBlockRows || len(l.more) == 0 {
		return n
	}
	return len(l.more)<<rowBlockShift + len(l.more[len(l.more)-1].meta)
}

// block returns the block of row j and j's place in it.
func (l *rowList) block(j int) (*rowBlock, int) {
	if j < rowBlockRows {
		return &l.head, j
	}
	return &l.more[j>>rowBlockShift-1], j & (rowBlockRows - 1)
}

// row returns row j of a list of w-wide rows.
func (l *rowList) row(j, w int) []types.Value {
	b, k := l.block(j)
	return b.vals[k*w : (k+1)*w : (k+1)*w]
}

// metaAt returns row j's hash and count.
func (l *rowList) metaAt(j int) *rowMeta {
	b, k := l.block(j)
	return &b.meta[k]
}

// assocAt returns row j's match count (a tracked list's).
func (l *rowList) assocAt(j int) *int64 {
	b, k := l.block(j)
	return &b.assoc[k]
}

// empty empties the block, keeping its memory.
func (b *rowBlock) empty() {
	clear(b.vals) // they may hold strings
	b.vals, b.meta, b.assoc = b.vals[:0], b.meta[:0], b.assoc[:0]
}

// reset empties the list, keeping its head block's memory for the
// slot's next key and letting the other blocks go (a slot whose key had
// many rows would hold them idle).
func (l *rowList) reset() {
	l.head.empty()
	l.more = nil
	l.idx, l.want, l.delta = nil, 0, false
	clear(l.dirty)
}

// mark notes that row j changed: its part is rewritten at the next
// snapshot.
func (l *rowList) mark(j int, shift uint) {
	c := j >> shift
	w := c >> 6
	for w >= len(l.dirty) {
		l.dirty = append(l.dirty, 0)
	}
	l.dirty[w] |= 1 << (c & 63)
}

// idxBuild makes the table for the list's rows, at most half full.
func (l *rowList) idxBuild() {
	size := 32
	for size < 2*l.n()+2 {
		size <<= 1
	}
	if cap(l.idx) >= size {
		l.idx = l.idx[:size]
	} else {
		l.idx = make([]int32, size)
	}
	for i := range l.idx {
		l.idx[i] = -1
	}
	for j := range l.n() {
		l.idxPut(int32(j))
	}
}

// idxPut enters row j into the table.
func (l *rowList) idxPut(j int32) {
	mask := len(l.idx) - 1
	p := int(l.metaAt(int(j)).hash) & mask
	for l.idx[p] >= 0 {
		p = (p + 1) & mask
	}
	l.idx[p] = j
}

// idxPos returns where the table holds row j.
func (l *rowList) idxPos(j int32) int {
	mask := len(l.idx) - 1
	p := int(l.metaAt(int(j)).hash) & mask
	for l.idx[p] != j {
		p = (p + 1) & mask
	}
	return p
}

// idxDel empties position p of the table, shifting back the entries after
// it that linear probing would no longer reach.
func (l *rowList) idxDel(p int) {
	mask := len(l.idx) - 1
	for {
		l.idx[p] = -1
		q := p
		for {
			q = (q + 1) & mask
			e := l.idx[q]
			if e < 0 {
				return
			}
			// e may fill the hole if the hole lies between its home and q.
			if home := int(l.metaAt(int(e)).hash) & mask; (q-p)&mask <= (q-home)&mask {
				l.idx[p] = e
				p = q
				break
			}
		}
	}
}

// drop removes row j (the last row takes its place), marking the parts
// that change.
func (l *rowList) drop(j, w int, shift uint) {
	last := l.n() - 1
	if l.idx != nil {
		l.idxDel(l.idxPos(int32(j)))
		if j != last {
			l.idx[l.idxPos(int32(last))] = int32(j)
		}
	}
	l.mark(j, shift)
	l.mark(last, shift)
	lb, k := l.block(last)
	if j != last {
		b, i := l.block(j)
		copy(b.vals[i*w:(i+1)*w], lb.vals[k*w:(k+1)*w])
		b.meta[i] = lb.meta[k]
		if b.assoc != nil {
			b.assoc[i] = lb.assoc[k]
		}
	}
	clear(lb.vals[k*w:])
	lb.vals, lb.meta = lb.vals[:k*w], lb.meta[:k]
	if lb.assoc != nil {
		lb.assoc = lb.assoc[:k]
	}
	if k == 0 && lb != &l.head {
		l.more = l.more[:len(l.more)-1] // kept for the rows to come
	}
}

// add appends row with its counts (not marking it: a load adds rows that
// are stored).
func (l *rowList) add(row []types.Value, cnt, assoc int64, h uint64, track bool) {
	l.push(row, rowMeta{hash: h, cnt: cnt}, assoc, track)
	switch {
	case l.idx != nil && 2*l.n()+2 > len(l.idx):
		l.idxBuild()
	case l.idx != nil:
		l.idxPut(int32(l.n() - 1))
	case l.n() > idxMinRows:
		l.idxBuild()
	}
}

// push appends row with its metadata and, if track, its match count: to
// the head block, doubled up to rowBlockRows rows, then to the last block
// of more, or a new one when it is full.
func (l *rowList) push(row []types.Value, m rowMeta, assoc int64, track bool) {
	b := &l.head
	switch n := l.n(); {
	case n < rowBlockRows:
		if len(b.meta) == cap(b.meta) {
			b.grow(min(max(2*cap(b.meta), 1), rowBlockRows), len(row), track)
		}
	case n&(rowBlockRows-1) == 0:
		if len(l.more) < cap(l.more) {
			l.more = l.more[:len(l.more)+1]
		} else {
			l.more = append(l.more, rowBlock{})
		}
		b = &l.more[len(l.more)-1]
		if cap(b.meta) < rowBlockRows || (track && cap(b.assoc) < rowBlockRows) || cap(b.vals) < rowBlockRows*len(row) {
			b.grow(rowBlockRows, len(row), track)
		}
	default:
		b = &l.more[len(l.more)-1]
	}
	b.vals = append(b.vals, row...)
	b.meta = append(b.meta, m)
	if track {
		b.assoc = append(b.assoc, assoc)
	}
}

// grow gives the block room for rows rows of w values, keeping its rows.
func (b *rowBlock) grow(rows, w int, track bool) {
	vals := make([]types.Value, len(b.vals), rows*w)
	copy(vals, b.vals)
	meta := make([]rowMeta, len(b.meta), rows)
	copy(meta, b.meta)
	b.vals, b.meta = vals, meta
	if track {
		assoc := make([]int64, len(b.assoc), rows)
		copy(assoc, b.assoc)
		b.assoc = assoc
	}
}

// joinRows is one input's kept rows (see the comment above).
type joinRows struct {
	spec  JoinSide
	track bool   // count each row's matches (assoc)
	what  string // "left rows of Join", for errors
	w     int
	ident []int // the identity columns of a row (nil: all)

	keys  *state.KeyIndex      // join key (a key row: the key columns in order) → slot
	lists *state.Slab[rowList] // per slot: the key's rows
	st    *state.Records
	seed  maphash.Seed

	kr   []types.Value // a key row decoded from the store
	row  []types.Value // a row decoded from the store
	held rowList       // a delta list's writes during a merge (BeginMerge)

	rows     int64 // rows held in memory, over all keys
	rowBytes int64 // the memory of one held row
	big      int64 // the most rows of one key held since the last spill
	shift    uint  // a stored part holds 1<<shift rows (joinChunkShift)

	// warmSlots and warmSink are warm's: the slots found, and what it
	// read (kept, so that the reads are not dropped); the probe of a
	// probe table (processProbe) adds its reads ahead to warmSink too.
	warmSlots []int32
	warmSink  int

	// pt is the side's probe table once its input ended, if it may
	// have one (probeTable), else nil: any change to the rows drops it
	// (unprobe).
	pt *probeTable

	// Work counters, for tests: rows examined to find a row, rows
	// decoded from the store and rows encoded for it, writes taken
	// blind by keys not in memory, rows of the other side probed through
	// the probe table, and probe tables not built for the budget.
	probes, decoded, encoded, blind int64
	probed, probeSkipped            int64
}

var (
	_ state.DeltaSource   = (*joinRows)(nil)
	_ state.SizeHinter    = (*joinRows)(nil)
	_ state.RecordDropper = (*joinRows)(nil)
)

// newJoinRows returns side's empty rows for the operator of ctx; side is 0
// (left) or 1 (right), and the side gets share of the state budget.
func newJoinRows(ctx *OpContext, spec JoinSide, side int, track bool, what string, share float64) (*joinRows, error) {
	keyKinds := make([]types.Kind, len(spec.Keys))
	keyCols := make([]int, len(spec.Keys))
	for i, c := range spec.Keys {
		keyKinds[i], keyCols[i] = spec.Kinds[c], i
	}
	s := &joinRows{spec: spec, track: track, what: what, w: len(spec.Kinds),
		keys:  state.NewKeyIndex(keyCols, keyKinds),
		lists: state.NewSlab[rowList](1),
		seed:  maphash.MakeSeed(),
		kr:    make([]types.Value, len(spec.Keys)),
		row:   make([]types.Value, len(spec.Kinds)),
		shift: joinChunkShift,
	}
	if spec.Layout == HasUniqueKey {
		s.ident = spec.UniqueKey
	}
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	st, err := state.NewRecords(state.RecordOptions{
		Name:           joinStateName,
		OperatorID:     ctx.ID + joinSpaceSuffix(side),
		MaxParallelism: maxPar,
		Subtask:        ctx.Subtask,
		Parallelism:    ctx.Parallelism,
		Budget:         int64(float64(ctx.StateBudget) * share),
		RecordBytes:    joinKeyOverhead, // the rows are counted apart (SetExtraBytes)
		Exclusive:      true,
		TTL:            ctx.StateTTL,
	}, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	s.st = st
	s.rowBytes = int64(len(spec.Kinds))*32 + 24 + 8 // values, counts, the hash table
	return s, nil
}

// joinKeyOverhead is the memory of a key's slot without its rows: the
// list, the key index entry and Records' bookkeeping.
const joinKeyOverhead = 96 + 48

// list returns slot's rows.
func (s *joinRows) list(slot int32) *rowList { return &s.lists.At(slot)[0] }

// find returns the slot of key row kr with the key's rows, loading them
// from the store when the rows spilled.
func (s *joinRows) find(kr []types.Value) (int32, bool, error) {
	slot, ok := s.keys.Find(kr)
	switch {
	case ok && s.list(slot).delta:
		if err := s.st.Complete(slot); err != nil {
			return 0, false, fmt.Errorf("%s: %w", s.what, err)
		}
	case ok:
		s.st.Touched(slot)
		return slot, true, nil
	case !s.st.Backed():
		return 0, false, nil
	default:
		var err error
		if slot, ok, err = s.st.Load(s.keys.Key()); err != nil || !ok {
			if err != nil {
				err = fmt.Errorf("%s: %w", s.what, err)
			}
			return 0, false, err
		}
	}
	// Loaded or completed: deltas may have taken every row out.
	if n := s.list(slot).n(); n == 0 {
		return 0, false, s.removeSlot(slot)
	} else {
		s.big = max(s.big, int64(n))
	}
	return slot, true, nil
}

// findWrite is find for a row of this side that is only written (inserted
// or taken out; the other side's rows are what it is matched with): while
// the rows spilled, a key not in memory takes the write blind, in a delta
// record (state.DeltaSource), rather than being loaded.
func (s *joinRows) findWrite(kr []types.Value) (int32, bool, error) {
	slot, ok := s.keys.Find(kr)
	if ok || !s.st.Blind() {
		if ok {
			return slot, true, nil
		}
		return s.find(kr)
	}
	s.blind++
	slot = s.newSlot(kr)
	s.keys.Added(s.st, slot)
	s.st.SetDelta(slot)
	l := s.list(slot)
	l.reset()
	l.delta = true
	return slot, true, nil
}

// warmRows is how many arriving rows a join reads ahead (warm) at a time:
// their memory fits in the CPU's caches many times over.
const warmRows = 64

// warm reads ahead, for rows from to to of b whose join key is their
// column col, what the join's probe of this side will read for them: the
// key's entry in the index, its list and the list's first row and count.
// The probe of a key not in the CPU's caches costs a few misses one after
// another (the entry gives the list, the list its rows); here the reads
// of different rows do not depend on each other, so the CPU overlaps
// their misses, and the probe that follows finds them in its caches. Only
// for an index of one integer key (KeyIndex.PeekInt): nothing is hashed
// or encoded twice.
func (s *joinRows) warm(b *types.Batch, col, from, to int) {
	slots := s.warmSlots[:0]
	for i := from; i < to; i++ {
		if slot, ok := s.keys.PeekInt(b.Row(i)[col]); ok {
			slots = append(slots, slot)
		}
	}
	sink := 0
	for _, slot := range slots {
		l := s.list(slot)
		if h := &l.head; !l.delta && len(h.meta) > 0 && len(h.vals) > 0 {
			sink += int(h.meta[0].cnt) + int(h.vals[0].Kind())
		}
	}
	s.warmSlots, s.warmSink = slots, s.warmSink+sink
}

// newSlot gives key row kr an empty slot.
func (s *joinRows) newSlot(kr []types.Value) int32 {
	s.unprobe()
	slot := s.keys.Insert(kr)
	s.lists.Grow(s.keys.Cap())
	return slot
}

// identHash hashes row's identity columns (consistent with ==).
func (s *joinRows) identHash(row []types.Value) uint64 {
	h := uint64(0x9E3779B97F4A7C15)
	if s.ident == nil {
		for _, v := range row {
			h = mixValue(h, v, s.seed)
		}
		return h
	}
	for _, c := range s.ident {
		h = mixValue(h, row[c], s.seed)
	}
	return h
}

func mixValue(h uint64, v types.Value, seed maphash.Seed) uint64 {
	x := uint64(v.Int()) ^ uint64(v.Kind())<<56
	if str := v.Str(); str != "" {
		x ^= maphash.String(seed, str)
	}
	h ^= x
	h *= 0xBF58476D1CE4E5B9
	return h ^ h>>31
}

// sameIdent reports whether rows a and b have the same identity.
func (s *joinRows) sameIdent(a, b []types.Value) bool {
	if s.ident == nil {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	for _, c := range s.ident {
		if a[c] != b[c] {
			return false
		}
	}
	return true
}

// indexOf returns the index of the row of l with row's identity (hash h),
// or -1.
func (s *joinRows) indexOf(l *rowList, row []types.Value, h uint64) int {
	if l.idx == nil {
		for j := range l.head.meta {
			s.probes++
			if l.head.meta[j].hash == h && s.sameIdent(l.row(j, s.w), row) {
				return j
			}
		}
		return -1
	}
	mask := len(l.idx) - 1
	for p := int(h) & mask; ; p = (p + 1) & mask {
		s.probes++
		e := l.idx[p]
		if e < 0 {
			return -1
		}
		if l.metaAt(int(e)).hash == h && s.sameIdent(l.row(int(e), s.w), row) {
			return int(e)
		}
	}
}

// insert adds row, matched by assoc rows of the other side, under key row
// kr (slot, if found).
func (s *joinRows) insert(kr []types.Value, slot int32, found bool, row []types.Value, assoc int64) {
	s.unprobe()
	if !found {
		slot = s.newSlot(kr)
		s.keys.Added(s.st, slot)
	}
	l := s.list(slot)
	n0 := l.n()
	if l.delta {
		l.addOp(row, 1, assoc, s.track)
	} else {
		s.put(l, row, assoc)
	}
	n := l.n()
	s.rows += int64(n - n0)
	s.big = max(s.big, int64(n))
	s.st.Changed(slot)
}

// addOp appends a write to a delta list (rowList.delta).
func (l *rowList) addOp(row []types.Value, cnt, assoc int64, track bool) {
	l.push(row, rowMeta{cnt: cnt}, assoc, track)
}

// put adds row, matched by assoc rows of the other side, to the rows l
// (not a delta list), marking the part that changes.
func (s *joinRows) put(l *rowList, row []types.Value, assoc int64) {
	j := -1
	switch s.spec.Layout {
	case JoinKeyContainsUniqueKey:
		dirty := l.dirty
		l.reset()
		l.dirty = dirty
		l.add(row, 1, assoc, 0, s.track)
		j = 0
	case HasUniqueKey:
		h := s.identHash(row)
		if j = s.indexOf(l, row, h); j >= 0 {
			copy(l.row(j, s.w), row)
			l.metaAt(j).cnt = 1
			if s.track {
				*l.assocAt(j) = assoc
			}
		} else {
			l.add(row, 1, assoc, h, s.track)
		}
	default:
		h := s.identHash(row)
		if j = s.indexOf(l, row, h); j >= 0 {
			l.metaAt(j).cnt++
		} else {
			l.add(row, 1, assoc, h, s.track)
		}
	}
	if j < 0 {
		j = l.n() - 1
	}
	l.mark(j, s.shift)
}

// remove takes one copy of row out of slot (nothing if it is not kept: its
// state expired), forgetting the key when it has no row left.
func (s *joinRows) remove(slot int32, found bool, row []types.Value) error {
	if !found {
		return nil
	}
	s.unprobe()
	l := s.list(slot)
	if l.delta {
		l.addOp(row, -1, 0, s.track)
		s.rows++
		s.st.Changed(slot)
		return nil
	}
	n0 := l.n()
	if !s.take(l, row) {
		return nil
	}
	s.rows -= int64(n0 - l.n())
	if l.n() == 0 {
		return s.removeSlot(slot)
	}
	s.st.Changed(slot)
	return nil
}

// take takes one copy of row out of the rows l (not a delta list), marking
// the parts that change, and reports whether l held it.
func (s *joinRows) take(l *rowList, row []types.Value) bool {
	if s.spec.Layout == JoinKeyContainsUniqueKey {
		if l.n() == 0 {
			return false
		}
		l.mark(0, s.shift)
		dirty := l.dirty
		l.reset()
		l.dirty = dirty
		return true
	}
	j := s.indexOf(l, row, s.identHash(row))
	if j < 0 {
		return false
	}
	if m := l.metaAt(j); s.spec.Layout == NoUniqueKey && m.cnt > 1 {
		m.cnt--
		l.mark(j, s.shift)
	} else {
		l.drop(j, s.w, s.shift)
	}
	return true
}

// removeSlot forgets slot's key and rows.
func (s *joinRows) removeSlot(slot int32) error {
	s.unprobe()
	if err := s.st.Removed(slot); err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	s.keys.Remove(slot)
	l := s.list(slot)
	s.rows -= int64(l.n())
	l.reset()
	return nil
}

// AppendRecordKey implements state.RecordSource.
func (s *joinRows) AppendRecordKey(dst []byte, slot int32) []byte {
	return s.keys.AppendKey(dst, slot)
}

// AppendRecord implements state.RecordSource: part 0 of slot's rows,
// joinRecordVersion and the number of rows, then the first part's rows
// (appendRows).
func (s *joinRows) AppendRecord(dst []byte, slot int32) []byte {
	l := s.list(slot)
	dst = append(dst, joinRecordVersion)
	dst = binary.AppendUvarint(dst, uint64(l.n()))
	return s.appendRows(dst, l, 0)
}

// AppendRecordPart implements state.PartedSource: part p's rows.
func (s *joinRows) AppendRecordPart(dst []byte, slot int32, p int32) []byte {
	return s.appendRows(dst, s.list(slot), int(p))
}

// appendRows appends the rows of part p of l: per row its count, its
// match count if tracked and its values (appendJoinValue each).
func (s *joinRows) appendRows(dst []byte, l *rowList, p int) []byte {
	from, to := p<<s.shift, min(l.n(), (p+1)<<s.shift)
	s.encoded += int64(max(to-from, 0))
	for j := from; j < to; j++ {
		dst = s.appendRow(binary.AppendUvarint(dst, uint64(l.metaAt(j).cnt)), l, j)
	}
	return dst
}

// appendRow appends row j of l after its count: its match count if
// tracked, then its values (appendJoinValue each). decodeRow reads it.
func (s *joinRows) appendRow(dst []byte, l *rowList, j int) []byte {
	if s.track {
		dst = binary.AppendUvarint(dst, uint64(*l.assocAt(j)))
	}
	for _, v := range l.row(j, s.w) {
		dst = appendJoinValue(dst, v)
	}
	return dst
}

// EncodedSize implements state.SizeHinter: the length of part (0,
// AppendRecord; p >= 1, AppendRecordPart; state.DeltaPart, AppendDelta;
// the parts ChangedParts returns, state.ChangedPartsHint and
// state.AllPartsHint) of slot's rows.
func (s *joinRows) EncodedSize(slot int32, part int32) int {
	l := s.list(slot)
	switch part {
	case state.DeltaPart:
		n := state.UvarintSize(uint64(l.n()))
		for j := range l.n() {
			n += state.VarintSize(l.metaAt(j).cnt) + s.rowSize(l, j)
		}
		return n
	case state.AllPartsHint:
		n := 0
		for p := 1; p<<s.shift < l.n(); p++ {
			n += s.partSize(l, p)
		}
		return n
	case state.ChangedPartsHint:
		n, np := 0, (l.n()+1<<s.shift-1)>>s.shift
		for w, word := range l.dirty {
			for word != 0 {
				p := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				if p >= 1 && p < np {
					n += s.partSize(l, p)
				}
			}
		}
		return n
	case 0:
		return 1 + state.UvarintSize(uint64(l.n())) + s.partSize(l, 0)
	}
	return s.partSize(l, int(part))
}

// partSize returns the length appendRows appends for part p of l.
func (s *joinRows) partSize(l *rowList, p int) int {
	n := 0
	for j, to := p<<s.shift, min(l.n(), (p+1)<<s.shift); j < to; j++ {
		n += state.UvarintSize(uint64(l.metaAt(j).cnt)) + s.rowSize(l, j)
	}
	return n
}

// rowSize returns the length appendRow appends for row j of l.
func (s *joinRows) rowSize(l *rowList, j int) int {
	n := 0
	if s.track {
		n = state.UvarintSize(uint64(*l.assocAt(j)))
	}
	for _, v := range l.row(j, s.w) {
		n += joinValueSize(v)
	}
	return n
}

// decodeRow reads what appendRow wrote from rec into s.row and returns
// the match count (0 if not tracked) and the rest of rec.
func (s *joinRows) decodeRow(rec []byte) (int64, []byte, error) {
	var assoc uint64
	if s.track {
		var m int
		if assoc, m = binary.Uvarint(rec); m <= 0 {
			return 0, nil, fmt.Errorf("%s: %w: bad match count", s.what, errJoinRecord)
		}
		rec = rec[m:]
	}
	for i := range s.row {
		v, rest, err := decodeJoinValue(rec)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %w: value %d: %v", s.what, errJoinRecord, i, err)
		}
		s.row[i] = v
		rec = rest
	}
	return int64(assoc), rec, nil
}

// ChangedParts implements state.PartedSource.
func (s *joinRows) ChangedParts(dst []int32, slot int32, all bool) (int32, []int32) {
	l := s.list(slot)
	n := int32(max(1, (l.n()+1<<s.shift-1)>>s.shift))
	if all {
		for p := int32(1); p < n; p++ {
			dst = append(dst, p)
		}
	} else {
		for w, word := range l.dirty {
			for word != 0 {
				p := int32(w<<6 | bits.TrailingZeros64(word))
				word &= word - 1
				if p >= 1 && p < n {
					dst = append(dst, p)
				}
			}
		}
	}
	clear(l.dirty)
	return n, dst
}

var errJoinRecord = errors.New("malformed join record")

// LoadRecord implements state.RecordSource: it makes slot's list from
// part 0; the other parts follow (LoadRecordPart).
func (s *joinRows) LoadRecord(key, rec []byte) (int32, error) {
	slot, err := s.NewRecord(key)
	if err != nil {
		return 0, err
	}
	return slot, s.LoadBase(slot, rec)
}

// NewRecord implements state.DeltaSource.
func (s *joinRows) NewRecord(key []byte) (int32, error) {
	for i := range s.kr {
		v, rest, err := state.DecodeValue(key)
		if err != nil {
			return 0, fmt.Errorf("%s: key %x: %w", s.what, key, err)
		}
		s.kr[i] = state.WithColumnKind(v, s.spec.Kinds[s.spec.Keys[i]])
		key = rest
	}
	slot := s.newSlot(s.kr)
	s.list(slot).reset()
	return slot, nil
}

// LoadBase implements state.DeltaSource: part 0 of slot's rows into its
// empty list.
func (s *joinRows) LoadBase(slot int32, rec []byte) error {
	if len(rec) == 0 || rec[0] != joinRecordVersion {
		return fmt.Errorf("%s: %w: version %x, want %d", s.what, errJoinRecord, rec[:min(len(rec), 1)], joinRecordVersion)
	}
	rec = rec[1:]
	n, k := binary.Uvarint(rec)
	if k <= 0 || n == 0 || n > math.MaxInt32 {
		return fmt.Errorf("%s: %w: bad row count", s.what, errJoinRecord)
	}
	l := s.list(slot)
	l.want = int(n)
	return s.loadRows(l, rec[k:])
}

// AppendDelta implements state.DeltaSource: the number of writes, then
// per write its count (+1 or -1, a zigzag varint), its match count if
// tracked and its row's values.
func (s *joinRows) AppendDelta(dst []byte, slot int32) []byte {
	s.unprobe()
	l := s.list(slot)
	dst = binary.AppendUvarint(dst, uint64(l.n()))
	for j := range l.n() {
		dst = s.appendRow(binary.AppendVarint(dst, l.metaAt(j).cnt), l, j)
	}
	s.encoded += int64(l.n())
	s.rows -= int64(l.n())
	l.reset()
	l.delta = true
	return dst
}

// BeginMerge implements state.DeltaSource: the writes of slot's delta
// list move to s.held, and the list is empty.
func (s *joinRows) BeginMerge(slot int32) {
	s.unprobe()
	l, h := s.list(slot), &s.held
	h.head, l.head = l.head, h.head
	h.more, l.more = l.more, h.more
	s.rows -= int64(h.n())
	l.reset()
}

// LoadDelta implements state.DeltaSource: it applies a stored delta's
// writes to slot's rows.
func (s *joinRows) LoadDelta(slot int32, rec []byte) error {
	s.unprobe()
	n, k := binary.Uvarint(rec)
	if k <= 0 || n > math.MaxInt32 {
		return fmt.Errorf("%s: %w: bad delta length", s.what, errJoinRecord)
	}
	rec = rec[k:]
	l := s.list(slot)
	for range n {
		cnt, m := binary.Varint(rec)
		if m <= 0 || (cnt != 1 && cnt != -1) {
			return fmt.Errorf("%s: %w: bad delta count", s.what, errJoinRecord)
		}
		assoc, rest, err := s.decodeRow(rec[m:])
		if err != nil {
			return err
		}
		rec = rest
		s.decoded++
		s.apply(l, s.row, cnt, assoc)
	}
	if len(rec) != 0 {
		return fmt.Errorf("%s: %w: %d bytes after the delta", s.what, errJoinRecord, len(rec))
	}
	return nil
}

// apply makes one write (count +1: put, -1: take) to the rows l.
func (s *joinRows) apply(l *rowList, row []types.Value, cnt, assoc int64) {
	n0 := l.n()
	if cnt > 0 {
		s.put(l, row, assoc)
	} else {
		s.take(l, row)
	}
	s.rows += int64(l.n() - n0)
}

// EndMerge implements state.DeltaSource: the writes BeginMerge set aside
// are applied after the stored ones.
func (s *joinRows) EndMerge(slot int32) error {
	s.unprobe()
	l, h := s.list(slot), &s.held
	for j := range h.n() {
		var assoc int64
		if s.track {
			assoc = *h.assocAt(j)
		}
		s.apply(l, h.row(j, s.w), h.metaAt(j).cnt, assoc)
	}
	h.reset()
	l.delta = false
	return nil
}

// PendingParts implements state.PartedSource.
func (s *joinRows) PendingParts(slot int32) int32 {
	return int32((s.list(slot).want + 1<<s.shift - 1) >> s.shift)
}

// LoadRecordPart implements state.PartedSource.
func (s *joinRows) LoadRecordPart(slot int32, p int32, rec []byte) error {
	l := s.list(slot)
	if l.n() != int(p)<<s.shift || l.want == 0 {
		return fmt.Errorf("%s: %w: part %d after %d rows", s.what, errJoinRecord, p, l.n())
	}
	return s.loadRows(l, rec)
}

// loadRows adds to l the rows of one stored part: all of l.want, or a
// full part.
func (s *joinRows) loadRows(l *rowList, rec []byte) error {
	s.unprobe()
	k := min(l.want, 1<<s.shift)
	for range k {
		cnt, m := binary.Uvarint(rec)
		if m <= 0 {
			return fmt.Errorf("%s: %w: bad count", s.what, errJoinRecord)
		}
		assoc, rest, err := s.decodeRow(rec[m:])
		if err != nil {
			return err
		}
		rec = rest
		var h uint64
		if s.spec.Layout != JoinKeyContainsUniqueKey {
			h = s.identHash(s.row)
		}
		l.add(s.row, int64(cnt), assoc, h, s.track)
	}
	if len(rec) != 0 {
		return fmt.Errorf("%s: %w: %d bytes after the rows", s.what, errJoinRecord, len(rec))
	}
	l.want -= k
	s.rows += int64(k)
	s.decoded += int64(k)
	return nil
}

// DropRecord implements state.RecordDropper: it forgets slot's key and
// rows (written to the store).
func (s *joinRows) DropRecord(slot int32) {
	s.unprobe()
	l := s.list(slot)
	s.rows -= int64(l.n())
	l.reset()
	s.keys.Remove(slot)
}

// clear forgets every row of the side, in memory and in the state store
// (state.Records.Clear): the rows can never be matched again.
func (s *joinRows) clear() error {
	s.unprobe()
	if err := s.st.Clear(); err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	s.lists = state.NewSlab[rowList](1) // the rows' memory goes with it
	s.held.reset()
	return nil
}

// bigAfterSpill sets big to the most rows of a key still in memory.
func (s *joinRows) bigAfterSpill() {
	s.big = 0
	for slot := range s.keys.Cap() {
		if s.keys.Used(slot) {
			s.big = max(s.big, int64(s.list(slot).n()))
		}
	}
}

// DropRecords implements state.RecordSource: it forgets every in-memory
// key (they were written to the store).
func (s *joinRows) DropRecords() {
	s.unprobe()
	s.keys.Reset()
	s.lists.Clear()
	s.rows, s.big = 0, 0
}

// joinState is the two sides' rows of a regular, semi or anti join, with
// what the task calls for checkpoints and the state TTL.
type joinState struct {
	name   string // the operator, for errors
	id     string // the operator id
	sides  [2]*joinRows
	kr     []types.Value // the join key of the row at hand
	budget int64         // the state budget, shared by the sides
	// noProbe, for tests, keeps the join from building probe tables.
	noProbe bool
	// ended says, per input port, that the input ended (endInput): the
	// other side's rows are no longer kept.
	ended [2]bool
}

// endInput is the end of input port, once: the other side's rows are
// dropped, in memory and stored (no row of port can come to match them);
// it reports false if port had ended before.
func (j *joinState) endInput(port int) (bool, error) {
	if port != 0 && port != 1 {
		return false, fmt.Errorf("%s: input port %d", j.name, port)
	}
	if j.ended[port] {
		return false, nil
	}
	j.ended[port] = true
	return true, j.sides[1-port].clear()
}

// open makes the sides' rows; track says which sides count their matches.
func (j *joinState) open(ctx *OpContext, name string, left, right JoinSide, track [2]bool) error {
	j.name, j.id = name, ctx.ID
	j.kr = make([]types.Value, len(left.Keys))
	j.budget = ctx.StateBudget
	// The sides share the budget (spillIfOver); a restore loads each
	// side's rows while they fit in half of it.
	var err error
	if j.sides[0], err = newJoinRows(ctx, left, 0, track[0], "left rows of "+name, 0.5); err != nil {
		return err
	}
	j.sides[1], err = newJoinRows(ctx, right, 1, track[1], "right rows of "+name, 0.5)
	return err
}

// keyOf sets j.kr to row's join key on side side.
func (j *joinState) keyOf(side int, row []types.Value) []types.Value {
	for i, c := range j.sides[side].spec.Keys {
		j.kr[i] = row[c]
	}
	return j.kr
}

// InitState implements StatefulOperator. A checkpoint of Weir before the
// typed join state (keyed tables "left" and "right" in the operator's own
// key space) is refused with a clear error rather than restored empty.
func (j *joinState) InitState(store *statestore.Store, restored bool) error {
	if restored {
		if err := j.refuseOldLayout(store); err != nil {
			return err
		}
	}
	for _, s := range j.sides {
		if err := s.st.Attach(store, restored); err != nil {
			return fmt.Errorf("state of %s: %w", s.what, err)
		}
		if err := s.dropEmpty(); err != nil {
			return fmt.Errorf("state of %s: %w", s.what, err)
		}
	}
	return nil
}

// dropEmpty forgets the keys a restore left without rows: the stored
// deltas merged into them took every row out.
func (s *joinRows) dropEmpty() error {
	for slot := range s.keys.Cap() {
		if s.keys.Used(slot) && !s.list(slot).delta && s.list(slot).n() == 0 {
			if err := s.removeSlot(slot); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuseOldLayout fails if the operator's own key space holds state (the
// keyed tables of Weir before the typed join state), or a side's space
// holds records of version 2 (joinOldStateName: a key's rows in one
// record).
func (j *joinState) refuseOldLayout(store *statestore.Store) error {
	first, last := j.sides[0].st.KeyGroups()
	for i, space := range []string{j.id, j.id + joinSpaceSuffix(0), j.id + joinSpaceSuffix(1)} {
		name := joinOldStateName
		if i == 0 {
			name = ""
		}
		found, err := holdsState(store, space, name, first, last)
		if err != nil {
			return fmt.Errorf("state of %s: %w", j.name, err)
		}
		if found {
			what := "keyed tables"
			if i > 0 {
				what = "one record per key, " + joinOldStateName
			}
			return fmt.Errorf("state of %s: the checkpoint holds the join's rows in the layout of an older Weir (%s), which this version does not read: start the job without restoring, or finish it with the Weir that wrote it", j.name, what)
		}
	}
	return nil
}

// holdsState reports whether space holds, in key groups first to last, a
// key of the state called name (its keys start len(name) | name), or any
// key when name is "": how an operator finds a checkpoint of a layout it
// no longer reads.
func holdsState(store *statestore.Store, space, name string, first, last int) (bool, error) {
	sp, err := store.Space(space)
	if err != nil {
		return false, err
	}
	var lo, hi []byte
	if name != "" {
		lo = append([]byte{byte(len(name))}, name...)
		hi = append([]byte(nil), lo...)
		hi[len(hi)-1]++ // the end of the name's keys
	}
	found := false
	for kg := first; kg <= last && !found; kg++ {
		err := sp.Scan(kg, lo, hi, false, func(_, _ []byte) (bool, error) {
			found = true
			return false, nil
		})
		if err != nil {
			return false, err
		}
	}
	return found, nil
}

// PrepareSnapshot implements StatefulOperator: the changed keys of both
// sides go to the store (a join holds no output back).
func (j *joinState) PrepareSnapshot() error {
	for _, s := range j.sides {
		if err := s.st.Snapshot(); err != nil {
			return fmt.Errorf("state of %s: %w", s.what, err)
		}
	}
	return nil
}

// spillIfOver spills a side when the two sides' rows outgrew the budget
// they share: the side that holds more, unless it may not spill, then the
// other. A side may not spill with state.MinRecords keys or fewer in
// memory, nor while it holds no more than twice the rows of its largest
// key: a key larger than the budget must be in memory while its rows are
// used, and spilling it with every batch would load it again with the next
// one (a key of a million rows decoded per batch). So the memory held may
// exceed the budget by up to twice the largest key, and a key is loaded
// again only after at least as many rows of other keys came into memory.
// Sharing the budget, rather than splitting it by a guess, gives it to
// the side that reads its rows: a side whose spilled keys take their
// rows blind (findWrite) holds little.
func (j *joinState) spillIfOver() error {
	var used [2]int64
	for i, s := range j.sides {
		if !s.st.Persisted() {
			return nil
		}
		used[i] = s.bytes()
	}
	if used[0]+used[1] <= j.budget {
		return nil
	}
	order := [2]int{0, 1}
	if used[1] > used[0] {
		order = [2]int{1, 0}
	}
	for _, i := range order {
		s := j.sides[i]
		if s.st.Len() <= state.MinRecords || s.rows <= 2*s.big {
			continue
		}
		if err := s.st.Spill(); err != nil {
			return fmt.Errorf("state of %s: %w", s.what, err)
		}
		s.bigAfterSpill()
		return nil
	}
	return nil
}

// expires implements expiringOperator.
func (j *joinState) expires() bool { return j.sides[0].st.HasTTL() }

// nextExpiry implements expiringOperator.
func (j *joinState) nextExpiry() (int64, bool) {
	a, aok := j.sides[0].st.NextExpiry()
	b, bok := j.sides[1].st.NextExpiry()
	switch {
	case aok && bok:
		return min(a, b), true
	case bok:
		return b, true
	}
	return a, aok
}

// advanceTime implements expiringOperator: a side's rows of a key not
// written for the TTL are forgotten without output, as Flink's state TTL
// forgets a join's state (the other side's rows of the key stay).
func (j *joinState) advanceTime(ms int64) error {
	for _, s := range j.sides {
		s.st.SetTime(ms)
		if s.st.ExpiryDue() {
			if err := s.st.Expire(s.removeSlot); err != nil {
				return fmt.Errorf("state of %s: %w", s.what, err)
			}
		}
	}
	return nil
}

// appendJoinValue appends v compactly: its kind byte, then for an integer
// kind its zigzag varint (a small number takes a byte or two), else the
// rest of types.AppendKey (which starts with the kind byte too).
func appendJoinValue(dst []byte, v types.Value) []byte {
	if state.IntStored(v.Kind()) {
		return binary.AppendVarint(append(dst, byte(v.Kind())), v.Int())
	}
	return types.AppendKey(dst, v)
}

// joinValueSize returns the length appendJoinValue appends for v.
func joinValueSize(v types.Value) int {
	if state.IntStored(v.Kind()) {
		return 1 + state.VarintSize(v.Int())
	}
	return types.KeySize(v)
}

// decodeJoinValue reads a value appendJoinValue wrote.
func decodeJoinValue(src []byte) (types.Value, []byte, error) {
	if len(src) == 0 {
		return types.Value{}, nil, errJoinRecord
	}
	if k := types.Kind(src[0]); state.IntStored(k) {
		n, m := binary.Varint(src[1:])
		if m <= 0 {
			return types.Value{}, nil, errJoinRecord
		}
		return types.BigIntValue(n).WithKind(k), src[1+m:], nil
	}
	return types.DecodeKey(src)
}
