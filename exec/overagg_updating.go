package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"

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
// recomputed: under ROWS n PRECEDING the n rows after it, under UNBOUNDED
// PRECEDING every later row (and, for RANGE, the changed row's peers).
// The output is an updating changelog: the inserted row as +I, the
// removed one as -D with its last values, and each other row whose values
// changed as -U old / +U new. spec.Frame must be ROWS n, ROWS UNBOUNDED
// or RANGE UNBOUNDED.
func NewOverAggUpdating(spec OverSpec) func() Operator {
	return func() Operator { return &overUpdOp{spec: spec} }
}

// overEntry is one row of a partition in the order of the frame: its map
// key, encoded row, decoded row and saved results (state.Values of the
// calls' results; nil for a row just inserted).
type overEntry struct {
	mk, enc, res []byte
	row          []types.Value
	inserted     bool
}

type overUpdOp struct {
	spec OverSpec
	rk   *RowKey
	k    *state.Keyed
	accs []accumulator
	out  *types.Batch

	rows *state.SortedMapState[[]byte, []byte] // sort key | row | seq → uvarint len | row | results
	seq  *state.ValueState[int64]

	sk, mk, enc, val, hi []byte
	arena                []byte
	before, tail         []overEntry
	removed              overEntry // the row a retraction removes, if hasRemoved
	hasRemoved           bool
	vals                 []types.Value // decoded values, backing the entries' rows
	res                  []types.Value
	resEnc               []byte
}

// Open implements Operator.
func (o *overUpdOp) Open(ctx *OpContext) error {
	f := o.spec.Frame
	if !f.IsRows && !f.Unbounded {
		return fmt.Errorf("OverAggregate over updating input: RANGE BETWEEN INTERVAL … PRECEDING is not supported (use ROWS, or RANGE UNBOUNDED PRECEDING)")
	}
	o.rk = NewRowKey(o.spec.Partition, ctx.MaxParallelism)
	o.out = types.NewBatch(len(o.spec.Kinds)+len(o.spec.Calls), 64)
	o.res = make([]types.Value, len(o.spec.Calls))
	for _, c := range o.spec.Calls {
		a, err := NewAccumulator(c)
		if err != nil {
			return err
		}
		a.grow()
		o.accs = append(o.accs, a)
	}
	return nil
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

// entry makes the entry of a stored map key and value.
func (o *overUpdOp) entry(mk, v []byte) (overEntry, error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || int(n) > len(v)-w {
		return overEntry{}, fmt.Errorf("OverAggregate state: malformed row entry")
	}
	return overEntry{mk: o.save(mk), enc: o.save(v[w : w+int(n)]), res: o.save(v[w+int(n):])}, nil
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
	o.before, o.tail = o.before[:0], o.tail[:0]
	o.removed, o.hasRemoved = overEntry{}, false
	o.sk = encodeSortKey(o.sk[:0], o.spec.Order, row)
	o.enc = state.Values{}.Append(o.enc[:0], row)
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
		// ROWS: one scan finds the first kept row equal to this one
		// (equal rows are adjacent) and the n rows after it.
		o.mk = append(append(o.mk[:0], o.sk...), o.enc...)
		err := o.rows.AscendFrom(o.mk, func(mk, v []byte) (bool, error) {
			if !o.hasRemoved {
				if !bytes.HasPrefix(mk, o.mk) {
					return false, nil // past the row's entries: never kept
				}
				if len(mk) != prefixLen+8 {
					return true, nil
				}
				return o.takeRemoved(mk, v)
			}
			return o.addTail(mk, v)
		})
		if err != nil {
			return err
		}
		if !o.hasRemoved {
			return nil // nothing to retract (the row was never kept)
		}
		o.mk = append(o.mk[:0], o.removed.mk...)
	}
	f := o.spec.Frame
	// The rows before the change whose values the affected rows need: the
	// n rows before it (ROWS n), all rows before it (ROWS UNBOUNDED), all
	// rows of a smaller sort key (RANGE UNBOUNDED: the change's peers are
	// in the tail, they change too).
	below := o.mk
	if !f.IsRows {
		below = o.sk
	}
	err := o.rows.DescendBelow(below, func(mk, v []byte) (bool, error) {
		if !f.Unbounded && int64(len(o.before)) >= f.Rows {
			return false, nil
		}
		e, err := o.entry(mk, v)
		if err != nil {
			return false, err
		}
		o.before = append(o.before, e)
		return true, nil
	})
	if err != nil {
		return err
	}
	// The affected rows: the changed row and the n rows after it (ROWS
	// n), or every row from it (ROWS UNBOUNDED) or from its first peer
	// (RANGE UNBOUNDED).
	from := o.mk
	if !f.IsRows {
		from = o.sk
	}
	if insert || !f.IsRows { // a ROWS retraction has its rows after it already
		err = o.rows.AscendFrom(from, func(mk, v []byte) (bool, error) {
			if !insert && !o.hasRemoved && bytes.Equal(mk, o.mk) {
				return o.takeRemoved(mk, v)
			}
			return o.addTail(mk, v)
		})
		if err != nil {
			return err
		}
	}
	removed, hasRemoved := o.removed, o.hasRemoved
	if insert {
		e := overEntry{mk: o.save(o.mk), enc: o.save(o.enc), inserted: true}
		// In place by map key (first for ROWS; among its peers for RANGE).
		pos := len(o.tail)
		for j := range o.tail {
			if bytes.Compare(o.tail[j].mk, e.mk) > 0 {
				pos = j
				break
			}
		}
		o.tail = append(o.tail, overEntry{})
		copy(o.tail[pos+1:], o.tail[pos:])
		o.tail[pos] = e
	}
	if err := o.decodeAll(); err != nil {
		return err
	}
	if hasRemoved {
		if err := o.rows.Remove(removed.mk); err != nil {
			return err
		}
		r := growRow(o.out, types.Delete) // emitInto writes every value
		if err := o.emitInto(r, removed.enc, removed.res); err != nil {
			return err
		}
	}
	return o.recompute()
}

// takeRemoved keeps the stored row (mk, v) as the row a retraction
// removes; the scan goes on to the rows after it.
func (o *overUpdOp) takeRemoved(mk, v []byte) (bool, error) {
	e, err := o.entry(mk, v)
	o.removed, o.hasRemoved = e, true
	return true, err
}

// addTail appends the stored row (mk, v) to the tail, unless the tail
// already holds the n rows after the change (ROWS n); it returns whether
// the scan goes on.
func (o *overUpdOp) addTail(mk, v []byte) (bool, error) {
	if f := o.spec.Frame; f.IsRows && !f.Unbounded && int64(len(o.tail)) >= f.Rows {
		return false, nil
	}
	e, err := o.entry(mk, v)
	if err != nil {
		return false, err
	}
	o.tail = append(o.tail, e)
	return true, nil
}

// decodeAll decodes the rows of before and tail.
func (o *overUpdOp) decodeAll() error {
	w := len(o.spec.Kinds)
	n := (len(o.before) + len(o.tail)) * w
	if cap(o.vals) < n {
		o.vals = make([]types.Value, n)
	}
	o.vals = o.vals[:n]
	p := 0
	for _, es := range [][]overEntry{o.before, o.tail} {
		for j := range es {
			row := o.vals[p : p+w : p+w]
			p += w
			if err := o.decodeRow(row, es[j].enc); err != nil {
				return err
			}
			es[j].row = row
		}
	}
	return nil
}

func (o *overUpdOp) decodeRow(dst []types.Value, src []byte) error {
	for i := range dst {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return fmt.Errorf("OverAggregate state: row: %w", err)
		}
		dst[i] = state.WithColumnKind(v, o.spec.Kinds[i])
		src = rest
	}
	return nil
}

// emitInto fills r with the row encoded in enc and the results in res.
func (o *overUpdOp) emitInto(r []types.Value, enc, res []byte) error {
	w := len(o.spec.Kinds)
	if err := o.decodeRow(r[:w], enc); err != nil {
		return err
	}
	return o.decodeResults(r[w:], res)
}

// decodeResults fills r with the results encoded in res.
func (o *overUpdOp) decodeResults(r []types.Value, res []byte) error {
	for i, c := range o.spec.Calls {
		v, rest, err := state.DecodeValue(res)
		if err != nil {
			return fmt.Errorf("OverAggregate state: results: %w", err)
		}
		r[i] = state.WithColumnKind(v, c.Type.Kind)
		res = rest
	}
	return nil
}

func (o *overUpdOp) arg(i int, row []types.Value) types.Value {
	if a := o.spec.Calls[i].Arg; a >= 0 {
		return row[a]
	}
	return types.BigIntValue(1)
}

func (o *overUpdOp) add(row []types.Value) {
	for i, a := range o.accs {
		a.add(0, o.arg(i, row))
	}
}

func (o *overUpdOp) reset() {
	for _, a := range o.accs {
		a.reset(0)
	}
}

// recompute computes the tail's results and emits those that changed.
// before is in descending order.
func (o *overUpdOp) recompute() error {
	f := o.spec.Frame
	nb := len(o.before)
	at := func(i int) []types.Value { // the i-th row of before ++ tail, in order
		if i < nb {
			return o.before[nb-1-i].row
		}
		return o.tail[i-nb].row
	}
	if f.Unbounded {
		o.reset()
		for i := range nb {
			o.add(at(i))
		}
	}
	for j := 0; j < len(o.tail); j++ {
		switch {
		case f.Unbounded && f.IsRows:
			o.add(o.tail[j].row)
		case f.Unbounded: // RANGE: add all peers of j, then they share the result
			end := j
			for end < len(o.tail) && o.peer(o.tail[j].row, o.tail[end].row) {
				o.add(o.tail[end].row)
				end++
			}
			for ; j < end; j++ {
				if err := o.result(&o.tail[j]); err != nil {
					return err
				}
			}
			j--
			continue
		default:
			o.reset()
			i := nb + j
			for q := max(0, i-int(f.Rows)); q <= i; q++ {
				o.add(at(q))
			}
		}
		if err := o.result(&o.tail[j]); err != nil {
			return err
		}
	}
	return nil
}

// peer reports whether rows a and b have the same sort key.
func (o *overUpdOp) peer(a, b []types.Value) bool {
	o.sk = encodeSortKey(o.sk[:0], o.spec.Order, a)
	o.hi = encodeSortKey(o.hi[:0], o.spec.Order, b)
	return bytes.Equal(o.sk, o.hi)
}

// result stores and emits e's current results when they changed.
func (o *overUpdOp) result(e *overEntry) error {
	for i, a := range o.accs {
		o.res[i] = a.result(0)
	}
	o.resEnc = state.Values{}.Append(o.resEnc[:0], o.res)
	if !e.inserted && bytes.Equal(o.resEnc, e.res) {
		return nil
	}
	w := len(o.spec.Kinds)
	if e.inserted {
		r := growRow(o.out, types.Insert) // row and results: every value
		copy(r, e.row)
		copy(r[w:], o.res)
	} else {
		r := growRow(o.out, types.UpdateBefore) // the row (decoded already) and its old results
		copy(r, e.row)
		if err := o.decodeResults(r[w:], e.res); err != nil {
			return err
		}
		r = growRow(o.out, types.UpdateAfter)
		copy(r, e.row)
		copy(r[w:], o.res)
	}
	o.val = binary.AppendUvarint(o.val[:0], uint64(len(e.enc)))
	o.val = append(append(o.val, e.enc...), o.resEnc...)
	return o.rows.Put(e.mk, o.val)
}

// OnTimer implements KeyedOperator (no timers).
func (o *overUpdOp) OnTimer(state.Timer, Emitter) error { return nil }

// Finish implements Operator.
func (o *overUpdOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *overUpdOp) Close() error { return nil }

var _ KeyedOperator = (*overUpdOp)(nil)
