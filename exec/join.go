package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/weir-sql/weir/expr"
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
	// Retention, per side (0 left, 1 right), drops the side's rows that
	// the other input's watermark puts out of reach (nil: kept until
	// retracted or expired by the state TTL). A regular join only; see
	// JoinRetention.
	Retention [2]*JoinRetention
}

// NewJoin returns the constructor of a regular join operator: a
// StatefulOperator whose state, in typed memory (joinRows), is keyed by the
// join key. Each input's rows
// are kept in its layout; a row that arrives is matched against the other
// side's rows of its key and the joined rows go out with the arriving
// row's kind (+I, -U, +U, -D), as Flink's StreamingJoinOperator does. For
// outer joins every kept row of a preserved side counts its matches: the
// NULL-padded row goes out (+I) while the count is zero and is retracted
// (-D) when the first match arrives. Rows with a NULL join key never
// match.
func NewJoin(spec JoinSpec) func() Operator {
	spec.Residual = expr.CheapFirst(spec.Residual) // cheap operands of AND/OR first
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

// trackedRec is an assoc update the interval join collects during a scan: the
// record's new counts, its map key at pkeys[koff:koff+klen] and its row at
// prows[roff:roff+rlen].
type trackedRec struct {
	koff, klen, roff, rlen int
	count, assoc           int64
}

// joinOp is the regular join (see NewJoin).
type joinOp struct {
	spec JoinSpec
	// proc is the processing time PROCTIME() in the residual reads.
	proc procClock
	joinState
	joinOutput
	retain [2]*retention // per side, if it has a retention bound
	inWM   [2]int64      // per input port, its watermark (ProcessInputWatermark)
}

var (
	_ StatefulOperator = (*joinOp)(nil)
	_ expiringOperator = (*joinOp)(nil)
	_ InputEndOperator = (*joinOp)(nil)
)

// Open implements Operator.
func (o *joinOp) Open(ctx *OpContext) error {
	o.joinOutput.open(len(o.spec.Left.Kinds), len(o.spec.Right.Kinds))
	t := o.spec.Type
	track := [2]bool{t == LeftOuterJoin || t == FullOuterJoin, t == RightOuterJoin || t == FullOuterJoin}
	if err := o.joinState.open(ctx, "Join", o.spec.Left, o.spec.Right, track); err != nil {
		return err
	}
	if o.spec.Residual != nil && ctx.Watermark != nil {
		o.spec.Residual, _ = expr.BindWatermark(o.spec.Residual, ctx.Watermark)
	}
	o.proc.open(clockOf(ctx))
	o.spec.Residual = o.proc.bind(o.spec.Residual)
	o.openRetention()
	return nil
}

// joinOutput is the output side of a two-input join: joined rows (left
// columns, then right) batched for the emitter.
type joinOutput struct {
	wl     int // left width
	out    *types.Batch
	joined []types.Value // left ++ right, for the residual and output
	nulls  []types.Value
	// pick, when set (pickOutput), is the output: per column, a column
	// of the joined row.
	pick []int
}

func (j *joinOutput) open(wl, wr int) {
	j.wl = wl
	j.pick = nil
	j.out = types.NewBatch(wl+wr, 256)
	j.joined = make([]types.Value, wl+wr)
	j.nulls = make([]types.Value, wl+wr)
}

// emitRow appends a joined row (side's row with other, NULL-padded when
// other is nil) of the given kind n times, emitting full batches.
func (j *joinOutput) emitRow(kind types.RowKind, side int, row, other []types.Value, n int64, out Emitter) error {
	l, r := row, other
	if side == 1 {
		l, r = other, row
	}
	if l == nil {
		l = j.nulls[:j.wl]
	}
	if r == nil {
		r = j.nulls[j.wl:]
	}
	for range n {
		j.appendJoined(kind, l, r)
		if j.out.Len() >= 1024 {
			if err := j.flush(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendJoined appends the row l ++ r of the given kind to the output
// batch, value by value into room not cleared first (growRow): for rows of
// a few values that costs less than clearing them and copying each part
// (a runtime call each, as values hold strings).
func (j *joinOutput) appendJoined(kind types.RowKind, l, r []types.Value) {
	dst := growRow(j.out, kind)
	if j.pick != nil {
		for k, c := range j.pick {
			if c < len(l) {
				dst[k] = l[c]
			} else {
				dst[k] = r[c-len(l)]
			}
		}
		return
	}
	d := dst[:len(l)]
	for i := range d {
		d[i] = l[i]
	}
	d = dst[len(l):]
	r = r[:len(d)]
	for i := range d {
		d[i] = r[i]
	}
}

// pickJoined makes appendJoined append the columns cols of each joined
// row, in that order (outputPicker); false if a column is out of range.
func (j *joinOutput) pickJoined(cols []int) bool {
	if j.out.Len() > 0 {
		return false
	}
	for _, c := range cols {
		if c < 0 || c >= j.out.Width {
			return false
		}
	}
	j.pick = slices.Clone(cols)
	j.out = types.NewBatch(len(cols), 256)
	return true
}

// pickOutput implements outputPicker: every row the join emits goes
// through appendJoined.
func (o *joinOp) pickOutput(cols []int) bool { return o.pickJoined(cols) }

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
	o.proc.tick()
	me, other := o.sides[input], o.sides[1-input]
	if other.pt != nil && o.ended[1-input] {
		return o.processProbe(input, b, out)
	}
	outer := me.track
	warm := other.keys.IntKeyed() && other.keys.Len() > 0
	for i := range b.Len() {
		if warm && i%warmRows == 0 {
			other.warm(b, me.spec.Keys[0], i, min(i+warmRows, b.Len()))
		}
		row, kind := b.Row(i), b.Kinds[i]
		if hasNullKey(row, me.spec.Keys) {
			if outer {
				if err := o.emitRow(kind, input, row, nil, 1, out); err != nil {
					return err
				}
			}
			continue
		}
		kr := o.keyOf(input, row)
		// A row already out of reach of the other input is matched and
		// never kept (join retention), and so is every row once the
		// other input ended (EndInput): its side's rows of the key are
		// not looked up (nor loaded back, nor given a blind slot), also
		// for a retraction, whose side keeps nothing any more.
		isRetract := kind.IsRetraction()
		keep := !o.ended[1-input] && (isRetract || !o.outOfReach(input, row))
		var (
			ms  int32
			mok bool
			err error
		)
		if keep {
			if ms, mok, err = me.findWrite(kr); err != nil {
				return err
			}
		}
		os, ook, err := other.find(kr)
		if err != nil {
			return err
		}
		if isRetract {
			err = o.retract(input, me, other, kind, row, ms, mok, os, ook, out)
		} else {
			err = o.accumulate(input, me, other, kind, row, keep, ms, mok, os, ook, out)
		}
		if err != nil {
			return err
		}
	}
	if err := o.flush(out); err != nil {
		return err
	}
	return o.spillIfOver()
}

// eachMatch calls fn for each row j of the other side's list (slot os, if
// ook) that row matches, with its count, and returns the matches counted;
// it marks the other side's slot changed when fn says so.
func (o *joinOp) eachMatch(side int, row []types.Value, other *joinRows, os int32, ook bool,
	fn func(l *rowList, j int, r []types.Value, c int64) (changed bool, err error)) (int64, error) {
	if !ook {
		return 0, nil
	}
	var matched int64
	l, w := other.list(os), other.w
	changed := false
	for j := range l.n() {
		r := l.row(j, w)
		ok, err := o.matches(side, row, r)
		if err != nil {
			return 0, err
		}
		if !ok {
			continue
		}
		c := l.metaAt(j).cnt
		matched += c
		ch, err := fn(l, j, r, c)
		if err != nil {
			return 0, err
		}
		if ch {
			l.mark(j, other.shift)
			changed = true
		}
	}
	if changed {
		other.st.Changed(os)
	}
	return matched, nil
}

// accumulate joins an arriving row with the other side's rows of its key
// (slot os, if ook) and, if keep, keeps it (in slot ms, if mok). A row of
// an outer side whose first match this is takes back its NULL-padded row.
func (o *joinOp) accumulate(side int, me, other *joinRows, kind types.RowKind, row []types.Value,
	keep bool, ms int32, mok bool, os int32, ook bool, out Emitter) error {
	matched, err := o.eachMatch(side, row, other, os, ook, func(l *rowList, j int, r []types.Value, c int64) (bool, error) {
		if other.track {
			if *l.assocAt(j) == 0 {
				if err := o.emitRow(types.Delete, 1-side, r, nil, c, out); err != nil {
					return false, err
				}
			}
			*l.assocAt(j)++
		}
		return other.track, o.emitRow(kind, side, row, r, c, out)
	})
	if err != nil {
		return err
	}
	if me.track && matched == 0 {
		if err := o.emitRow(kind, side, row, nil, 1, out); err != nil {
			return err
		}
	}
	if !keep {
		return nil // out of reach: matched what it can, never kept
	}
	me.insert(o.kr, ms, mok, row, matched)
	o.noteDue(side, row)
	return nil
}

// retract takes a row out and retracts its joined rows; an outer side's
// row whose last match this was gets its NULL-padded row back.
func (o *joinOp) retract(side int, me, other *joinRows, kind types.RowKind, row []types.Value,
	ms int32, mok bool, os int32, ook bool, out Emitter) error {
	if err := me.remove(ms, mok, row); err != nil {
		return err
	}
	matched, err := o.eachMatch(side, row, other, os, ook, func(l *rowList, j int, r []types.Value, c int64) (bool, error) {
		if err := o.emitRow(kind, side, row, r, c, out); err != nil {
			return false, err
		}
		if !other.track {
			return false, nil
		}
		switch *l.assocAt(j) {
		case 0: // its state expired; never below zero
			return false, nil
		case 1:
			if err := o.emitRow(types.Insert, 1-side, r, nil, c, out); err != nil {
				return false, err
			}
		}
		*l.assocAt(j)--
		return true, nil
	})
	if err != nil {
		return err
	}
	if me.track && matched == 0 {
		return o.emitRow(kind, side, row, nil, 1, out)
	}
	return nil
}

// EndInput implements InputEndOperator: once input port has ended, no row
// of it can come to match a row of the other side, so the other side's
// rows are dropped (in memory and in the state store) and, from then on,
// its arriving rows are matched and emitted but never kept (Process). The
// ended input's rows stay, with their match counts: an outer join still
// pads and takes back its NULL-padded rows as the other side's rows come
// and go. Whatever the join type, the output does not change. When it
// may, the ended input's rows get a probe table (probeTable) for the
// other side's probes.
func (o *joinOp) EndInput(port int, out Emitter) error {
	o.proc.tick()
	if first, err := o.endInput(port); !first || err != nil {
		return err
	}
	if r := o.retain[1-port]; r != nil {
		r.minDue = math.MaxInt64 // nothing kept to sweep
	}
	o.probeAfterEnd(port, o.retain[port] != nil)
	return o.flush(out)
}

// Finish implements Operator: a regular join holds nothing back.
func (o *joinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *joinOp) Close() error { return nil }
