package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// The accumulators of VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP,
// FIRST_VALUE, LAST_VALUE, LISTAGG, BOOL_AND and BOOL_OR, all correct
// under retraction, with their state encodings (see aggstate.go).

// newMoreAccumulator builds the accumulators of this file.
func newMoreAccumulator(call AggCall) (accumulator, error) {
	switch call.Func {
	case aggfunc.VarPop, aggfunc.VarSamp, aggfunc.StddevPop, aggfunc.StddevSamp:
		if !call.ArgType.Kind.IsNumeric() {
			return nil, fmt.Errorf("%s: %s is not numeric", call.Name, call.ArgType)
		}
		return &momentsAcc{typ: call.Type, fn: call.Func}, nil
	case aggfunc.FirstValue, aggfunc.LastValue, aggfunc.ListAgg:
		sep := call.Sep
		if call.Func == aggfunc.ListAgg && sep == "" {
			sep = ","
		}
		return &seqAcc{typ: call.Type, fn: call.Func, sep: sep}, nil
	case aggfunc.BoolAnd, aggfunc.BoolOr:
		return &boolAcc{and: call.Func == aggfunc.BoolAnd}, nil
	}
	return nil, fmt.Errorf("%s: unknown aggregate function %d", call.Name, call.Func)
}

// momentsAcc keeps, per group, the count, sum and sum of squares of the
// non-NULL values (as float64), from which the variances follow.
type momentsAcc struct {
	typ types.Type
	fn  aggfunc.Kind
	s   []moments
}

type moments struct {
	n          int64
	sum, sumSq float64
}

func (a *momentsAcc) grow()         { a.s = append(a.s, moments{}) }
func (a *momentsAcc) reset(g int32) { a.s[g] = moments{} }
func (a *momentsAcc) apply(g int32, v *types.Value, retract bool) {
	if v.IsNull() {
		return
	}
	f := v.Float()
	m := &a.s[g]
	if retract {
		m.n--
		m.sum -= f
		m.sumSq -= f * f
	} else {
		m.n++
		m.sum += f
		m.sumSq += f * f
	}
	if m.n == 0 { // drop the rounding left over
		*m = moments{}
	}
}
func (a *momentsAcc) add(g int32, v types.Value)     { a.apply(g, &v, false) }
func (a *momentsAcc) retract(g int32, v types.Value) { a.apply(g, &v, true) }
func (a *momentsAcc) update(gis []int32, b *types.Batch, col int) {
	for i, g := range gis {
		if g >= 0 {
			a.apply(g, &b.Vals[i*b.Width+col], b.Kinds[i].IsRetraction())
		}
	}
}
func (a *momentsAcc) result(g int32) types.Value {
	m := a.s[g]
	samp := a.fn == aggfunc.VarSamp || a.fn == aggfunc.StddevSamp
	if m.n <= 0 || samp && m.n == 1 {
		return types.NullValue()
	}
	n := float64(m.n)
	v := m.sumSq - m.sum*m.sum/n
	if samp {
		v /= n - 1
	} else {
		v /= n
	}
	v = max(v, 0)
	if a.fn == aggfunc.StddevPop || a.fn == aggfunc.StddevSamp {
		v = math.Sqrt(v)
	}
	return floatResult(a.typ, v)
}
func (a *momentsAcc) save(g int32, dst []byte) []byte {
	m := &a.s[g]
	dst = binary.AppendVarint(dst, m.n)
	return appendFloat(appendFloat(dst, m.sum), m.sumSq)
}
func (a *momentsAcc) load(g int32, src []byte) (rest []byte, err error) {
	m := &a.s[g]
	if m.n, rest, err = readVarint(src); err != nil {
		return nil, err
	}
	if m.sum, rest, err = readFloat(rest); err != nil {
		return nil, err
	}
	m.sumSq, rest, err = readFloat(rest)
	return rest, err
}

// seqAcc keeps, per group, the non-NULL values present in arrival order,
// runs of equal values as one entry with a count. A retraction removes
// the value's earliest occurrence (as Flink's retractable FIRST_VALUE,
// LAST_VALUE and LISTAGG do); retracting a value not present does nothing.
type seqAcc struct {
	typ types.Type
	fn  aggfunc.Kind
	sep string
	s   [][]valCount
}

func (a *seqAcc) grow()         { a.s = append(a.s, nil) }
func (a *seqAcc) reset(g int32) { a.s[g] = nil }
func (a *seqAcc) add(g int32, v types.Value) {
	if v.IsNull() {
		return
	}
	s := a.s[g]
	if n := len(s); n > 0 && types.Equal(s[n-1].v, v) && s[n-1].v.Kind() == v.Kind() {
		s[n-1].n++
		return
	}
	a.s[g] = append(s, valCount{v: v, n: 1})
}
func (a *seqAcc) retract(g int32, v types.Value) {
	if v.IsNull() {
		return
	}
	s := a.s[g]
	for i := range s {
		if types.Equal(s[i].v, v) {
			if s[i].n--; s[i].n > 0 {
				return
			}
			// Join the neighbours if they are now adjacent and equal.
			if i > 0 && i+1 < len(s) && types.Equal(s[i-1].v, s[i+1].v) && s[i-1].v.Kind() == s[i+1].v.Kind() {
				s[i-1].n += s[i+1].n
				a.s[g] = append(s[:i], s[i+2:]...)
				return
			}
			a.s[g] = append(s[:i], s[i+1:]...)
			return
		}
	}
}
func (a *seqAcc) update(gis []int32, b *types.Batch, col int) { updateEach(a, gis, b, col) }
func (a *seqAcc) result(g int32) types.Value {
	s := a.s[g]
	if len(s) == 0 {
		return types.NullValue()
	}
	switch a.fn {
	case aggfunc.FirstValue:
		return castResult(a.typ, s[0].v)
	case aggfunc.LastValue:
		return castResult(a.typ, s[len(s)-1].v)
	}
	var b strings.Builder
	first := true
	for _, e := range s {
		for range e.n {
			if !first {
				b.WriteString(a.sep)
			}
			first = false
			b.WriteString(e.v.Str())
		}
	}
	return types.StringValue(b.String())
}
func (a *seqAcc) save(g int32, dst []byte) []byte {
	s := a.s[g]
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	for _, e := range s {
		dst = types.AppendKey(dst, e.v)
		dst = binary.AppendVarint(dst, e.n)
	}
	return dst
}
func (a *seqAcc) load(g int32, src []byte) ([]byte, error) {
	n, rest, err := readUvarint(src)
	if err != nil || n > uint64(len(rest)) {
		return nil, errBadState
	}
	s := make([]valCount, n)
	for i := range s {
		if s[i].v, rest, err = types.DecodeKey(rest); err != nil {
			return nil, fmt.Errorf("%w: %v", errBadState, err)
		}
		if s[i].n, rest, err = readVarint(rest); err != nil {
			return nil, err
		}
		if s[i].n <= 0 {
			return nil, errBadState
		}
	}
	a.s[g] = s
	return rest, nil
}

// boolAcc is BOOL_AND or BOOL_OR: per group, the numbers of TRUE and
// FALSE values.
type boolAcc struct {
	and bool
	s   [][2]int64 // [FALSE count, TRUE count]
}

func (a *boolAcc) grow()         { a.s = append(a.s, [2]int64{}) }
func (a *boolAcc) reset(g int32) { a.s[g] = [2]int64{} }
func (a *boolAcc) apply(g int32, v types.Value, d int64) {
	if v.IsNull() {
		return
	}
	i := 0
	if v.Bool() {
		i = 1
	}
	a.s[g][i] += d
}
func (a *boolAcc) add(g int32, v types.Value)                  { a.apply(g, v, 1) }
func (a *boolAcc) retract(g int32, v types.Value)              { a.apply(g, v, -1) }
func (a *boolAcc) update(gis []int32, b *types.Batch, col int) { updateEach(a, gis, b, col) }
func (a *boolAcc) result(g int32) types.Value {
	c := a.s[g]
	if c[0]+c[1] <= 0 {
		return types.NullValue()
	}
	if a.and {
		return types.BoolValue(c[0] == 0)
	}
	return types.BoolValue(c[1] > 0)
}
func (a *boolAcc) save(g int32, dst []byte) []byte {
	return binary.AppendVarint(binary.AppendVarint(dst, a.s[g][0]), a.s[g][1])
}
func (a *boolAcc) load(g int32, src []byte) (rest []byte, err error) {
	if a.s[g][0], rest, err = readVarint(src); err != nil {
		return nil, err
	}
	a.s[g][1], rest, err = readVarint(rest)
	return rest, err
}

// merge adds group src's moments into group dst (window slices).
func (a *momentsAcc) merge(dst, src int32) {
	d, s := &a.s[dst], a.s[src]
	d.n += s.n
	d.sum += s.sum
	d.sumSq += s.sumSq
}

// merge appends group src's values after group dst's: a window merges its
// slices in time order, so the values stay in arrival order.
func (a *seqAcc) merge(dst, src int32) {
	for _, r := range a.s[src] {
		d := a.s[dst]
		if n := len(d); n > 0 && types.Equal(d[n-1].v, r.v) && d[n-1].v.Kind() == r.v.Kind() {
			d[n-1].n += r.n
			continue
		}
		a.s[dst] = append(d, r)
	}
}

// merge adds group src's counts into group dst (window slices).
func (a *boolAcc) merge(dst, src int32) {
	a.s[dst][0] += a.s[src][0]
	a.s[dst][1] += a.s[src][1]
}
