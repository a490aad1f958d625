package exec

import (
	"fmt"
	"math"
	"slices"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// accumulator holds the state of one aggregate call for every group of a
// GroupAgg, indexed by group number, in typed slices (no boxing per value).
type accumulator interface {
	// grow adds the state of a new group, numbered as the previous count.
	grow()
	// reset clears the state of group g (the group was removed).
	reset(g int32)
	// add accumulates v (+I, +U) into group g.
	add(g int32, v types.Value)
	// retract takes v (-U, -D) out of group g.
	retract(g int32, v types.Value)
	// update adds (+I, +U) or retracts (-U, -D) column col of each row i
	// of b into group gis[i], in row order, skipping rows whose gis[i] is
	// negative. col is -1 for COUNT(*).
	update(gis []int32, b *types.Batch, col int)
	// result returns group g's current result.
	result(g int32) types.Value
	// save appends group g's state to dst (see aggstate.go).
	save(g int32, dst []byte) []byte
	// load sets group g's state from src, written by save, and returns the rest of src.
	load(g int32, src []byte) ([]byte, error)
	// merge adds group src's state into group dst (as if dst had also
	// seen src's rows); src is unchanged. Window aggregates merge slices
	// and sessions with it.
	merge(dst, src int32)
}

// accBytes estimates the memory of one group's state in acc (the typed
// slices; MIN/MAX and DISTINCT count their per-group headers only, as their
// values vary).
func accBytes(acc accumulator) int64 {
	switch a := acc.(type) {
	case *countAcc:
		return 8
	case *sumAcc:
		return 16
	case *decSumAcc:
		return 32
	case *minMaxAcc:
		return 24 + 40
	case *distinctAcc:
		return 8 + 64 + accBytes(a.inner)
	case *intDistinctAcc:
		return 16 + 64 + accBytes(a.inner)
	case *sharedDistinctAcc:
		return accBytes(a.inner) // its values are distinctValues' entries
	case *momentsAcc:
		return 24
	case *seqAcc:
		return 24 + 40
	}
	return 32
}

// AggCallOf converts an aggregate call bound through the registry into
// the runtime's form.
func AggCallOf(c aggfunc.Call) AggCall {
	return AggCall{Func: c.Func.Kind, Distinct: c.Distinct, Arg: c.Arg, ArgType: c.ArgType, Type: c.Type, Name: c.Name, Sep: c.Sep, DistinctArg: c.DistinctArg}
}

// Accumulator is the runtime state of one aggregate call for all the
// groups of an operator subtask; its methods are internal to exec.
type Accumulator interface{ accumulator }

// NewAccumulator builds the accumulator of a registry call, or says why
// the runtime cannot compute it (an argument type it has no
// implementation for).
func NewAccumulator(c aggfunc.Call) (Accumulator, error) {
	if c.Func == nil {
		return nil, fmt.Errorf("%s: no aggregate function", c.Name)
	}
	return newAccumulator(AggCallOf(c))
}

// newAccumulator builds the accumulator of call.
func newAccumulator(call AggCall) (accumulator, error) {
	var acc accumulator
	switch call.Func {
	case AggCountStar:
		return &countAcc{typ: call.Type, star: true}, nil
	case AggCount:
		acc = &countAcc{typ: call.Type}
	case AggSum:
		switch {
		case call.ArgType.Kind == types.KindDecimal:
			acc = &decSumAcc{typ: call.Type, argScale: int(call.ArgType.S)}
		case call.ArgType.Kind.IsInteger():
			acc = &sumAcc{typ: call.Type, bigint: call.Type.Kind == types.KindBigInt && !call.Type.NotNull}
		case call.ArgType.Kind.IsFloat():
			acc = &sumAcc{typ: call.Type, floatIn: true}
		default:
			return nil, fmt.Errorf("%s: SUM of %s is not supported", call.Name, call.ArgType)
		}
	case AggAvg:
		if !call.ArgType.Kind.IsNumeric() {
			return nil, fmt.Errorf("%s: AVG of %s is not supported", call.Name, call.ArgType)
		}
		if call.ArgType.Kind == types.KindDecimal {
			acc = &decSumAcc{typ: call.Type, argScale: int(call.ArgType.S), avg: true}
			break
		}
		acc = &sumAcc{typ: call.Type, floatIn: call.ArgType.Kind.IsFloat(), avg: true}
	case AggMin, AggMax:
		acc = &minMaxAcc{typ: call.Type, max: call.Func == AggMax}
	default:
		var err error
		if acc, err = newMoreAccumulator(call); err != nil {
			return nil, err
		}
	}
	if call.Arg < 0 {
		return nil, fmt.Errorf("%s: missing argument column", call.Name)
	}
	if call.Distinct {
		acc = newDistinctAcc(call, acc)
	}
	return acc, nil
}

// intResult converts an integer result to the call's result type.
func intResult(t types.Type, n int64) types.Value {
	switch t.Kind {
	case types.KindInt:
		return types.IntValue(n)
	case types.KindDouble:
		return types.DoubleValue(float64(n))
	case types.KindTinyInt, types.KindSmallInt:
		return types.BigIntValue(n).WithKind(t.Kind)
	}
	return types.BigIntValue(n)
}

// floatResult converts a floating-point result to the call's result type.
func floatResult(t types.Type, f float64) types.Value {
	switch t.Kind {
	case types.KindInt:
		return types.IntValue(int64(f))
	case types.KindBigInt:
		return types.BigIntValue(int64(f))
	case types.KindFloat:
		return types.FloatValue(f)
	}
	return types.DoubleValue(f)
}

// castResult converts a MIN/MAX value to the result type.
func castResult(t types.Type, v types.Value) types.Value {
	if v.IsNull() || t.Kind == v.Kind() {
		return v
	}
	switch t.Kind {
	case types.KindInt, types.KindBigInt, types.KindTimestamp, types.KindInterval:
		if k := v.Kind(); k == types.KindInt || k == types.KindBigInt || k == types.KindTimestamp || k == types.KindInterval {
			return v.WithKind(t.Kind)
		}
	case types.KindDouble:
		if v.Kind().IsNumeric() {
			return types.DoubleValue(v.Float())
		}
	}
	return v
}

// updateEach is update for an accumulator without a batch loop of its own.
func updateEach(acc accumulator, gis []int32, b *types.Batch, col int) {
	for i, g := range gis {
		if g < 0 {
			continue
		}
		v := b.Vals[i*b.Width+col]
		if b.Kinds[i].IsRetraction() {
			acc.retract(g, v)
		} else {
			acc.add(g, v)
		}
	}
}

// countAcc is COUNT(*) (star) or COUNT(x).
type countAcc struct {
	typ  types.Type
	star bool
	n    []int64
}

func (a *countAcc) grow()         { a.n = append(a.n, 0) }
func (a *countAcc) reset(g int32) { a.n[g] = 0 }
func (a *countAcc) add(g int32, v types.Value) {
	if a.star || !v.IsNull() {
		a.n[g]++
	}
}
func (a *countAcc) retract(g int32, v types.Value) {
	if a.star || !v.IsNull() {
		a.n[g]--
	}
}
func (a *countAcc) result(g int32) types.Value { return intResult(a.typ, a.n[g]) }
func (a *countAcc) update(gis []int32, b *types.Batch, col int) {
	for i, g := range gis {
		if g < 0 || (!a.star && b.Vals[i*b.Width+col].IsNull()) {
			continue
		}
		if b.Kinds[i].IsRetraction() {
			a.n[g]--
		} else {
			a.n[g]++
		}
	}
}

// sumAcc is SUM or AVG: per group, the sum of the non-NULL inputs (in
// int64 for integer inputs, float64 for DOUBLE) and their count, together
// in 16 bytes (one cache line for a row's update). AVG divides, with
// integer division for an integer result type (as Flink).
type sumAcc struct {
	typ     types.Type
	floatIn bool // the sum is a float64 (its bits), else an int64
	avg     bool
	// bigint: a SUM of integers typed BIGINT (nullable), the common case,
	// whose result takes no conversion.
	bigint bool
	s      []sumState
}

type sumState struct {
	sum uint64 // int64, or float64 bits when floatIn
	n   int64  // non-NULL inputs
}

func (a *sumAcc) grow()         { a.s = append(a.s, sumState{}) }
func (a *sumAcc) reset(g int32) { a.s[g] = sumState{} }

// apply adds v into group g, or with retract takes it out.
func (a *sumAcc) apply(g int32, v *types.Value, retract bool) {
	if v.IsNull() {
		return
	}
	s := &a.s[g]
	switch {
	case a.floatIn && retract:
		s.sum = math.Float64bits(math.Float64frombits(s.sum) - v.Float())
	case a.floatIn:
		s.sum = math.Float64bits(math.Float64frombits(s.sum) + v.Float())
	case retract:
		s.sum -= uint64(v.Int())
	default:
		s.sum += uint64(v.Int())
	}
	if retract {
		s.n--
	} else {
		s.n++
	}
}
func (a *sumAcc) add(g int32, v types.Value)     { a.apply(g, &v, false) }
func (a *sumAcc) retract(g int32, v types.Value) { a.apply(g, &v, true) }
func (a *sumAcc) update(gis []int32, b *types.Batch, col int) {
	if a.floatIn {
		for i, g := range gis {
			if g >= 0 {
				a.apply(g, &b.Vals[i*b.Width+col], b.Kinds[i].IsRetraction())
			}
		}
		return
	}
	// apply's integer cases written out: no call per row.
	sums := a.s
	for i, g := range gis {
		if g < 0 {
			continue
		}
		v := &b.Vals[i*b.Width+col]
		if v.IsNull() {
			continue
		}
		s := &sums[g]
		if b.Kinds[i].IsRetraction() {
			s.sum -= uint64(v.Int())
			s.n--
		} else {
			s.sum += uint64(v.Int())
			s.n++
		}
	}
}
func (a *sumAcc) result(g int32) types.Value {
	s := a.s[g]
	if a.bigint {
		if s.n == 0 {
			return types.NullValue()
		}
		return types.BigIntValue(int64(s.sum))
	}
	switch {
	case s.n == 0 && a.typ.NotNull && !a.avg:
		// A SUM typed NOT NULL (the sum of counts of a split distinct
		// aggregation, Flink's $SUM0) is 0 over no values.
		return intResult(a.typ, 0)
	case s.n == 0:
		return types.NullValue()
	case a.floatIn && a.avg:
		return floatResult(a.typ, math.Float64frombits(s.sum)/float64(s.n))
	case a.floatIn:
		return floatResult(a.typ, math.Float64frombits(s.sum))
	case a.avg && a.typ.Kind == types.KindDouble:
		return types.DoubleValue(float64(int64(s.sum)) / float64(s.n))
	case a.avg:
		return intResult(a.typ, int64(s.sum)/s.n)
	}
	return intResult(a.typ, int64(s.sum))
}

// valCount is a distinct value and how many times it is present.
type valCount struct {
	v types.Value
	n int64
}

// minMaxAcc is MIN or MAX, correct under retraction: each group keeps its
// distinct values sorted, with a count each. On insert-only input
// (insertOnly, set by window aggregates) a group keeps its extreme only:
// a sorted set would cost a shifting insert per row, quadratic in a
// window's distinct values.
type minMaxAcc struct {
	typ        types.Type
	max        bool
	insertOnly bool
	vals       [][]valCount
}

// setInsertOnly tells the MIN/MAX accumulators in acc (directly or under
// DISTINCT) that their input has no retractions, so they keep each group's
// extreme only.
func setInsertOnly(acc accumulator) {
	switch a := acc.(type) {
	case *minMaxAcc:
		a.insertOnly = true
	case *distinctAcc:
		setInsertOnly(a.inner)
	case *intDistinctAcc:
		setInsertOnly(a.inner)
	}
}

// keepExtreme folds e into group g's single extreme (insert-only mode).
func (a *minMaxAcc) keepExtreme(g int32, e valCount) {
	s := a.vals[g]
	if len(s) == 0 {
		a.vals[g] = append(s, e)
		return
	}
	c := types.Compare(e.v, s[0].v)
	switch {
	case c == 0:
		s[0].n += e.n
	case (c > 0) == a.max:
		s[0] = e
	}
}

func compareValCount(e valCount, v types.Value) int { return types.Compare(e.v, v) }

func (a *minMaxAcc) grow()         { a.vals = append(a.vals, nil) }
func (a *minMaxAcc) reset(g int32) { a.vals[g] = nil }
func (a *minMaxAcc) add(g int32, v types.Value) {
	if v.IsNull() {
		return
	}
	if a.insertOnly {
		a.keepExtreme(g, valCount{v: v, n: 1})
		return
	}
	s := a.vals[g]
	if n := len(s); n == 0 || types.Compare(s[n-1].v, v) < 0 {
		a.vals[g] = append(s, valCount{v: v, n: 1})
		return
	}
	i, found := slices.BinarySearchFunc(s, v, compareValCount)
	if found {
		s[i].n++
		return
	}
	a.vals[g] = slices.Insert(s, i, valCount{v: v, n: 1})
}
func (a *minMaxAcc) retract(g int32, v types.Value) {
	if v.IsNull() {
		return
	}
	s := a.vals[g]
	i, found := slices.BinarySearchFunc(s, v, compareValCount)
	if !found {
		return // retracting a value never added: nothing to take away
	}
	s[i].n--
	if s[i].n == 0 {
		a.vals[g] = slices.Delete(s, i, i+1)
	}
}
func (a *minMaxAcc) update(gis []int32, b *types.Batch, col int) {
	updateEach(a, gis, b, col)
}
func (a *minMaxAcc) result(g int32) types.Value {
	s := a.vals[g]
	if len(s) == 0 {
		return types.NullValue()
	}
	if a.max {
		return castResult(a.typ, s[len(s)-1].v)
	}
	return castResult(a.typ, s[0].v)
}

// distinctAcc feeds its inner accumulator only the first occurrence of each
// distinct non-NULL value of a group, and retracts it when its last
// occurrence is retracted.
type distinctAcc struct {
	inner accumulator
	seen  []map[string]*int64
	buf   []byte
}

func (a *distinctAcc) grow()         { a.seen = append(a.seen, nil); a.inner.grow() }
func (a *distinctAcc) reset(g int32) { a.seen[g] = nil; a.inner.reset(g) }
func (a *distinctAcc) add(g int32, v types.Value) {
	if v.IsNull() {
		return
	}
	a.buf = types.AppendKey(a.buf[:0], v)
	m := a.seen[g]
	if m == nil {
		m = make(map[string]*int64)
		a.seen[g] = m
	}
	if c := m[string(a.buf)]; c != nil {
		*c++
		return
	}
	one := int64(1)
	m[string(a.buf)] = &one
	a.inner.add(g, v)
}
func (a *distinctAcc) retract(g int32, v types.Value) {
	if v.IsNull() {
		return
	}
	a.buf = types.AppendKey(a.buf[:0], v)
	c := a.seen[g][string(a.buf)]
	if c == nil {
		return
	}
	*c--
	if *c == 0 {
		delete(a.seen[g], string(a.buf))
		a.inner.retract(g, v)
	}
}
func (a *distinctAcc) result(g int32) types.Value { return a.inner.result(g) }
func (a *distinctAcc) update(gis []int32, b *types.Batch, col int) {
	updateEach(a, gis, b, col)
}

func (a *countAcc) merge(dst, src int32) { a.n[dst] += a.n[src] }

func (a *sumAcc) merge(dst, src int32) {
	d, s := &a.s[dst], a.s[src]
	if a.floatIn {
		d.sum = math.Float64bits(math.Float64frombits(d.sum) + math.Float64frombits(s.sum))
	} else {
		d.sum += s.sum
	}
	d.n += s.n
}

func (a *minMaxAcc) merge(dst, src int32) {
	for _, e := range a.vals[src] {
		if a.insertOnly {
			a.keepExtreme(dst, e)
			continue
		}
		s := a.vals[dst]
		i, found := slices.BinarySearchFunc(s, e.v, compareValCount)
		if found {
			s[i].n += e.n
			continue
		}
		a.vals[dst] = slices.Insert(s, i, e)
	}
}

func (a *distinctAcc) merge(dst, src int32) {
	for k, c := range a.seen[src] {
		m := a.seen[dst]
		if m == nil {
			m = make(map[string]*int64)
			a.seen[dst] = m
		}
		if d := m[k]; d != nil {
			*d += *c
			continue
		}
		n := *c
		m[k] = &n
		v, _, err := types.DecodeKey([]byte(k))
		if err != nil {
			continue // keys are written by AppendKey: cannot happen
		}
		a.inner.add(dst, v)
	}
}

// savedMerger is an accumulator that merges a saved state (save) into a
// group directly, without loading it into a scratch group first.
type savedMerger interface {
	// mergeSaved adds the state at the start of src into group g and
	// returns the rest of src.
	mergeSaved(g int32, src []byte) ([]byte, error)
}

// mergeSaved adds the state at the start of src, written by acc.save, into
// group g of acc and returns the rest of src; an accumulator without
// mergeSaved of its own loads it into group scratch (clobbered) and merges.
func mergeSaved(acc accumulator, g, scratch int32, src []byte) ([]byte, error) {
	if m, ok := acc.(savedMerger); ok {
		return m.mergeSaved(g, src)
	}
	acc.reset(scratch)
	rest, err := acc.load(scratch, src)
	if err != nil {
		return nil, err
	}
	acc.merge(g, scratch)
	return rest, nil
}

func (a *countAcc) mergeSaved(g int32, src []byte) ([]byte, error) {
	v, rest, err := readVarint(src)
	if err != nil {
		return nil, err
	}
	a.n[g] += v
	return rest, nil
}

func (a *sumAcc) mergeSaved(g int32, src []byte) ([]byte, error) {
	v, rest, err := a.decode(src)
	if err != nil {
		return nil, err
	}
	d := &a.s[g]
	if a.floatIn {
		d.sum = math.Float64bits(math.Float64frombits(d.sum) + math.Float64frombits(v.sum))
	} else {
		d.sum += v.sum
	}
	d.n += v.n
	return rest, nil
}
