package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// RankFunc is the ranking function of a Top-N.
type RankFunc uint8

// The ranking functions.
const (
	RowNumber RankFunc = iota // ROW_NUMBER(): 1, 2, 3, … (ties in arrival order)
	Rank                      // RANK(): ties share a rank, then a gap
	DenseRank                 // DENSE_RANK(): ties share a rank, no gap
)

func (f RankFunc) String() string {
	switch f {
	case Rank:
		return "RANK"
	case DenseRank:
		return "DENSE_RANK"
	}
	return "ROW_NUMBER"
}

// RankStrategy is how a Top-N keeps its rows, chosen by the planner from
// its input's changelog (as Flink's planner does).
type RankStrategy uint8

// The strategies.
const (
	// AppendFast: insert-only input; each partition keeps only the rows
	// within the rank range.
	AppendFast RankStrategy = iota
	// UpdateFast: input with a unique key (UniqueKey); each partition
	// keeps every row by that key, a +I/+U replaces the key's row, -U is
	// ignored and -D removes it.
	UpdateFast
	// Retract: any input; each partition keeps every row, and a -U/-D
	// removes an equal row.
	Retract
)

// SortKey is one column of a Top-N's ORDER BY. NULLs sort first unless
// NullsLast.
type SortKey struct {
	Col             int
	Desc, NullsLast bool
}

// RankSpec configures a Top-N operator (NewRank).
type RankSpec struct {
	Partition  []int
	Order      []SortKey
	Func       RankFunc
	Start, End int64 // the ranks emitted, inclusive (1 ≤ Start ≤ End)
	// OutputRank appends the rank (BIGINT) to each output row.
	OutputRank bool
	Strategy   RankStrategy
	UniqueKey  []int        // the input's unique key (UpdateFast)
	Kinds      []types.Kind // the input's column kinds
}

// NewRank returns the Top-N operator of spec: per partition (the current
// key of its keyed state) it keeps its input's rows ordered by spec.Order
// and emits the changes of the rows ranked Start to End as a changelog.
// With the rank in the output, a ROW_NUMBER's rank position changes as a
// -U/+U pair (+I when a position fills, -D when it empties); without it,
// and for RANK and DENSE_RANK with it, a row leaving the range is a -D and
// one entering it a +I.
//
// The append-only form (each function) keeps its partitions typed in
// memory (rankMemOp, checkpointed through state.Records); the updating
// strategies keep them in keyed state.
func NewRank(spec RankSpec) func() Operator {
	if spec.Strategy == AppendFast {
		return func() Operator { return &rankMemOp{spec: spec} }
	}
	return func() Operator { return &rankOp{spec: spec} }
}

// rankEntry is one kept row: its sort key (encodeSortKey), its encoded
// row (state.Values) and, for the sorted-map strategies, its map key.
type rankEntry struct {
	sk, row, mk []byte
	rank        int64
}

type rankOp struct {
	spec RankSpec
	rk   *RowKey
	k    *state.Keyed
	out  *types.Batch

	// AppendFast: the partition's rows within the range, one blob, and
	// apart from it the bound a new row must beat once the range is full
	// (most rows are rejected by reading the bound alone).
	top   *state.ValueState[[]byte]
	bound *state.ValueState[[]byte]
	// UpdateFast and Retract: every row, by sort key then arrival.
	rows  *state.SortedMapState[[]byte, []byte]
	seq   *state.ValueState[int64]
	byKey *state.MapState[[]byte, []byte] // UpdateFast: unique key → map key

	blob, bnd, sk, mk, ukey, enc []byte
	old, cur                     []rankEntry
	arena                        []byte // backing bytes of old and cur's entries
	rowBuf                       []types.Value
	bc                           *boundCache // AppendFast without a TTL: the partitions' bounds
	bcIdx                        int32       // the current row's partition in bc, -1 if none
}

// bufCodec is a codec of byte strings that decodes into a buffer it owns,
// so that reading state does not allocate; the result is valid until the
// next Decode.
type bufCodec struct{ buf *[]byte }

func (c bufCodec) Append(dst []byte, v []byte) []byte { return append(dst, v...) }
func (c bufCodec) Decode(src []byte) ([]byte, error) {
	*c.buf = append((*c.buf)[:0], src...)
	return *c.buf, nil
}

// Open implements Operator.
func (o *rankOp) Open(ctx *OpContext) error {
	o.rk = NewRowKey(o.spec.Partition, ctx.MaxParallelism)
	w := len(o.spec.Kinds)
	if o.spec.OutputRank {
		w++
	}
	o.out = types.NewBatch(w, 64)
	o.rowBuf = make([]types.Value, w)
	if o.spec.Strategy == AppendFast && ctx.StateTTL <= 0 {
		o.bc = newBoundCache(o.spec.Partition, o.spec.Kinds)
	}
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *rankOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	if o.spec.Strategy == AppendFast {
		if o.top, err = state.NewValueState(k, "top", state.Codec[[]byte](bufCodec{&o.blob})); err != nil {
			return err
		}
		o.bound, err = state.NewValueState(k, "bound", state.Codec[[]byte](bufCodec{&o.bnd}))
		return err
	}
	if o.rows, err = state.NewSortedMapState(k, "rows", state.Codec[[]byte](state.Bytes{}), state.Codec[[]byte](state.Bytes{})); err != nil {
		return err
	}
	if o.seq, err = state.NewValueState(k, "seq", state.Codec[int64](state.Int64{})); err != nil {
		return err
	}
	if o.spec.Strategy == UpdateFast {
		o.byKey, err = state.NewMapState(k, "bykey", state.Codec[[]byte](state.Bytes{}), state.Codec[[]byte](state.Bytes{}))
	}
	return err
}

// encodeSortKey appends row's sort key: per column a NULL marker (0x00
// NULLs first, 0x02 NULLs last) or 0x01 and the value's order-preserving
// encoding, complemented for DESC; bytewise order is the ORDER BY.
func encodeSortKey(dst []byte, order []SortKey, row []types.Value) []byte {
	for _, s := range order {
		v := row[s.Col]
		if v.IsNull() {
			if s.NullsLast {
				dst = append(dst, 2)
			} else {
				dst = append(dst, 0)
			}
			continue
		}
		dst = append(dst, 1)
		if s.Desc {
			dst = state.AppendValueDesc(dst, v)
		} else {
			dst = state.AppendValue(dst, v)
		}
	}
	return dst
}

// Process implements Operator.
func (o *rankOp) Process(_ int, b *types.Batch, out Emitter) error {
	o.out.Reset()
	for i := range b.Len() {
		row := b.Row(i)
		o.sk = encodeSortKey(o.sk[:0], o.spec.Order, row)
		o.bcIdx = -1
		if o.bc != nil && b.Kinds[i] == types.Insert {
			var skip bool
			if o.bcIdx, skip = o.bc.skip(row, o.sk, o.spec.Func); skip {
				continue // ranked past a full range: nothing changes
			}
		}
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		var err error
		if o.spec.Strategy == AppendFast {
			err = o.appendRow(b.Kinds[i], row)
		} else {
			err = o.changeRow(b.Kinds[i], row)
		}
		if err != nil {
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

// The AppendFast state of a partition: "top", each row kept in order as
// uvarint length and sort key, uvarint length and encoded row; and, once
// the range is full, "bound": the sort key of the last row kept.

// appendRow handles an inserted row under AppendFast.
func (o *rankOp) appendRow(kind types.RowKind, row []types.Value) error {
	if kind != types.Insert {
		return fmt.Errorf("Top-N (AppendFastStrategy) got a %s row: its input must be insert-only", kind)
	}
	var last []byte
	var full bool
	if o.bcIdx >= 0 { // the cache's copy of the bound
		e := &o.bc.ents[o.bcIdx]
		last, full = e.sk, e.full
	} else {
		var err error
		if last, full, err = o.bound.Value(); err != nil {
			return err
		}
		if o.bc != nil {
			o.bc.put(row, full, last)
		}
	}
	if full {
		c := bytes.Compare(o.sk, last)
		if c > 0 || c == 0 && o.spec.Func == RowNumber {
			return nil // ranked past the end: nothing changes
		}
	}
	blob, ok, err := o.top.Value()
	if err != nil {
		return err
	}
	o.arena = o.arena[:0]
	o.old = o.old[:0]
	if ok {
		if o.old, err = o.decodeBlob(o.old, blob); err != nil {
			return err
		}
	}
	o.rankAll(o.old)
	// The new row goes after the rows whose sort key is not greater.
	pos := len(o.old)
	for j, e := range o.old {
		if bytes.Compare(e.sk, o.sk) > 0 {
			pos = j
			break
		}
	}
	o.cur = append(o.cur[:0], o.old[:pos]...)
	sk := o.save(o.sk)
	o.enc = state.Values{}.Append(o.enc[:0], row)
	o.cur = append(o.cur, rankEntry{sk: sk, row: o.save(o.enc)})
	o.cur = append(o.cur, o.old[pos:]...)
	o.rankAll(o.cur)
	o.cur = o.prune(o.cur)
	full = o.rankAll(o.cur)
	if err := o.emitDiff(); err != nil {
		return err
	}
	if full {
		if err := o.bound.Update(o.cur[len(o.cur)-1].sk); err != nil {
			return err
		}
		if o.bc != nil {
			o.bc.put(row, true, o.cur[len(o.cur)-1].sk)
		}
	}
	enc := o.enc[:0]
	for _, e := range o.cur {
		enc = binary.AppendUvarint(enc, uint64(len(e.sk)))
		enc = append(enc, e.sk...)
		enc = binary.AppendUvarint(enc, uint64(len(e.row)))
		enc = append(enc, e.row...)
	}
	o.enc = enc
	return o.top.Update(enc)
}

// save copies b into the arena and returns the copy.
func (o *rankOp) save(b []byte) []byte {
	n := len(o.arena)
	o.arena = append(o.arena, b...)
	return o.arena[n:len(o.arena):len(o.arena)]
}

func (o *rankOp) decodeBlob(dst []rankEntry, blob []byte) ([]rankEntry, error) {
	bad := fmt.Errorf("Top-N state: malformed partition record")
	p := 0
	for p < len(blob) {
		var e rankEntry
		for f := 0; f < 2; f++ {
			n, w := binary.Uvarint(blob[p:])
			if w <= 0 || p+w+int(n) > len(blob) {
				return nil, bad
			}
			b := o.save(blob[p+w : p+w+int(n)])
			if f == 0 {
				e.sk = b
			} else {
				e.row = b
			}
			p += w + int(n)
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// rankAll sets the ranks of es (in order) and reports whether the range
// is full: a row after the last kept would rank past End.
func (o *rankOp) rankAll(es []rankEntry) bool {
	var rank, distinct int64
	for j := range es {
		tie := j > 0 && bytes.Equal(es[j].sk, es[j-1].sk)
		switch o.spec.Func {
		case RowNumber:
			rank = int64(j + 1)
		case Rank:
			if !tie {
				rank = int64(j + 1)
			}
		case DenseRank:
			if !tie {
				distinct++
			}
			rank = distinct
		}
		es[j].rank = rank
	}
	switch o.spec.Func {
	case RowNumber, Rank:
		return int64(len(es)) >= o.spec.End
	default:
		return distinct >= o.spec.End
	}
}

// prune drops the entries ranked past End.
func (o *rankOp) prune(es []rankEntry) []rankEntry {
	for j, e := range es {
		if e.rank > o.spec.End {
			return es[:j]
		}
	}
	return es
}

// emitDiff emits the changes from o.old to o.cur within [Start, End].
func (o *rankOp) emitDiff() error {
	in := func(e rankEntry) bool { return e.rank >= o.spec.Start && e.rank <= o.spec.End }
	if o.spec.OutputRank && o.spec.Func == RowNumber {
		// Position by position (ROW_NUMBER ranks are positions).
		for r := o.spec.Start; r <= o.spec.End; r++ {
			oi, ci := int(r-1), int(r-1)
			hasO, hasC := oi < len(o.old), ci < len(o.cur)
			switch {
			case hasO && hasC:
				if !bytes.Equal(o.old[oi].row, o.cur[ci].row) {
					if err := o.emit(types.UpdateBefore, o.old[oi]); err != nil {
						return err
					}
					if err := o.emit(types.UpdateAfter, o.cur[ci]); err != nil {
						return err
					}
				}
			case hasC:
				if err := o.emit(types.Insert, o.cur[ci]); err != nil {
					return err
				}
			case hasO:
				if err := o.emit(types.Delete, o.old[oi]); err != nil {
					return err
				}
			default:
				return nil
			}
		}
		return nil
	}
	// As multisets of rows (with their rank when it is output).
	same := func(a, b rankEntry) bool {
		return bytes.Equal(a.row, b.row) && (!o.spec.OutputRank || a.rank == b.rank)
	}
	matched := make([]bool, len(o.cur)) // small: within the range
	for _, e := range o.old {
		if !in(e) {
			continue
		}
		found := false
		for j, c := range o.cur {
			if !matched[j] && in(c) && same(e, c) {
				matched[j], found = true, true
				break
			}
		}
		if !found {
			if err := o.emit(types.Delete, e); err != nil {
				return err
			}
		}
	}
	for j, c := range o.cur {
		if in(c) && !matched[j] {
			if err := o.emit(types.Insert, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit appends e's row (and rank) to the output batch.
func (o *rankOp) emit(kind types.RowKind, e rankEntry) error {
	row := o.out.AppendEmpty(kind)
	src := e.row
	for i := range o.spec.Kinds {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return fmt.Errorf("Top-N state: row: %w", err)
		}
		if o.spec.Kinds[i] == types.KindInt && v.Kind() == types.KindBigInt {
			v = v.WithKind(types.KindInt)
		}
		row[i] = v
		src = rest
	}
	if o.spec.OutputRank {
		row[len(o.spec.Kinds)] = types.BigIntValue(e.rank)
	}
	return nil
}

// collect reads the partition's first rows in order into dst until one
// ranks past End, and reports whether it stopped there (the range is full).
func (o *rankOp) collect(dst []rankEntry) ([]rankEntry, bool, error) {
	full := false
	var rank, distinct int64
	var prev []byte
	j := 0
	err := o.rows.Ascend(func(mk, row []byte) (bool, error) {
		sk := mk[:len(mk)-8]
		tie := j > 0 && bytes.Equal(sk, prev)
		switch o.spec.Func {
		case RowNumber:
			rank = int64(j + 1)
		case Rank:
			if !tie {
				rank = int64(j + 1)
			}
		case DenseRank:
			if !tie {
				distinct++
			}
			rank = distinct
		}
		if rank > o.spec.End {
			full = true
			return false, nil
		}
		mkc := o.save(mk)
		dst = append(dst, rankEntry{sk: mkc[:len(mkc)-8], mk: mkc, row: o.save(row), rank: rank})
		prev = dst[len(dst)-1].sk
		j++
		return true, nil
	})
	return dst, full, err
}

// changeRow handles a change under UpdateFast and Retract.
func (o *rankOp) changeRow(kind types.RowKind, row []types.Value) error {
	o.arena = o.arena[:0]
	var err error
	var full bool
	if o.old, full, err = o.collect(o.old[:0]); err != nil {
		return err
	}
	// A change ranked after the last row in a full range changes nothing
	// in the output (but the row is still kept or removed).
	beyond := func(sk []byte) bool {
		return full && len(o.old) > 0 && bytes.Compare(sk, o.old[len(o.old)-1].sk) > 0
	}
	affected := false
	o.enc = state.Values{}.Append(o.enc[:0], row)
	insert := kind == types.Insert || kind == types.UpdateAfter
	if o.spec.Strategy == UpdateFast {
		if kind == types.UpdateBefore {
			return nil // the +U that follows replaces the key's row
		}
		o.ukey = o.ukey[:0]
		for _, c := range o.spec.UniqueKey {
			o.ukey = state.AppendValue(o.ukey, row[c])
		}
		prev, ok, err := o.byKey.Get(o.ukey)
		if err != nil {
			return err
		}
		if ok {
			if err := o.rows.Remove(prev); err != nil {
				return err
			}
			affected = !beyond(prev[:len(prev)-8])
		}
		if insert {
			if err := o.putRow(); err != nil {
				return err
			}
			if err := o.byKey.Put(o.ukey, o.mk); err != nil {
				return err
			}
			affected = affected || !beyond(o.sk)
		} else if ok {
			if err := o.byKey.Remove(o.ukey); err != nil {
				return err
			}
		}
	} else if insert {
		if err := o.putRow(); err != nil {
			return err
		}
		affected = !beyond(o.sk)
	} else {
		// Remove the first kept row equal to this one.
		lo := o.sk
		hi := append(append(o.mk[:0], o.sk...), 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
		var victim []byte
		err := o.rows.Range(lo, hi, func(mk, r []byte) (bool, error) {
			if bytes.Equal(r, o.enc) {
				victim = append(o.ukey[:0], mk...)
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		if victim == nil {
			return nil // nothing to retract (the row was never kept)
		}
		o.ukey = victim
		if err := o.rows.Remove(victim); err != nil {
			return err
		}
		affected = !beyond(o.sk)
	}
	if !affected {
		return nil
	}
	if o.cur, _, err = o.collect(o.cur[:0]); err != nil {
		return err
	}
	return o.emitDiff()
}

// putRow adds the row in o.enc with sort key o.sk, after its ties, and
// leaves its map key in o.mk.
func (o *rankOp) putRow() error {
	n, _, err := o.seq.Value()
	if err != nil {
		return err
	}
	if err := o.seq.Update(n + 1); err != nil {
		return err
	}
	o.mk = binary.BigEndian.AppendUint64(append(o.mk[:0], o.sk...), uint64(n))
	return o.rows.Put(o.mk, o.enc)
}

// OnTimer implements KeyedOperator (a Top-N registers no timers).
func (o *rankOp) OnTimer(state.Timer, Emitter) error { return nil }

// Finish implements Operator.
func (o *rankOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *rankOp) Close() error { return nil }

var _ KeyedOperator = (*rankOp)(nil)
