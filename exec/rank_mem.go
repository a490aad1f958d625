package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// rankMemOp is the AppendFast Top-N (ROW_NUMBER, RANK and DENSE_RANK;
// W12's operator) with each partition's kept rows typed in memory: a slot
// per partition (state.KeyIndex) holding its rows in order and their sort
// keys (a state.Slab). state.Records writes the changed partitions back at
// each checkpoint, as the "top" record of rankOp's layout (uvarint length
// and sort key, uvarint length and state.Values row, per kept row), so a
// checkpoint of either restores into the other; past the state budget it
// spills them all and looks up the partitions not in memory. A row that
// enters a top list costs no decoding or re-encoding and no keyed-state
// call.
type rankMemOp struct {
	spec RankSpec
	name string
	w    int // input width
	end  int // End: the rows kept per partition
	st   *state.Records
	out  *types.Batch
	// pick, when set (pickOutput), is the output: per column, an input
	// column or o.w for the rank.
	pick []int

	keys  *state.KeyIndex       // partition key → slot
	parts *state.Slab[rankPart] // per slot: its kept rows
	// bound is per slot the first 8 bytes of the last kept sort key once
	// the list is full (big-endian, and the key at least 8 bytes long),
	// else 0 with full[s] false: most rows are rejected by it alone, with
	// no pointer to follow (dense, apart from the rows, to stay in cache).
	bound []uint64
	full  []bool

	sk      []byte
	matched []bool
	// RANK and DENSE_RANK (insertRanked): a partition's list before and
	// after a row enters it, and their ranks.
	oldRank, newRank []int64
	nsks             [][]byte
	nrows            [][]types.Value
}

// rankPart is one partition's kept rows in memory.
type rankPart struct {
	sks  [][]byte        // the kept rows' sort keys, in order
	rows [][]types.Value // the kept rows, in order (reused buffers)
}

var (
	_ StatefulOperator   = (*rankMemOp)(nil)
	_ state.RecordSource = (*rankMemOp)(nil)
	_ state.SizeHinter   = (*rankMemOp)(nil)
	_ expiringOperator   = (*rankMemOp)(nil)
	_ outputPicker       = (*rankMemOp)(nil)
)

// rankTopName is the name of a partition's kept rows (rankOp's "top").
const rankTopName = "top"

// Open implements Operator.
func (o *rankMemOp) Open(ctx *OpContext) error {
	o.name = "Rank"
	o.w = len(o.spec.Kinds)
	o.end = int(o.spec.End)
	ow := o.w
	if o.spec.OutputRank {
		ow++
	}
	o.out = types.NewBatch(ow, 64)
	o.pick = nil // fuseCalcs, after every Open, picks again
	o.keys = state.NewKeyIndex(o.spec.Partition, o.spec.Kinds)
	o.parts = state.NewSlab[rankPart](1)
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	st, err := state.NewRecords(state.RecordOptions{
		Name:           rankTopName,
		OperatorID:     ctx.ID,
		MaxParallelism: maxPar,
		Subtask:        ctx.Subtask,
		Parallelism:    ctx.Parallelism,
		Budget:         ctx.StateBudget,
		RecordBytes:    int64(min(o.end, 64))*(int64(o.w)*32+48) + 96,
		Exclusive:      true,
		TTL:            ctx.StateTTL,
	}, o)
	if err != nil {
		return err
	}
	o.st = st
	return nil
}

// InitState implements StatefulOperator.
func (o *rankMemOp) InitState(store *statestore.Store, restored bool) error {
	if err := o.st.Attach(store, restored); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// PrepareSnapshot implements StatefulOperator.
func (o *rankMemOp) PrepareSnapshot() error {
	if err := o.st.Snapshot(); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// part returns slot s's partition.
func (o *rankMemOp) part(s int32) *rankPart { return &o.parts.At(s)[0] }

// newSlot gives row's partition an empty slot.
func (o *rankMemOp) newSlot(row []types.Value) int32 {
	s := o.keys.Insert(row)
	o.parts.Grow(o.keys.Cap())
	for int32(len(o.bound)) < o.keys.Cap() {
		o.bound = append(o.bound, 0)
		o.full = append(o.full, false)
	}
	return s
}

// Process implements Operator.
func (o *rankMemOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("Top-N (AppendFastStrategy) got a %s row: its input must be insert-only", b.Kinds[i])
		}
		row := b.Row(i)
		o.sk = encodeSortKey(o.sk[:0], o.spec.Order, row)
		s, ok := o.keys.Find(row)
		if ok {
			if o.full[s] && len(o.sk) >= 8 {
				if h := binary.BigEndian.Uint64(o.sk); h != o.bound[s] {
					if h > o.bound[s] {
						continue // ranked past a full range: nothing changes
					}
					goto insert
				}
			}
			p := o.part(s)
			if o.spec.Func == RowNumber {
				if len(p.sks) >= o.end && bytes.Compare(o.sk, p.sks[len(p.sks)-1]) >= 0 {
					continue // ranked past a full range (ties go after): nothing changes
				}
			} else if o.fullList(p.sks) && bytes.Compare(o.sk, p.sks[len(p.sks)-1]) > 0 {
				continue // ranked past a full range (ties share the last rank): nothing changes
			}
		}
	insert:
		if !ok && o.st.Backed() {
			var err error
			if s, ok, err = o.st.Load(o.keys.Key()); err != nil {
				return fmt.Errorf("state of %s: %w", o.name, err)
			}
		}
		if !ok {
			s = o.newSlot(row)
			o.keys.Added(o.st, s)
		}
		var changed bool
		if o.spec.Func == RowNumber {
			changed = o.insert(s, row)
		} else {
			changed = o.insertRanked(s, row)
		}
		if changed {
			o.st.Changed(s)
		}
		if o.out.Len() >= 1024 {
			if err := out.Emit(o.out); err != nil {
				return err
			}
			o.out.Reset()
		}
	}
	if o.out.Len() > 0 {
		if err := out.Emit(o.out); err != nil {
			return err
		}
	}
	if o.st.OverBudget() {
		if err := o.st.Spill(); err != nil {
			return fmt.Errorf("state of %s: %w", o.name, err)
		}
	}
	return nil
}

// insert puts row (sort key o.sk) into slot s's list after its ties,
// emits the changes of the ranks Start to End, and reports whether the
// list changed.
func (o *rankMemOp) insert(s int32, row []types.Value) bool {
	p := o.part(s)
	sks, rows := p.sks, p.rows
	n := len(sks)
	if n >= o.end && bytes.Compare(o.sk, sks[n-1]) >= 0 {
		return false
	}
	pos := n
	for j, k := range sks {
		if bytes.Compare(k, o.sk) > 0 {
			pos = j
			break
		}
	}
	o.emitInsert(rows, pos, row)
	// Shift pos.. one place down, dropping the last row when full; the
	// dropped (or a new) buffer takes the new row.
	var kb []byte
	var rb []types.Value
	if n < o.end {
		sks = append(sks, nil)
		rows = append(rows, nil)
	} else {
		n--
	}
	kb, rb = sks[n], rows[n]
	copy(sks[pos+1:n+1], sks[pos:n])
	copy(rows[pos+1:n+1], rows[pos:n])
	sks[pos] = append(kb[:0], o.sk...)
	if cap(rb) < o.w {
		rb = make([]types.Value, o.w)
	}
	rb = rb[:o.w]
	copy(rb, row)
	rows[pos] = rb
	p.sks, p.rows = sks, rows
	o.setBound(s, p)
	return true
}

// setBound sets slot s's bound from its list p.
func (o *rankMemOp) setBound(s int32, p *rankPart) {
	o.full[s] = o.fullList(p.sks) && len(p.sks[len(p.sks)-1]) >= 8
	o.bound[s] = 0
	if o.full[s] {
		o.bound[s] = binary.BigEndian.Uint64(p.sks[len(p.sks)-1])
	}
}

// fullList reports whether a row ranked after the last of the kept sort
// keys sks would rank past End: End rows kept (ROW_NUMBER, RANK) or End
// distinct keys (DENSE_RANK).
func (o *rankMemOp) fullList(sks [][]byte) bool {
	if o.spec.Func != DenseRank {
		return len(sks) >= o.end
	}
	distinct := 0
	for j, k := range sks {
		if j == 0 || !bytes.Equal(k, sks[j-1]) {
			distinct++
		}
	}
	return distinct >= o.end
}

// rankOf appends the ranks (RANK or DENSE_RANK) of the rows of sort keys
// sks, in order, up to the first past End.
func (o *rankMemOp) rankOf(dst []int64, sks [][]byte) []int64 {
	var rank, distinct int64
	for j, k := range sks {
		if j == 0 || !bytes.Equal(k, sks[j-1]) {
			distinct++
			rank = int64(j + 1)
		}
		r := rank
		if o.spec.Func == DenseRank {
			r = distinct
		}
		if r > o.spec.End {
			break
		}
		dst = append(dst, r)
	}
	return dst
}

// insertRanked is insert for RANK and DENSE_RANK, whose lists hold every
// row ranked up to End (ties share a rank, so a list may be longer than
// End): it puts row (sort key o.sk) into slot s's list after its ties,
// drops the rows it pushes past End, emits the changes within ranks
// Start to End, and reports whether the list changed.
func (o *rankMemOp) insertRanked(s int32, row []types.Value) bool {
	p := o.part(s)
	n := len(p.sks)
	if o.fullList(p.sks) && bytes.Compare(o.sk, p.sks[n-1]) > 0 {
		return false
	}
	pos := n
	for j, k := range p.sks {
		if bytes.Compare(k, o.sk) > 0 {
			pos = j
			break
		}
	}
	o.oldRank = o.rankOf(o.oldRank[:0], p.sks)
	o.nsks = append(append(append(o.nsks[:0], p.sks[:pos]...), o.sk), p.sks[pos:]...)
	o.nrows = append(append(append(o.nrows[:0], p.rows[:pos]...), row), p.rows[pos:]...)
	o.newRank = o.rankOf(o.newRank[:0], o.nsks)
	m := len(o.newRank) // the new list's length: the new row (at pos < m) ranks within End
	o.emitRanked(p.rows, o.oldRank, o.nrows[:m], o.newRank)
	// Old rows pos.. move one place down; those at m-1.. are dropped, and
	// the last one's buffers (or new ones) take the new row.
	sks, rows := p.sks, p.rows
	var kb []byte
	var rb []types.Value
	if m > n {
		sks = append(sks, nil)
		rows = append(rows, nil)
	} else {
		kb, rb = sks[n-1], rows[n-1]
		clear(sks[m:n])
		clear(rows[m:n])
		sks, rows = sks[:m], rows[:m]
	}
	copy(sks[pos+1:m], p.sks[pos:m-1])
	copy(rows[pos+1:m], p.rows[pos:m-1])
	sks[pos] = append(kb[:0], o.sk...)
	if cap(rb) < o.w {
		rb = make([]types.Value, o.w)
	}
	rb = rb[:o.w]
	copy(rb, row)
	rows[pos] = rb
	p.sks, p.rows = sks, rows
	o.setBound(s, p)
	clear(o.nrows) // no references to rows kept past the call
	return true
}

// emitRanked emits the changes within ranks [Start, End] from the rows
// old (ranks oldRank) to cur (ranks curRank), as multisets of rows (with
// their rank when it is output): a -D for each old row not in cur, then
// a +I for each cur row not in old.
func (o *rankMemOp) emitRanked(old [][]types.Value, oldRank []int64, cur [][]types.Value, curRank []int64) {
	in := func(r int64) bool { return r >= o.spec.Start && r <= o.spec.End }
	o.matched = append(o.matched[:0], make([]bool, len(cur))...)
	for i, r := range oldRank {
		if !in(r) {
			continue
		}
		found := false
		for j, c := range curRank {
			if !o.matched[j] && in(c) && sameRow(old[i], cur[j]) && (!o.spec.OutputRank || r == c) {
				o.matched[j], found = true, true
				break
			}
		}
		if !found {
			o.emitRow(types.Delete, old[i], int(r-1))
		}
	}
	for j, c := range curRank {
		if in(c) && !o.matched[j] {
			o.emitRow(types.Insert, cur[j], int(c-1))
		}
	}
}

// emitInsert emits the changes within ranks [Start, End] of inserting row
// at position pos of the kept rows old (the last one dropped if the list
// is full).
func (o *rankMemOp) emitInsert(old [][]types.Value, pos int, row []types.Value) {
	n := len(old)
	newLen := min(n+1, o.end)
	newAt := func(r int) []types.Value {
		switch {
		case r < pos:
			return old[r]
		case r == pos:
			return row
		}
		return old[r-1]
	}
	lo := int(o.spec.Start) - 1
	if o.spec.OutputRank {
		// Position by position: ranks pos+1.. change.
		for r := max(pos, lo); r < newLen; r++ {
			if r < n {
				if !sameRow(old[r], newAt(r)) {
					o.emitRow(types.UpdateBefore, old[r], r)
					o.emitRow(types.UpdateAfter, newAt(r), r)
				}
			} else {
				o.emitRow(types.Insert, newAt(r), r)
			}
		}
		return
	}
	// As multisets of rows in the range: the old rows [lo, n) against
	// the new [lo, newLen).
	if lo >= newLen {
		return
	}
	o.matched = append(o.matched[:0], make([]bool, newLen-lo)...)
	for r := lo; r < n; r++ {
		found := false
		for j := lo; j < newLen; j++ {
			if !o.matched[j-lo] && sameRow(old[r], newAt(j)) {
				o.matched[j-lo], found = true, true
				break
			}
		}
		if !found {
			o.emitRow(types.Delete, old[r], r)
		}
	}
	for j := lo; j < newLen; j++ {
		if !o.matched[j-lo] {
			o.emitRow(types.Insert, newAt(j), j)
		}
	}
}

// sameRow reports whether two rows hold identical values.
func sameRow(a, b []types.Value) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// emitRow appends row (and its rank, position r + 1) to the output.
func (o *rankMemOp) emitRow(kind types.RowKind, row []types.Value, r int) {
	dst := growRow(o.out, kind) // every value written below, not cleared first
	if o.pick != nil {
		for k, c := range o.pick {
			switch {
			case c < len(row):
				dst[k] = row[c]
			case c == o.w:
				dst[k] = types.BigIntValue(int64(r + 1))
			default:
				dst[k] = types.Value{}
			}
		}
		return
	}
	n := copy(dst, row)
	clear(dst[n:o.w])
	if o.spec.OutputRank {
		dst[o.w] = types.BigIntValue(int64(r + 1))
	}
}

// pickOutput implements outputPicker: every row the Top-N emits goes
// through emitRow, which then writes only the columns cols (an input
// column, or the rank's, w, when it is output) in that order; the rows
// emitted do not change, so the output is that of a Calc picking cols
// after it.
func (o *rankMemOp) pickOutput(cols []int) bool {
	w := o.w
	if o.spec.OutputRank {
		w++
	}
	for _, c := range cols {
		if c < 0 || c >= w {
			return false
		}
	}
	o.pick = slices.Clone(cols)
	o.out = types.NewBatch(len(cols), 64)
	return true
}

// AppendRecordKey implements state.RecordSource.
func (o *rankMemOp) AppendRecordKey(dst []byte, slot int32) []byte {
	return o.keys.AppendKey(dst, slot)
}

// AppendRecord implements state.RecordSource: rankOp's "top" record.
func (o *rankMemOp) AppendRecord(dst []byte, slot int32) []byte {
	p := o.part(slot)
	for j, sk := range p.sks {
		dst = binary.AppendUvarint(dst, uint64(len(sk)))
		dst = append(dst, sk...)
		dst = binary.AppendUvarint(dst, uint64(state.ValuesSize(p.rows[j])))
		dst = state.Values{}.Append(dst, p.rows[j])
	}
	return dst
}

// EncodedSize implements state.SizeHinter: the length of AppendRecord's
// record (the only part).
func (o *rankMemOp) EncodedSize(slot int32, _ int32) int {
	p := o.part(slot)
	n := 0
	for j, sk := range p.sks {
		rs := state.ValuesSize(p.rows[j])
		n += state.UvarintSize(uint64(len(sk))) + len(sk) + state.UvarintSize(uint64(rs)) + rs
	}
	return n
}

// LoadRecord implements state.RecordSource.
func (o *rankMemOp) LoadRecord(key, rec []byte) (int32, error) {
	bad := fmt.Errorf("Top-N state: malformed partition record for key %x", key)
	var sks [][]byte
	var rows [][]types.Value
	for p := 0; p < len(rec); {
		var parts [2][]byte
		for f := range parts {
			n, w := binary.Uvarint(rec[p:])
			if w <= 0 || p+w+int(n) > len(rec) {
				return 0, bad
			}
			parts[f] = rec[p+w : p+w+int(n)]
			p += w + int(n)
		}
		row := make([]types.Value, o.w)
		src := parts[1]
		for i := range row {
			v, rest, err := state.DecodeValue(src)
			if err != nil {
				return 0, fmt.Errorf("Top-N state: row: %w", err)
			}
			row[i] = state.WithColumnKind(v, o.spec.Kinds[i])
			src = rest
		}
		sks = append(sks, append([]byte(nil), parts[0]...))
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return 0, bad
	}
	s := o.newSlot(rows[0])
	p := o.part(s)
	p.sks, p.rows = sks, rows
	o.setBound(s, p)
	return s, nil
}

// DropRecords implements state.RecordSource.
func (o *rankMemOp) DropRecords() {
	o.keys.Reset()
	o.parts.Clear()
	clear(o.full)
}

// removeSlot forgets slot's partition (its TTL expired), without output.
func (o *rankMemOp) removeSlot(s int32) error {
	if err := o.st.Removed(s); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	o.keys.Remove(s)
	p := o.part(s)
	p.sks, p.rows = p.sks[:0], p.rows[:0]
	o.bound[s], o.full[s] = 0, false
	return nil
}

// expires implements expiringOperator.
func (o *rankMemOp) expires() bool { return o.st.HasTTL() }

// nextExpiry implements expiringOperator.
func (o *rankMemOp) nextExpiry() (int64, bool) { return o.st.NextExpiry() }

// advanceTime implements expiringOperator: a partition not written for the
// TTL is forgotten without output.
func (o *rankMemOp) advanceTime(ms int64) error {
	o.st.SetTime(ms)
	if !o.st.ExpiryDue() {
		return nil
	}
	if err := o.st.Expire(o.removeSlot); err != nil {
		return fmt.Errorf("state of %s: %w", o.name, err)
	}
	return nil
}

// Finish implements Operator.
func (o *rankMemOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *rankMemOp) Close() error { return nil }
