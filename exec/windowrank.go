package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// WindowRankSpec configures a window Top-N (NewWindowRank): Flink's
// WindowRank, and with ROW_NUMBER, range [1, 1] and the rank not output,
// its WindowDeduplicate.
type WindowRankSpec struct {
	// Keys are the partition's columns other than the window's: the
	// current key of the keyed state (the exchange hashes on them).
	Keys []int
	// Order, Func, Start, End and OutputRank are as in RankSpec; Order's
	// columns are columns of the windowed row.
	Order      []SortKey
	Func       RankFunc
	Start, End int64
	OutputRank bool
	// Assign, when set, is the window TVF whose windows the operator
	// assigns (event time: Assign.TimeCol is an input column): each input
	// row goes to each of its windows with window_start, window_end and
	// window_time appended. Else the input rows carry their window in
	// columns WinStart and WinEnd (a window aggregate's output).
	Assign           *WindowSpec
	WinStart, WinEnd int
	Kinds            []types.Kind // the input's column kinds
	// LaterFirst orders rows of equal sort key latest arrival first (a
	// keep-last window deduplication), else first arrival first.
	LaterFirst bool
}

// NewWindowRank returns the window Top-N of spec over insert-only input:
// per partition (spec.Keys) and window it keeps the window's rows, and
// when the watermark passes the window's end it emits the rows ranked
// Start to End once (+I, with the rank when OutputRank), then drops the
// window's rows and timer. A row whose window has fired (its end - 1 is
// not after the watermark on arrival) is late: dropped and counted.
func NewWindowRank(spec WindowRankSpec) func() Operator {
	return func() Operator { return &windowRankOp{spec: spec} }
}

// wrPrefix is the length of a row's window in its map key: window end and
// window start, each state.AppendInt64 (a tag and 8 bytes).
const wrPrefix = 18

type windowRankOp struct {
	spec  WindowRankSpec
	rk    *RowKey
	k     *state.Keyed
	late  *atomic.Int64
	out   *types.Batch
	width int // of the windowed row

	rows   *state.SortedMapState[[]byte, []byte] // window end | window start | sort key | seq → windowed row
	seq    *state.ValueState[int64]
	counts *state.MapState[[]byte, int64] // ROW_NUMBER: window end | window start → rows kept (at most End)

	wrow          []types.Value // the windowed row
	sk, mk, enc   []byte
	lo, hi, prevK []byte
	keys          [][]byte
	row           []types.Value
	wStart, wEnd  int
}

// Open implements Operator.
func (o *windowRankOp) Open(ctx *OpContext) error {
	o.rk = NewRowKey(o.spec.Keys, ctx.MaxParallelism)
	o.late = ctx.Late
	o.width = len(o.spec.Kinds)
	o.wStart, o.wEnd = o.spec.WinStart, o.spec.WinEnd
	if o.spec.Assign != nil {
		o.width += 3
		o.wStart, o.wEnd = len(o.spec.Kinds), len(o.spec.Kinds)+1
	}
	w := o.width
	if o.spec.OutputRank {
		w++
	}
	o.out = types.NewBatch(w, 64)
	o.wrow = make([]types.Value, o.width)
	o.row = make([]types.Value, w)
	return nil
}

// OpenKeyed implements KeyedOperator.
func (o *windowRankOp) OpenKeyed(k *state.Keyed) error {
	o.k = k
	var err error
	if o.rows, err = state.NewSortedMapState(k, "wrows", state.Codec[[]byte](state.Bytes{}), state.Codec[[]byte](state.Bytes{})); err != nil {
		return err
	}
	if o.seq, err = state.NewValueState(k, "wseq", state.Codec[int64](state.Int64{})); err != nil {
		return err
	}
	if o.spec.Func == RowNumber {
		o.counts, err = state.NewMapState(k, "wcount", state.Codec[[]byte](state.Bytes{}), state.Codec[int64](state.Int64{}))
	}
	return err
}

// boundValue makes a window bound of the TVF's kind.
func (o *windowRankOp) boundValue(ms int64) types.Value {
	if o.spec.Assign.LTZ {
		return types.TimestampLTZValue(ms)
	}
	return types.TimestampValue(ms)
}

// Process implements Operator.
func (o *windowRankOp) Process(_ int, b *types.Batch, _ Emitter) error {
	wm := o.k.Watermark()
	for i := range b.Len() {
		if b.Kinds[i] != types.Insert {
			return fmt.Errorf("WindowRank got a %s row: its input must be insert-only", b.Kinds[i])
		}
		row := b.Row(i)
		if err := o.rk.Set(o.k, row); err != nil {
			return err
		}
		a := o.spec.Assign
		if a == nil {
			ws, we := row[o.wStart], row[o.wEnd]
			if ws.IsNull() || we.IsNull() {
				o.countLate()
				continue
			}
			if err := o.add(row, ws.Int(), we.Int(), wm); err != nil {
				return err
			}
			continue
		}
		tv := row[a.TimeCol]
		if tv.IsNull() {
			o.countLate() // no event time: no window takes it
			continue
		}
		ts := tv.Int()
		copy(o.wrow, row)
		step := a.Size
		if a.Kind != WindowTumble {
			step = a.Slide
		}
		first := a.SliceEnd(ts)
		for end := first; end <= a.LastWindowEnd(first); end += step {
			start := a.WindowStart(end)
			if ts < start {
				continue // a CUMULATE window of this period that starts later: none
			}
			o.wrow[o.wStart], o.wrow[o.wStart+1] = o.boundValue(start), o.boundValue(end)
			o.wrow[o.wStart+2] = o.boundValue(end - 1)
			if err := o.add(o.wrow, start, end, wm); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s WindowRankSpec) kindOfTime() types.Kind {
	if s.Assign != nil && s.Assign.LTZ {
		return types.KindTimestampLTZ
	}
	return types.KindTimestamp
}

func (o *windowRankOp) countLate() {
	if o.late != nil {
		o.late.Add(1)
	}
}

// add keeps the windowed row wrow of window [start, end) unless the
// window has fired.
func (o *windowRankOp) add(wrow []types.Value, start, end, wm int64) error {
	if end-1 <= wm {
		o.countLate()
		return nil
	}
	n, _, err := o.seq.Value()
	if err != nil {
		return err
	}
	if err := o.seq.Update(n + 1); err != nil {
		return err
	}
	o.mk = state.AppendInt64(state.AppendInt64(o.mk[:0], end), start)
	o.mk = encodeSortKey(o.mk, o.spec.Order, wrow)
	if o.spec.LaterFirst {
		n = ^n
	}
	o.mk = binary.BigEndian.AppendUint64(o.mk, uint64(n))
	o.enc = state.Values{}.Append(o.enc[:0], wrow)
	if err := o.rows.Put(o.mk, o.enc); err != nil {
		return err
	}
	if o.counts != nil {
		// ROW_NUMBER keeps at most End rows per window: past that, the
		// last one goes (it can never rank within the range again).
		win := o.mk[:wrPrefix]
		c, _, err := o.counts.Get(win)
		if err != nil {
			return err
		}
		if c >= o.spec.End {
			o.hi = append(append(o.hi[:0], win...), 0xFF)
			var last []byte
			err := o.rows.DescendBelow(o.hi, func(k, _ []byte) (bool, error) {
				last = append(o.lo[:0], k...)
				return false, nil
			})
			if err != nil {
				return err
			}
			o.lo = last
			if err := o.rows.Remove(last); err != nil {
				return err
			}
		} else if err := o.counts.Put(win, c+1); err != nil {
			return err
		}
	}
	return o.k.RegisterTimer(state.EventTime, end-1, nil)
}

// OnTimer emits the Top-N of each window of the current key that ends at
// the timer's time + 1, and drops the windows' rows.
func (o *windowRankOp) OnTimer(tm state.Timer, out Emitter) error {
	o.out.Reset()
	end := tm.Timestamp + 1
	o.lo = state.AppendInt64(o.lo[:0], end)
	o.hi = state.AppendInt64(o.hi[:0], end+1)
	o.keys = o.keys[:0]
	var pos, rank, distinct int64
	var prevStart []byte
	err := o.rows.Range(o.lo, o.hi, func(k, v []byte) (bool, error) {
		o.keys = append(o.keys, bytes.Clone(k))
		start := k[9:wrPrefix]
		if !bytes.Equal(start, prevStart) { // a new window (same end, another start)
			prevStart = append(prevStart[:0], start...)
			pos, rank, distinct = 0, 0, 0
			o.prevK = o.prevK[:0]
		}
		sk := k[wrPrefix : len(k)-8]
		pos++
		tie := pos > 1 && bytes.Equal(sk, o.prevK)
		switch o.spec.Func {
		case RowNumber:
			rank = pos
		case Rank:
			if !tie {
				rank = pos
			}
		case DenseRank:
			if !tie {
				distinct++
			}
			rank = distinct
		}
		o.prevK = append(o.prevK[:0], sk...)
		if rank < o.spec.Start || rank > o.spec.End {
			return true, nil
		}
		r := o.out.AppendEmpty(types.Insert)
		if err := o.decode(r[:o.width], v); err != nil {
			return false, err
		}
		if o.spec.OutputRank {
			r[o.width] = types.BigIntValue(rank)
		}
		if o.out.Len() >= 1024 {
			if err := out.Emit(o.out); err != nil {
				return false, err
			}
			o.out.Reset()
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, k := range o.keys {
		if err := o.rows.Remove(k); err != nil {
			return err
		}
		if o.counts != nil && !bytes.Equal(k[:wrPrefix], o.lo) {
			o.lo = append(o.lo[:0], k[:wrPrefix]...)
			if err := o.counts.Remove(o.lo); err != nil {
				return err
			}
		}
	}
	if empty, err := o.rows.IsEmpty(); err != nil {
		return err
	} else if empty {
		if err := o.seq.Clear(); err != nil {
			return err
		}
	}
	if o.out.Len() > 0 {
		return out.Emit(o.out)
	}
	return nil
}

func (o *windowRankOp) decode(dst []types.Value, src []byte) error {
	for i := range dst {
		v, rest, err := state.DecodeValue(src)
		if err != nil {
			return fmt.Errorf("WindowRank state: row: %w", err)
		}
		kind := o.spec.kindOfTime()
		if i < len(o.spec.Kinds) {
			kind = o.spec.Kinds[i]
		}
		dst[i] = state.WithColumnKind(v, kind)
		src = rest
	}
	return nil
}

// Finish implements Operator.
func (o *windowRankOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *windowRankOp) Close() error { return nil }

var _ KeyedOperator = (*windowRankOp)(nil)
