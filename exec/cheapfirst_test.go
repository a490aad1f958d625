package exec

import (
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// TestOperatorsOrderCheapFirst: the Calc's filter and every join's residual
// condition are built with the cheap operand of an OR first (expr.CheapFirst
// decides which; TestCheapFirst in expr checks that the results do not
// change).
func TestOperatorsOrderCheapFirst(t *testing.T) {
	s := expr.NewColumn(0, types.Varchar, "s")
	n := expr.NewColumn(1, types.Int, "n")
	tag := &expr.UserFunc{ID: "tag", Args: []types.Kind{types.KindVarchar}, Result: types.KindVarchar,
		Call: func(a, _, _ types.Value) (types.Value, error) { return a, nil }}
	call, err := expr.NewUserCall("tag", tag, []expr.Expr{s})
	if err != nil {
		t.Fatal(err)
	}
	small, err := expr.NewCompare("<", n, expr.NewLiteral(types.IntValue(3), types.Type{Kind: types.KindInt}))
	if err != nil {
		t.Fatal(err)
	}
	cond, err := expr.NewOr(expr.NewIsNull(call, true), small)
	if err != nil {
		t.Fatal(err)
	}
	want := "OR(<(n, 3), IS NOT NULL(tag(s)))"
	for name, got := range map[string]expr.Expr{
		"calc":     NewCalc(cond, nil)().(*calcOp).filter,
		"join":     NewJoin(JoinSpec{Residual: cond})().(*joinOp).spec.Residual,
		"interval": NewIntervalJoin(IntervalJoinSpec{JoinSpec: JoinSpec{Residual: cond}})().(*intervalJoinOp).spec.Residual,
		"window":   NewWindowJoin(WindowJoinSpec{JoinSpec: JoinSpec{Residual: cond}})().(*windowJoinOp).spec.Residual,
		"temporal": NewTemporalJoin(TemporalJoinSpec{JoinSpec: JoinSpec{Residual: cond}})().(*temporalJoinOp).spec.Residual,
		"lookup":   NewLookupJoin(LookupJoinSpec{Residual: cond})().(*lookupJoinOp).spec.Residual,
		"semi":     NewSemiJoin(SemiJoinSpec{Residual: cond})().(*semiJoinOp).spec.Residual,
	} {
		if got.String() != want {
			t.Errorf("%s: condition %s, want %s", name, got, want)
		}
	}
}
