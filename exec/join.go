package exec

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// JoinType is the kind of a regular join.
type JoinType uint8

// Join types.
const (
	InnerJoin JoinType = iota
	LeftOuterJoin
	RightOuterJoin
	FullOuterJoin
)

// JoinLayout is how one input of a join keeps its rows, per join key (as
// Flink's JoinInputSideSpec): chosen by the planner from the input's
// unique keys.
type JoinLayout uint8

// Join state layouts.
const (
	// NoUniqueKey keeps each distinct row with its count.
	NoUniqueKey JoinLayout = iota
	// HasUniqueKey keeps one row per value of the input's unique key.
	HasUniqueKey
	// JoinKeyContainsUniqueKey keeps one row per join key: a unique key
	// of the input is part of the join key.
	JoinKeyContainsUniqueKey
)

// String returns the layout's name as EXPLAIN prints it.
func (l JoinLayout) String() string {
	return [...]string{"NoUniqueKey", "HasUniqueKey", "JoinKeyContainsUniqueKey"}[l]
}

// JoinSide describes one input of a join.
type JoinSide struct {
	// Keys are the equi-join key columns (the left and right keys pair up
	// by position and have equal types).
	Keys []int
	// Kinds are the column kinds of the input's rows (their width).
	Kinds []types.Kind
	// Layout is how the side keeps its rows; UniqueKey the unique key's
	// columns for HasUniqueKey.
	Layout    JoinLayout
	UniqueKey []int
}

// JoinSpec describes a regular (unbounded) join of two inputs: port 0 is
// the left input, port 1 the right one. It emits left ++ right rows.
type JoinSpec struct {
	Type        JoinType
	Left, Right JoinSide
	// Residual is the non-equi part of the condition, over the joined row
	// (nil: none).
	Residual expr.Expr
}

// NewJoin returns the constructor of a regular join operator: a
// KeyedOperator whose state is keyed by the join key. Each input's rows
// are kept in its layout; a row that arrives is matched against the other
// side's rows of its key and the joined rows go out with the arriving
// row's kind (+I, -U, +U, -D), as Flink's StreamingJoinOperator does. For
// outer joins every kept row of a preserved side counts its matches: the
// NULL-padded row goes out (+I) while the count is zero and is retracted
// (-D) when the first match arrives. Rows with a NULL join key never
// match.
func NewJoin(spec JoinSpec) func() Operator {
	return func() Operator { return &joinOp{spec: spec} }
}

// joinRec is one kept row: how many times it is there and how many rows of
// the other side match it (for outer joins).
type joinRec struct {
	count, assoc int64
	row          []types.Value
}

// recCodec encodes joinRec: count, assoc (uvarints) and the row (each
// value kind-tagged, types.AppendKey, so every type round-trips). Decode
// reuses one row buffer, valid until the next Decode.
type recCodec struct {
	kinds []types.Kind
	buf   []types.Value
}

func (c *recCodec) Append(dst []byte, r joinRec) []byte {
	dst = binary.AppendUvarint(dst, uint64(r.count))
	dst = binary.AppendUvarint(dst, uint64(r.assoc))
	for _, v := range r.row {
		dst = types.AppendKey(dst, v)
	}
	return dst
}

func (c *recCodec) Decode(src []byte) (joinRec, error) {
	var r joinRec
	n, k := binary.Uvarint(src)
	if k <= 0 {
		return r, errors.New("join record: bad count")
	}
	src = src[k:]
	a, k := binary.Uvarint(src)
	if k <= 0 {
		return r, errors.New("join record: bad match count")
	}
	src = src[k:]
	r.count, r.assoc = int64(n), int64(a)
	row := c.buf[:0]
	for i := 0; len(src) > 0; i++ {
		v, rest, err := types.DecodeKey(src)
		if err != nil {
			return r, fmt.Errorf("join record: value %d: %w", i, err)
		}
		row = append(row, v)
		src = rest
	}
	if len(row) != len(c.kinds) {
		return r, fmt.Errorf("join record: %d values, want %d", len(row), len(c.kinds))
	}
	c.buf = row
	r.row = row
	return r, nil
}

// rawKey is a map-key codec of encoded bytes, decoded without a copy
// (valid during the iteration callback only).
type rawKey struct{}

func (rawKey) Append(dst []byte, v []byte) []byte { return append(dst, v...) }
func (rawKey) Decode(src []byte) ([]byte, error)  { return src, nil }

// sideState is one input's kept rows for the current key.
type sideState struct {
	spec  JoinSide
	outer bool // unmatched rows go out NULL-padded
	codec *recCodec
	val   *state.ValueState[joinRec]
	m     *state.MapState[[]byte, joinRec]
	kb    []byte
	// pending holds assoc updates collected during a scan; their keys and
	// rows point into pkeys and prows, arenas reused from scan to scan so
	// that tracking matches allocates nothing once they have grown.
	pending []trackedRec
	pkeys   []byte
	prows   []types.Value
}

// trackedRec is an assoc update collected during a sideState scan: the
// record's new counts, its map key at pkeys[koff:koff+klen] and its row at
// prows[roff:roff+rlen].
type trackedRec struct {
	koff, klen, roff, rlen int
	count, assoc           int64
}

func (s *sideState) open(k *state.Keyed, name string) error {
	s.codec = &recCodec{kinds: s.spec.Kinds}
	var err error
	if s.spec.Layout == JoinKeyContainsUniqueKey {
		s.val, err = state.NewValueState[joinRec](k, name, s.codec)
	} else {
		s.m, err = state.NewMapState[[]byte, joinRec](k, name, rawKey{}, s.codec)
	}
	return err
}

// mapKey is the map key of row: its unique key or the whole row.
func (s *sideState) mapKey(row []types.Value) []byte {
	kb := s.kb[:0]
	if s.spec.Layout == HasUniqueKey {
		for _, c := range s.spec.UniqueKey {
			kb = types.AppendKey(kb, row[c])
		}
	} else {
		for _, v := range row {
			kb = types.AppendKey(kb, v)
		}
	}
	s.kb = kb
	return kb
}

// insert adds row, matched by assoc rows of the other side.
func (s *sideState) insert(row []types.Value, assoc int64) error {
	switch s.spec.Layout {
	case JoinKeyContainsUniqueKey:
		return s.val.Update(joinRec{count: 1, assoc: assoc, row: row})
	case HasUniqueKey:
		return s.m.Put(s.mapKey(row), joinRec{count: 1, assoc: assoc, row: row})
	}
	key := s.mapKey(row)
	r, ok, err := s.m.Get(key)
	if err != nil {
		return err
	}
	if !ok {
		r = joinRec{assoc: assoc, row: row}
	}
	r.count++
	return s.m.Put(key, r)
}

// remove takes one copy of row out (nothing if it is not kept: its state
// expired).
func (s *sideState) remove(row []types.Value) error {
	switch s.spec.Layout {
	case JoinKeyContainsUniqueKey:
		return s.val.Clear()
	case HasUniqueKey:
		return s.m.Remove(s.mapKey(row))
	}
	key := s.mapKey(row)
	r, ok, err := s.m.Get(key)
	if err != nil || !ok {
		return err
	}
	if r.count <= 1 {
		return s.m.Remove(key)
	}
	r.count--
	return s.m.Put(key, r)
}

// each calls fn for every kept row of the current key (rec.row is valid
// during the call only); with track, fn's returned delta is added to the
// record's assoc after the scan.
func (s *sideState) each(track bool, fn func(r joinRec) (int64, error)) error {
	if s.spec.Layout == JoinKeyContainsUniqueKey {
		r, ok, err := s.val.Value()
		if err != nil || !ok {
			return err
		}
		d, err := fn(r)
		if err != nil || !track || d == 0 {
			return err
		}
		r.assoc += d
		return s.val.Update(r)
	}
	s.pending, s.pkeys, s.prows = s.pending[:0], s.pkeys[:0], s.prows[:0]
	err := s.m.All(func(key []byte, r joinRec) (bool, error) {
		d, err := fn(r)
		if err != nil {
			return false, err
		}
		if track && d != 0 {
			// Offsets into the arenas, which may move while they grow:
			// the slices are made after the scan.
			s.pending = append(s.pending, trackedRec{
				koff: len(s.pkeys), klen: len(key), roff: len(s.prows), rlen: len(r.row),
				count: r.count, assoc: r.assoc + d,
			})
			s.pkeys = append(s.pkeys, key...)
			s.prows = append(s.prows, r.row...)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for i := range s.pending {
		p := &s.pending[i]
		r := joinRec{count: p.count, assoc: p.assoc, row: s.prows[p.roff : p.roff+p.rlen]}
		if err := s.m.Put(s.pkeys[p.koff:p.koff+p.klen], r); err != nil {
			return err
		}
	}
	return nil
}

// joinOp is the regular join (see NewJoin).
type joinOp struct {
	spec  JoinSpec
	k     *state.Keyed
	rk    [2]*RowKey
	sides [2]*sideState
	joinOutput
}

var _ KeyedOperator = (*joinOp)(nil)

// Open implements Operator.
func (o *joinOp) Open(ctx *OpContext) error {
	o.joinOutput.open(len(o.spec.Left.Kinds), len(o.spec.Right.Kinds))
	o.rk[0] = NewRowKey(o.spec.Left.Keys, ctx.MaxParallelism)
	o.rk[1] = NewRowKey(o.spec.Right.Keys, ctx.MaxParallelism)
	t := o.spec.Type
	o.sides[0] = &sideState{spec: o.spec.Left, outer: t == LeftOuterJoin || t == FullOuterJoin}
	o.sides[1] = &sideState{spec: o.spec.Right, outer: t == RightOuterJoin || t == FullOuterJoin}
	if o.spec.Residual != nil && ctx.Watermark != nil {
		o.spec.Residual, _ = expr.BindWatermark(o.spec.Residual, ctx.Watermark)
	}
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *joinOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	if err := o.sides[0].open(k, "left"); err != nil {
		return err
	}
	return o.sides[1].open(k, "right")
}

// OnTimer implements KeyedOperator: the join registers no timers (TTL is
// the state layer's).
func (o *joinOp) OnTimer(state.Timer, Emitter) error { return nil }

// joinOutput is the output side of a two-input join: joined rows (left
// columns, then right) batched for the emitter.
type joinOutput struct {
	wl     int // left width
	out    *types.Batch
	joined []types.Value // left ++ right, for the residual and output
	nulls  []types.Value
}

func (j *joinOutput) open(wl, wr int) {
	j.wl = wl
	j.out = types.NewBatch(wl+wr, 256)
	j.joined = make([]types.Value, wl+wr)
	j.nulls = make([]types.Value, wl+wr)
}

// emitRow appends a joined row (side's row with other, NULL-padded when
// other is nil) of the given kind n times, emitting full batches.
func (j *joinOutput) emitRow(kind types.RowKind, side int, row, other []types.Value, n int64, out Emitter) error {
	for range n {
		dst := j.out.AppendEmpty(kind)
		l, r := row, other
		if side == 1 {
			l, r = other, row
		}
		if l == nil {
			copy(dst[:j.wl], j.nulls)
		} else {
			copy(dst[:j.wl], l)
		}
		if r == nil {
			copy(dst[j.wl:], j.nulls)
		} else {
			copy(dst[j.wl:], r)
		}
		if j.out.Len() >= 1024 {
			if err := j.flush(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush emits the batched rows.
func (j *joinOutput) flush(out Emitter) error {
	if j.out.Len() == 0 {
		return nil
	}
	err := out.Emit(j.out)
	j.out.Reset()
	return err
}

// matches evaluates the residual on row (of side) with other.
func (o *joinOp) matches(side int, row, other []types.Value) (bool, error) {
	if o.spec.Residual == nil {
		return true, nil
	}
	if side == 0 {
		copy(o.joined[:o.wl], row)
		copy(o.joined[o.wl:], other)
	} else {
		copy(o.joined[:o.wl], other)
		copy(o.joined[o.wl:], row)
	}
	v, err := o.spec.Residual.Eval(o.joined)
	if err != nil {
		return false, fmt.Errorf("join condition %s: %w", o.spec.Residual, err)
	}
	return !v.IsNull() && v.Bool(), nil
}

func hasNullKey(row []types.Value, keys []int) bool {
	for _, c := range keys {
		if row[c].IsNull() {
			return true
		}
	}
	return false
}

// Process implements Operator: port 0 is the left input, port 1 the right.
func (o *joinOp) Process(input int, b *types.Batch, out Emitter) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("join: input port %d", input)
	}
	me, other := o.sides[input], o.sides[1-input]
	for i := range b.Len() {
		row, kind := b.Row(i), b.Kinds[i]
		if hasNullKey(row, me.spec.Keys) {
			if me.outer {
				if err := o.emitRow(kind, input, row, nil, 1, out); err != nil {
					return err
				}
			}
			continue
		}
		if err := o.rk[input].Set(o.k, row); err != nil {
			return err
		}
		var err error
		if kind.IsRetraction() {
			err = o.retract(input, me, other, kind, row, out)
		} else {
			err = o.accumulate(input, me, other, kind, row, out)
		}
		if err != nil {
			return err
		}
	}
	return o.flush(out)
}

func (o *joinOp) accumulate(side int, me, other *sideState, kind types.RowKind, row []types.Value, out Emitter) error {
	var matched int64
	err := other.each(other.outer, func(r joinRec) (int64, error) {
		ok, err := o.matches(side, row, r.row)
		if err != nil || !ok {
			return 0, err
		}
		matched += r.count
		if other.outer && r.assoc == 0 {
			if err := o.emitRow(types.Delete, 1-side, r.row, nil, r.count, out); err != nil {
				return 0, err
			}
		}
		return 1, o.emitRow(kind, side, row, r.row, r.count, out)
	})
	if err != nil {
		return err
	}
	if me.outer && matched == 0 {
		if err := o.emitRow(kind, side, row, nil, 1, out); err != nil {
			return err
		}
	}
	return me.insert(row, matched)
}

func (o *joinOp) retract(side int, me, other *sideState, kind types.RowKind, row []types.Value, out Emitter) error {
	if err := me.remove(row); err != nil {
		return err
	}
	var matched int64
	err := other.each(other.outer, func(r joinRec) (int64, error) {
		ok, err := o.matches(side, row, r.row)
		if err != nil || !ok {
			return 0, err
		}
		matched += r.count
		if err := o.emitRow(kind, side, row, r.row, r.count, out); err != nil {
			return 0, err
		}
		if other.outer && r.assoc == 1 {
			if err := o.emitRow(types.Insert, 1-side, r.row, nil, r.count, out); err != nil {
				return 0, err
			}
		}
		if r.assoc == 0 {
			return 0, nil // its state expired; never below zero
		}
		return -1, nil
	})
	if err != nil {
		return err
	}
	if me.outer && matched == 0 {
		return o.emitRow(kind, side, row, nil, 1, out)
	}
	return nil
}

// Finish implements Operator: a regular join holds nothing back.
func (o *joinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *joinOp) Close() error { return nil }
