package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// NewOverAggUpdating returns the OVER aggregate of spec over any input
// (insert-only or updating), ordered by spec.Order (any columns, not only
// a time attribute); spec.TimeCol and spec.Rowtime are unused. Rows are
// processed on arrival, without event-time buffering. Each partition keeps
// its rows in a SortedMapState keyed by (sort key, encoded row, arrival
// number), so rows of equal sort key are ordered by their values: the
// result does not depend on arrival order. A +I/+U inserts its row, a
// -U/-D removes an equal row (none: ignored, as the Retract Top-N does),
// and every row whose frame holds the changed position has its aggregates
// computed before and after the change: under ROWS n PRECEDING the n rows
// after it, under UNBOUNDED PRECEDING every later row (and, for RANGE, the
// changed row's peers). Results are not kept: a row's last emitted
// results are those of its frame before the change, recomputed (the
// computation is a function of the frame's rows in order). The output is
// an updating changelog: the inserted row as +I, the removed one as -D
// with its last values, and each other row whose values changed as -U old
// / +U new. spec.Frame must be ROWS n, ROWS UNBOUNDED or RANGE UNBOUNDED.
func NewOverAggUpdating(spec OverSpec) func() Operator {
	return func() Operator { return &overUpdOp{spec: spec} }
}

// overEntry is one row of a partition in the order of the frame: its map
// key (kept for the changed rows, and for the tail under RANGE: place and
// peer compare keys), the length of its encoded row (within the key,
// before the 8-byte arrival number) and its decoded row (for rows before
// the change only the columns the calls read, for the others those and
// the columns emitted: readTail).
type overEntry struct {
	mk       []byte
	encLen   int
	row      []types.Value
	inserted bool // the row the change inserts (no old results)
	removed  bool // the row the change removes (no new results)
}

type overUpdOp struct {
	spec OverSpec
	rk   *RowKey
	k    *state.Keyed
	accs []accumulator
	// exact: every accumulator's retract undoes its add exactly (integer
	// and DECIMAL sums, counts, MIN/MAX), so a ROWS n frame slides.
	exact bool
	// need marks the columns the calls read; lastNeed is the last one.
	need     []bool
	lastNeed int
	// readTail marks the columns decoded for the rows whose results are
	// computed (they may be emitted): need and the emitted input columns
	// (all without pick); lastTail is the last one.
	readTail []bool
	lastTail int
	// pick, when set (pickOutput), is the output: per column, an input
	// column (< len(Kinds)) or a call's result (len(Kinds)+i).
	pick []int
	out  *types.Batch
	// lead is how many leading columns are partition columns: a stored
	// row of the partition most likely starts with the same bytes as the
	// change's row (leadLen bytes, decoded into leadVals at most once a
	// change, when a stored row's leading column is read),
	// so decode takes those columns from leadVals instead of decoding them.
	lead     int
	leadLen  int
	leadVals []types.Value
	// leadDecoded: leadVals holds this change's leading columns (decoded
	// at the first stored row that needs them, not at every change).
	leadDecoded bool
	// slides, when set (a ROWS n frame whose calls are all integer SUM,
	// AVG and COUNT), are the calls' accumulators as their types:
	// resultsRows slides their sums in place, with no call per row.
	slides []intSlide

	// sort key | row | seq → uvarint len(row). Earlier versions stored
	// uvarint len | row | results; only the length is read.
	rows *state.SortedMapState[[]byte, []byte]
	seq  *state.ValueState[int64]

	sk, mk, enc, val, hi []byte
	arena                []byte
	before, tail         []overEntry
	removed              overEntry // the row a retraction removes, if hasRemoved
	hasRemoved           bool
	vals                 []types.Value // decoded values, backing the entries' rows (slot)
	frame                []int32       // results: before (in order) and one version of the tail (frameEntry)
	oldRes, newRes       []types.Value // per tail entry, len(accs) results each
}

// Open implements Operator.
func (o *overUpdOp) Open(ctx *OpContext) error {
	f := o.spec.Frame
	if !f.IsRows && !f.Unbounded {
		return fmt.Errorf("OverAggregate over updating input: RANGE BETWEEN INTERVAL … PRECEDING is not supported (use ROWS, or RANGE UNBOUNDED PRECEDING)")
	}
	o.rk = NewRowKey(o.spec.Partition, ctx.MaxParallelism)
	o.out = types.NewBatch(len(o.spec.Kinds)+len(o.spec.Calls), 64)
	o.pick = nil
	o.accs = o.accs[:0]
	o.need = make([]bool, len(o.spec.Kinds))
	o.lastNeed = -1
	o.exact = true
	for _, c := range o.spec.Calls {
		a, err := NewAccumulator(c)
		if err != nil {
			return err
		}
		a.grow() // slot 0; slot 1 is the second version of resultsRows
		a.grow()
		o.accs = append(o.accs, a)
		o.exact = o.exact && exactRetract(a)
		if c.Arg >= 0 && c.Arg < len(o.need) {
			o.need[c.Arg] = true
			o.lastNeed = max(o.lastNeed, c.Arg)
		}
	}
	o.lead = 0
	for o.lead < len(o.spec.Kinds) && slices.Contains(o.spec.Partition, o.lead) {
		o.lead++
	}
	o.leadVals = make([]types.Value, o.lead)
	o.slides = nil
	if f.IsRows && !f.Unbounded {
		o.slides = intSlides(o.accs, o.spec.Calls)
	}
	o.setReadTail()
	return nil
}

// intSlide is a call whose sliding resultsRows updates in place: an
// integer SUM or AVG (sum, non-NULL count: sumAcc's own state, so its
// result and overflow are the accumulator's) or a COUNT.
type intSlide struct {
	arg  int // the argument column, < 0 for COUNT(*)
	sum  *sumAcc
	cnt  *countAcc
	star bool // COUNT(*): every row counts
}

// intSlides returns the intSlide of each of accs (the accumulators of
// calls), or nil unless every one is an integer SUM or AVG or a COUNT.
func intSlides(accs []accumulator, calls []aggfunc.Call) []intSlide {
	var out []intSlide
	for i, a := range accs {
		s := intSlide{arg: calls[i].Arg}
		switch a := a.(type) {
		case *sumAcc:
			if a.floatIn || s.arg < 0 {
				return nil
			}
			s.sum = a
		case *countAcc:
			s.cnt, s.star = a, a.star || s.arg < 0
		default:
			return nil
		}
		out = append(out, s)
	}
	return out
}

// slide adds row to the accumulators' slot g (retract: takes it out):
// in place as their add and retract do (slides), else by calling them.
func (o *overUpdOp) slide(g int32, row []types.Value, retract bool) {
	if o.slides == nil {
		if retract {
			o.retractFrom(g, row)
		} else {
			o.addTo(g, row)
		}
		return
	}
	for i := range o.slides {
		c := &o.slides[i]
		if c.star {
			if retract {
				c.cnt.n[g]--
			} else {
				c.cnt.n[g]++
			}
			continue
		}
		v := &row[c.arg]
		if v.IsNull() {
			continue
		}
		switch {
		case c.cnt != nil && retract:
			c.cnt.n[g]--
		case c.cnt != nil:
			c.cnt.n[g]++
		case retract:
			st := &c.sum.s[g]
			st.sum -= uint64(v.Int())
			st.n--
		default:
			st := &c.sum.s[g]
			st.sum += uint64(v.Int())
			st.n++
		}
	}
}

// setReadTail sets readTail and lastTail from need and pick.
func (o *overUpdOp) setReadTail() {
	o.readTail = slices.Clone(o.need)
	o.lastTail = o.lastNeed
	for i := range o.readTail {
		if o.pick == nil || slices.Contains(o.pick, i) {
			o.readTail[i] = true
			o.lastTail = max(o.lastTail, i)
		}
	}
}

// pickOutput implements outputPicker: the operator emits, of each row it
// would emit (the input row, then the calls' results), the columns cols
// in that order. It changes which rows are emitted in no way (a -U/+U
// pair is emitted when the results change, picked or not), so its output
// is that of a Calc picking cols after it.
func (o *overUpdOp) pickOutput(cols []int) bool {
	w := len(o.spec.Kinds) + len(o.spec.Calls)
	for _, c := range cols {
		if c < 0 || c >= w {
			return false
		}
	}
	o.pick = slices.Clone(cols)
	o.out = types.NewBatch(len(cols), 64)
	o.setReadTail()
	return true
}

// exactRetract reports whether a's retract exactly undoes its add, so
// that its result over a frame does not depend on the adds and retracts
// that led to it: integer sums and counts (modular int64), DECIMAL sums
// (exact in 192 bits), MIN/MAX of other than floating point and DECIMAL
// (a multiset shows the first added of equal values: for DOUBLE 0 and -0,
// for DECIMAL 5.0 and 5.00, so its result would depend on where the frame
// began sliding). Not DOUBLE sums (rounding).
func exactRetract(a accumulator) bool {
	switch a := a.(type) {
	case *countAcc, *decSumAcc:
		return true
	case *sumAcc:
		return !a.floatIn
	case *minMaxAcc:
		return !a.insertOnly && !a.typ.Kind.IsFloat() && a.typ.Kind != types.KindDecimal
	}
	return false
}

// OpenKeyed implements KeyedOperator.
func (o *overUpdOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	// Iterations copy what they keep into the arena (entry).
	bytesC := state.Codec[[]byte](state.BytesView{})
	var err error
	if o.rows, err = state.NewSortedMapState(k, "urows", bytesC, bytesC); err != nil {
		return err
	}
	o.seq, err = state.NewValueState(k, "useq", state.Codec[int64](state.Int64{}))
	return err
}

// save copies b into the arena and returns the copy.
func (o *overUpdOp) save(b []byte) []byte {
	n := len(o.arena)
	o.arena = append(o.arena, b...)
	return o.arena[n:len(o.arena):len(o.arena)]
}

// encOf returns the encoded row of a stored map key and value: the value
// starts with the length of the encoded row, which the key holds before
// its 8-byte arrival number.
func encOf(mk, v []byte) ([]byte, error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || len(mk) < 8 || n > uint64(len(mk)-8) {
		return nil, fmt.Errorf("OverAggregate state: malformed row entry")
	}
	return mk[len(mk)-8-int(n) : len(mk)-8], nil
}

// slot returns room for one decoded row in vals. When vals grows, the
// rows handed out before stay in the old array (which they keep alive):
// they are not written again.
func (o *overUpdOp) slot() []types.Value {
	w := len(o.spec.Kinds)
	n := len(o.vals)
	if cap(o.vals)-n < w {
		o.vals = slices.Grow(o.vals, w)
	}
	o.vals = o.vals[:n+w]
	return o.vals[n : n+w : n+w]
}

// entry makes the entry of the stored row (mk, v) whose results are
// computed: its row decoded (readTail), its key copied into the arena if
// keep (the scan's bytes are valid only during the call).
func (o *overUpdOp) entry(mk, v []byte, keep bool) (overEntry, error) {
	enc, err := encOf(mk, v)
	if err != nil {
		return overEntry{}, err
	}
	e := overEntry{encLen: len(enc), row: o.slot()}
	if keep {
		e.mk = o.save(mk)
	}
	return e, o.decode(e.row, enc, o.readTail, o.lastTail)
}

// Process implements Operator.
func (o *overUpdOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	for i := range b.Len() {
		row := b.Row(i)
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		if err := o.change(b.Kinds[i], row); err != nil {
			return err
		}
		if o.out.Len() >= 1024 {
			if err := out.Emit(o.out); err != nil {
				return err
			}
			o.out.Reset()
		}
	}
	if o.out.Len() > 0 {
		return out.Emit(o.out)
	}
	return nil
}

// change applies one input row to its partition and emits what changed.
func (o *overUpdOp) change(kind types.RowKind, row []types.Value) error {
	o.arena = o.arena[:0]
	o.vals = o.vals[:0]
	o.before, o.tail = o.before[:0], o.tail[:0]
	o.removed, o.hasRemoved = overEntry{}, false
	o.sk = encodeSortKey(o.sk[:0], o.spec.Order, row)
	o.encodeChange(row)
	prefixLen := len(o.sk) + len(o.enc)
	insert := kind == types.Insert || kind == types.UpdateAfter
	if insert {
		n, _, err := o.seq.Value()
		if err != nil {
			return err
		}
		if err := o.seq.Update(n + 1); err != nil {
			return err
		}
		o.mk = binary.BigEndian.AppendUint64(append(append(o.mk[:0], o.sk...), o.enc...), uint64(n))
	} else if !o.spec.Frame.IsRows {
		// The first kept row equal to this one (equal rows are adjacent).
		o.mk = append(append(o.mk[:0], o.sk...), o.enc...)
		o.hi = append(append(o.hi[:0], o.mk...), 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
		found := false
		err := o.rows.Range(o.mk, o.hi, func(mk, _ []byte) (bool, error) {
			if len(mk) == prefixLen+8 {
				o.mk, found = append(o.mk[:0], mk...), true
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		if !found {
			return nil // nothing to retract (the row was never kept)
		}
	} else {
		o.mk = append(append(o.mk[:0], o.sk...), o.enc...)
	}
	f := o.spec.Frame
	// One two-way scan around the change reads the rows before it whose
	// values the affected rows need: the n rows before it (ROWS n), all
	// rows before it (ROWS UNBOUNDED), all rows of a smaller sort key
	// (RANGE UNBOUNDED: the change's peers are in the tail, they change
	// too); and the affected rows: the changed row and the n rows after
	// it (ROWS n), or every row from it (ROWS UNBOUNDED) or from its first
	// peer (RANGE UNBOUNDED).
	at := o.mk
	if !f.IsRows {
		at = o.sk
	}
	// A ROWS retraction's scan from the row's prefix (o.mk is sk | enc)
	// finds the first kept row equal to it (equal rows are adjacent) and
	// the n rows after it; skipped counts the entries it passes before
	// (longer keys with that prefix), which belong before the row.
	rowsRetract := !insert && f.IsRows
	skipped := 0
	err := o.rows.Around(at, o.addBefore, func(mk, v []byte) (bool, error) {
		if rowsRetract && !o.hasRemoved {
			if !bytes.HasPrefix(mk, o.mk) {
				return false, nil // past the row's entries: never kept
			}
			if len(mk) != prefixLen+8 {
				skipped++
				return true, nil
			}
			return o.takeRemoved(mk, v)
		}
		if !insert && !o.hasRemoved && bytes.Equal(mk, o.mk) {
			return o.takeRemoved(mk, v)
		}
		return o.addTail(mk, v)
	})
	if err != nil {
		return err
	}
	if rowsRetract {
		if !o.hasRemoved {
			return nil // nothing to retract (the row was never kept)
		}
		o.mk = append(o.mk[:0], o.removed.mk...)
		if skipped > 0 {
			// Rows between the prefix and the removed row: read the rows
			// before the removed one again.
			o.before = o.before[:0]
			err := o.rows.DescendBelow(o.mk, o.addBefore)
			if err != nil {
				return err
			}
		}
	}
	if insert {
		e := overEntry{mk: o.save(o.mk), encLen: len(o.enc), row: o.slot(), inserted: true}
		if err := o.decode(e.row, o.enc, o.readTail, o.lastTail); err != nil {
			return err
		}
		o.place(e)
		o.val = binary.AppendUvarint(o.val[:0], uint64(len(o.enc)))
		if err := o.rows.Put(o.mk, o.val); err != nil {
			return err
		}
	}
	if o.hasRemoved {
		o.removed.removed = true
		o.place(o.removed)
		if err := o.rows.Remove(o.removed.mk); err != nil {
			return err
		}
	}
	return o.recompute()
}

// place puts e, the changed row, into the tail in map key order: first
// for ROWS (the tail is the rows after it), among its peers for RANGE.
func (o *overUpdOp) place(e overEntry) {
	pos := 0
	if !o.spec.Frame.IsRows {
		pos = len(o.tail)
		for j := range o.tail {
			if bytes.Compare(o.tail[j].mk, e.mk) > 0 {
				pos = j
				break
			}
		}
	}
	o.tail = append(o.tail, overEntry{})
	copy(o.tail[pos+1:], o.tail[pos:])
	o.tail[pos] = e
}

// takeRemoved keeps the stored row (mk, v) as the row a retraction
// removes; the scan goes on to the rows after it.
func (o *overUpdOp) takeRemoved(mk, v []byte) (bool, error) {
	e, err := o.entry(mk, v, true)
	o.removed, o.hasRemoved = e, true
	return true, err
}

// addBefore appends the stored row (mk, v) to before, unless it already
// holds the n rows before the change (ROWS n); it returns whether the
// scan goes on.
func (o *overUpdOp) addBefore(mk, v []byte) (bool, error) {
	if f := o.spec.Frame; !f.Unbounded && int64(len(o.before)) >= f.Rows {
		return false, nil
	}
	enc, err := encOf(mk, v)
	if err != nil {
		return false, err
	}
	e := overEntry{encLen: len(enc), row: o.slot()}
	if err := o.decode(e.row, enc, o.need, o.lastNeed); err != nil {
		return false, err
	}
	o.before = append(o.before, e)
	return true, nil
}

// addTail appends the stored row (mk, v) to the tail, unless the tail
// already holds the n rows after the change (ROWS n); it returns whether
// the scan goes on.
func (o *overUpdOp) addTail(mk, v []byte) (bool, error) {
	f := o.spec.Frame
	if f.IsRows && !f.Unbounded && int64(len(o.tail)) >= f.Rows {
		return false, nil
	}
	e, err := o.entry(mk, v, !f.IsRows)
	if err != nil {
		return false, err
	}
	o.tail = append(o.tail, e)
	return true, nil
}

// encodeChange encodes the change's row into enc. A row's encoding is its
// columns' encodings one after the other, so the leading partition
// columns' bytes are its first leadLen.
func (o *overUpdOp) encodeChange(row []types.Value) {
	o.enc = state.Values{}.Append(o.enc[:0], row[:o.lead])
	o.leadLen, o.leadDecoded = len(o.enc), false
	o.enc = state.Values{}.Append(o.enc, row[o.lead:])
}

// decodeLead decodes the change's leading partition columns from enc
// into leadVals (once a change): a stored row with the same leading bytes
// has the same values, decoded from the same bytes.
func (o *overUpdOp) decodeLead() error {
	src := o.enc
	for i := range o.lead {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return fmt.Errorf("OverAggregate: row: %w", err)
		}
		o.leadVals[i] = state.WithColumnKind(v, o.spec.Kinds[i])
		src = rest
	}
	o.leadDecoded = true
	return nil
}

// hasLead reports whether src starts with the leadLen bytes of the
// change's leading partition columns: up to 16 bytes (a BIGINT is 9) as
// two overlapping words.
func (o *overUpdOp) hasLead(src []byte) bool {
	n := o.leadLen
	if len(src) < n {
		return false
	}
	if n < 8 || n > 16 {
		return string(src[:n]) == string(o.enc[:n])
	}
	le := binary.LittleEndian
	return le.Uint64(src) == le.Uint64(o.enc) && le.Uint64(src[n-8:]) == le.Uint64(o.enc[n-8:])
}

// decode decodes the columns of src marked in read (up to last, the last
// one marked) into dst; the others of dst are left as they are. When src
// starts with the change's encoded leading partition columns (a row of
// the same partition), those are taken from leadVals (the same bytes
// decode to the same values).
func (o *overUpdOp) decode(dst []types.Value, src []byte, read []bool, last int) error {
	i := 0
	if o.leadLen > 0 && o.hasLead(src) {
		for ; i < o.lead; i++ {
			if i <= last && read[i] {
				if !o.leadDecoded {
					if err := o.decodeLead(); err != nil {
						return err
					}
				}
				dst[i] = o.leadVals[i]
			}
		}
		src = src[o.leadLen:]
	}
	for ; i <= last; i++ {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return fmt.Errorf("OverAggregate state: row: %w", err)
		}
		if read[i] {
			dst[i] = state.WithColumnKind(v, o.spec.Kinds[i])
		}
		src = rest
	}
	return nil
}

func (o *overUpdOp) arg(i int, row []types.Value) types.Value {
	if a := o.spec.Calls[i].Arg; a >= 0 {
		return row[a]
	}
	return types.BigIntValue(1)
}

func (o *overUpdOp) add(row []types.Value) { o.addTo(0, row) }

func (o *overUpdOp) retract(row []types.Value) { o.retractFrom(0, row) }

// addTo adds row to the accumulators' slot g.
func (o *overUpdOp) addTo(g int32, row []types.Value) {
	for i, a := range o.accs {
		a.add(g, o.arg(i, row))
	}
}

// retractFrom takes row out of the accumulators' slot g.
func (o *overUpdOp) retractFrom(g int32, row []types.Value) {
	for i, a := range o.accs {
		a.retract(g, o.arg(i, row))
	}
}

func (o *overUpdOp) reset() {
	for _, a := range o.accs {
		a.reset(0)
	}
}

// recompute computes the tail's results before the change (every entry
// but the inserted one) and after it (every entry but the removed one),
// and emits the differences: the removed row as -D with its old results,
// the inserted one as +I, each other whose results changed as -U / +U.
func (o *overUpdOp) recompute() error {
	nc := len(o.accs)
	n := len(o.tail) * nc
	if cap(o.oldRes) < n {
		o.oldRes, o.newRes = make([]types.Value, n), make([]types.Value, n)
	}
	o.oldRes, o.newRes = o.oldRes[:n], o.newRes[:n]
	if f := o.spec.Frame; f.IsRows && !f.Unbounded && o.exact && len(o.tail) > 0 && (o.tail[0].inserted || o.tail[0].removed) {
		o.resultsRows()
	} else {
		o.results(o.oldRes, true)
		o.results(o.newRes, false)
	}
	// At most two rows a tail entry: room for them once, not a check a row.
	if w, b := o.out.Width, o.out; cap(b.Vals)-len(b.Vals) < 2*len(o.tail)*w || cap(b.Kinds)-len(b.Kinds) < 2*len(o.tail) {
		b.Vals = slices.Grow(b.Vals, 2*len(o.tail)*w)
		b.Kinds = slices.Grow(b.Kinds, 2*len(o.tail))
	}
	for j := range o.tail {
		e := &o.tail[j]
		old, cur := o.oldRes[j*nc:(j+1)*nc], o.newRes[j*nc:(j+1)*nc]
		switch {
		case e.removed:
			o.emit(types.Delete, e.row, old)
		case e.inserted:
			o.emit(types.Insert, e.row, cur)
		default:
			if slices.Equal(old, cur) { // identical values (else re-emitted)
				continue
			}
			o.emit(types.UpdateBefore, e.row, old)
			o.emit(types.UpdateAfter, e.row, cur)
		}
	}
	return nil
}

// emit appends to out the row row with the results res (every value, or
// the columns pick). out has room for the row (recompute made it).
func (o *overUpdOp) emit(kind types.RowKind, row, res []types.Value) {
	b := o.out
	n, w := len(b.Vals), b.Width
	b.Kinds = append(b.Kinds, kind)
	b.Vals = b.Vals[:n+w]
	r := b.Vals[n : n+w : n+w] // every value is set below
	if o.pick == nil {
		copy(r, row)
		copy(r[len(row):], res)
		return
	}
	nr := len(row)
	for k, c := range o.pick {
		if c < nr {
			r[k] = row[c]
		} else {
			r[k] = res[c-nr]
		}
	}
}

// results computes the results of the tail's entries in one version of
// the partition, before the change (old: without the inserted row) or
// after it (without the removed one), into dst (len(accs) per tail entry,
// by the entry's index; an entry not in the version is left alone).
func (o *overUpdOp) results(dst []types.Value, old bool) {
	// The frame as indexes (no pointer writes): before[-1-k] for k < 0,
	// tail[k] otherwise.
	o.frame = o.frame[:0]
	for j := len(o.before) - 1; j >= 0; j-- { // before is in descending order
		o.frame = append(o.frame, int32(-1-j))
	}
	nb := len(o.frame)
	for j := range o.tail {
		if e := &o.tail[j]; !(old && e.inserted) && !(!old && e.removed) {
			o.frame = append(o.frame, int32(j))
		}
	}
	nc := len(o.accs)
	put := func(i int) { // the results of frame[i], a tail entry
		j := int(o.frame[i])
		for c, a := range o.accs {
			dst[j*nc+c] = a.result(0)
		}
	}
	fr := o.frame
	f := o.spec.Frame
	switch {
	case f.Unbounded && f.IsRows:
		o.reset()
		for i, k := range fr {
			o.add(o.frameEntry(k).row)
			if i >= nb {
				put(i)
			}
		}
	case f.Unbounded: // RANGE: the rows before, then each group of peers together
		o.reset()
		for _, k := range fr[:nb] {
			o.add(o.frameEntry(k).row)
		}
		for i := nb; i < len(fr); {
			end := i
			for end < len(fr) && o.peer(o.frameEntry(fr[i]), o.frameEntry(fr[end])) {
				o.add(o.frameEntry(fr[end]).row)
				end++
			}
			for ; i < end; i++ {
				put(i)
			}
		}
	default:
		n := int(f.Rows)
		for i := nb; i < len(fr); i++ {
			if i == nb || !o.exact {
				o.reset()
				for _, k := range fr[max(0, i-n) : i+1] {
					o.add(o.frameEntry(k).row)
				}
			} else {
				if i-n-1 >= 0 {
					o.retract(o.frameEntry(fr[i-n-1]).row)
				}
				o.add(o.frameEntry(fr[i]).row)
			}
			put(i)
		}
	}
}

// resultsRows is results of both versions in one pass, for a ROWS n
// frame of accumulators whose retract undoes their add exactly (exact):
// the changed row x is tail[0], in one version only (inserted: the new
// one; removed: the old one), every other tail entry is in both, and
// before holds at most n rows. Slot 0 slides over the version with x
// (before, oldest first, then x, then the tail), slot 1 over the one
// without (before, then the tail after x); they share the rows before
// x, added once to slot 0 and copied (reset and merge) into slot 1.
// An exact accumulator's result depends only on the rows in its frame,
// so it equals results' (which adds each frame's rows in order). Integer
// SUM, AVG and COUNT calls slide in place (slides).
func (o *overUpdOp) resultsRows() {
	n := int(o.spec.Frame.Rows)
	nb := len(o.before)
	x := &o.tail[0]
	with, wo := o.newRes, o.oldRes
	if x.removed {
		with, wo = o.oldRes, o.newRes
	}
	nc := len(o.accs)
	put := func(dst []types.Value, j int, g int32) {
		for c, a := range o.accs {
			dst[j*nc+c] = a.result(g)
		}
	}
	// withAt and woAt are the rows at position p of each version.
	withAt := func(p int) []types.Value {
		switch {
		case p < nb:
			return o.before[nb-1-p].row
		case p == nb:
			return x.row
		}
		return o.tail[p-nb].row
	}
	woAt := func(p int) []types.Value {
		if p < nb {
			return o.before[nb-1-p].row
		}
		return o.tail[p-nb+1].row
	}
	for _, a := range o.accs {
		a.reset(0)
	}
	for p := max(0, nb-n); p < nb; p++ {
		o.slide(0, withAt(p), false)
	}
	for _, a := range o.accs {
		a.reset(1)
		a.merge(1, 0)
	}
	o.slide(0, x.row, false)
	put(with, 0, 0)
	for j := 1; j < len(o.tail); j++ {
		row := o.tail[j].row
		// tail[j] is at nb+j with x, nb+j-1 without: the row n before
		// it leaves the frame.
		if p := nb + j - n - 1; p >= 0 {
			o.slide(0, withAt(p), true)
		}
		o.slide(0, row, false)
		put(with, j, 0)
		if p := nb + j - n - 2; p >= 0 {
			o.slide(1, woAt(p), true)
		}
		o.slide(1, row, false)
		put(wo, j, 1)
	}
}

// frameEntry is the entry of frame index k (results).
func (o *overUpdOp) frameEntry(k int32) *overEntry {
	if k < 0 {
		return &o.before[-1-k]
	}
	return &o.tail[k]
}

// peer reports whether entries a and b have the same sort key: their map
// keys are sort key | row | seq.
func (o *overUpdOp) peer(a, b *overEntry) bool {
	return bytes.Equal(a.mk[:len(a.mk)-8-a.encLen], b.mk[:len(b.mk)-8-b.encLen])
}

// OnTimer implements KeyedOperator (no timers).
func (o *overUpdOp) OnTimer(state.Timer, Emitter) error { return nil }

// Finish implements Operator.
func (o *overUpdOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *overUpdOp) Close() error { return nil }

var _ KeyedOperator = (*overUpdOp)(nil)
