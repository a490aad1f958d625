package exec

import (
	"slices"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// AggFunc is an aggregate function: the registry's Kind of accumulator.
type AggFunc = aggfunc.Kind

// The aggregate functions (see package aggfunc).
const (
	AggCountStar = aggfunc.CountStar // COUNT(*): counts rows
	AggCount     = aggfunc.Count     // COUNT(x): counts non-NULL x
	AggSum       = aggfunc.Sum       // SUM(x): NULL if no non-NULL x
	AggAvg       = aggfunc.Avg       // AVG(x): NULL if no non-NULL x; integer input gives integer result (as Flink)
	AggMin       = aggfunc.Min       // MIN(x), correct under retraction
	AggMax       = aggfunc.Max       // MAX(x), correct under retraction
)

// AggCall is one aggregate of a GroupAgg.
type AggCall struct {
	Func     AggFunc
	Distinct bool       // COUNT(DISTINCT x), SUM(DISTINCT x), ...
	Arg      int        // input column; -1 for COUNT(*)
	ArgType  types.Type // type of the input column
	Type     types.Type // result type
	Name     string     // for EXPLAIN, e.g. "SUM(v)"
	Sep      string     // LISTAGG's separator
	// DistinctArg is aggfunc.Call's: DISTINCT calls with the same
	// non-empty DistinctArg take, on every row, one same value or NULL.
	DistinctArg string
}

// NewCalc returns a factory for an operator that keeps rows for which filter
// is TRUE (nil: all rows) and emits projections evaluated on them, keeping
// each row's kind. Projections nil means the row is passed through as is.
// The operands of AND and OR are ordered cheap first (expr.CheapFirst).
func NewCalc(filter expr.Expr, projections []expr.Expr) func() Operator {
	if filter != nil {
		filter = expr.CheapFirst(filter)
	}
	if projections != nil {
		projections = slices.Clone(projections)
		for i, p := range projections {
			projections[i] = expr.CheapFirst(p)
		}
	}
	return func() Operator { return &calcOp{filter: filter, proj: projections} }
}

// NewGroupAgg returns a factory for a grouped aggregate over a changelog. It
// groups by the input columns keys and computes aggs; output rows are the key
// columns followed by one column per aggregate. For each group whose result
// changed it emits +I (new group), -U old / +U new (changed), or -D old (the
// group's last row was retracted); nothing when the result is unchanged.
// With no keys it is a global aggregate (one group).
func NewGroupAgg(keys []int, aggs []AggCall) func() Operator {
	return func() Operator { return newGroupAggOp(keys, aggs) }
}

// NewGroupAggOverInserts is NewGroupAgg for an input that is insert-only
// (the planner's changelog mode): MIN and MAX keep each group's extreme
// only instead of every distinct value (which they need to take a value
// back). Its state is the same shape as NewGroupAgg's: a restore from the
// sorted form keeps the extreme.
func NewGroupAggOverInserts(keys []int, aggs []AggCall) func() Operator {
	return func() Operator {
		g := newGroupAggOp(keys, aggs)
		g.insertOnly = true
		return g
	}
}

// NewFinalGroupAgg is NewGroupAgg for the outer aggregate of a split
// distinct aggregation, whose input is the changelog of a GroupAggregate
// over insert-only input: per key a +I, then -U/+U pairs, no -D. A
// group's row count counts the +I rows only (a -U does not lower it, nor
// a +U raise it), so a group whose -U and +U arrive in different batches
// is not removed in between: the outer emits +I, -U and +U only, as the
// aggregate it replaces.
func NewFinalGroupAgg(keys []int, aggs []AggCall) func() Operator {
	return func() Operator {
		g := newGroupAggOp(keys, aggs)
		g.pairedUpdates = true
		return g
	}
}
