package expr

import (
	"fmt"
	"math"

	"github.com/weir-sql/weir/types"
)

// Compare is L op R for op in = <> < <= > >=: numbers of any numeric kind
// with each other, otherwise values of the same kind (VARCHAR, BOOLEAN,
// TIMESTAMP, INTERVAL). NULL if either side is NULL.
type Compare struct {
	Op   string
	L, R Expr
	want func(c int) bool
	// composite: ROW, ARRAY or MAP operands, compared element by element
	// (compositeEqual).
	composite bool
	// foldX, foldText: = or <> of LOWER(foldX) and lower-case ASCII text,
	// compared case-insensitively (lowerfold.go).
	foldX    Expr
	foldText string
	// intCol, intLit, intOp: an integer column compared with a non-NULL
	// integer literal (either side; intOp as if the column is on the
	// left), compared as int64s without the generic path when intFast.
	intFast bool
	intCol  int
	intLit  int64
	intOp   cmpOp
}

// cmpOp is a comparison operator, for the integer fast path.
type cmpOp uint8

const (
	cmpEq cmpOp = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

// cmpOps maps an operator to its cmpOp and to the cmpOp of the operands
// swapped (a < b is b > a).
var cmpOps = map[string][2]cmpOp{
	"=": {cmpEq, cmpEq}, "<>": {cmpNe, cmpNe},
	"<": {cmpLt, cmpGt}, "<=": {cmpLe, cmpGe},
	">": {cmpGt, cmpLt}, ">=": {cmpGe, cmpLe},
}

// setIntFast sets intCol, intLit and intOp when one operand is a column
// of an integer type and the other a non-NULL integer literal.
func (c *Compare) setIntFast() {
	c.intFast = false
	ops, ok := cmpOps[c.Op]
	if !ok || c.composite {
		return
	}
	col, lit, swapped := c.L, c.R, false
	if _, isCol := col.(*Column); !isCol {
		col, lit, swapped = c.R, c.L, true
	}
	cc, ok1 := col.(*Column)
	ll, ok2 := lit.(*Literal)
	if !ok1 || !ok2 || cc.Index < 0 || !cc.Type().Kind.IsInteger() || !ll.V.Kind().IsInteger() {
		return
	}
	c.intFast, c.intCol, c.intLit, c.intOp = true, cc.Index, ll.V.Int(), ops[0]
	if swapped {
		c.intOp = ops[1]
	}
}

// IntRange reports, for an integer column compared with a non-NULL
// integer literal by any operator but <>, the column and the range
// [lo, hi] of its values for which the comparison is TRUE (empty when
// lo > hi: x < MinInt64); NULL when the column is NULL, FALSE otherwise.
func (c *Compare) IntRange() (col int, lo, hi int64, ok bool) {
	if !c.intFast {
		return 0, 0, 0, false
	}
	lo, hi, lit := math.MinInt64, math.MaxInt64, c.intLit
	switch c.intOp {
	case cmpEq:
		lo, hi = lit, lit
	case cmpLt:
		if lit == math.MinInt64 {
			return c.intCol, 1, 0, true // nothing is below
		}
		hi = lit - 1
	case cmpLe:
		hi = lit
	case cmpGt:
		if lit == math.MaxInt64 {
			return c.intCol, 1, 0, true // nothing is above
		}
		lo = lit + 1
	case cmpGe:
		lo = lit
	default: // <>: two ranges
		return 0, 0, 0, false
	}
	return c.intCol, lo, hi, true
}

// evalInt is Eval for an integer column and literal (setIntFast); ok is
// false if the column's value is neither NULL nor an integer (the generic
// path then decides).
func (c *Compare) evalInt(row []types.Value) (v types.Value, ok bool) {
	x := &row[c.intCol]
	if !x.Kind().IsInteger() {
		return types.Value{}, x.IsNull()
	}
	a, b := x.Int(), c.intLit
	var r bool
	switch c.intOp {
	case cmpEq:
		r = a == b
	case cmpNe:
		r = a != b
	case cmpLt:
		r = a < b
	case cmpLe:
		r = a <= b
	case cmpGt:
		r = a > b
	default:
		r = a >= b
	}
	return types.BoolValue(r), true
}

var _ Node = (*Compare)(nil)

// NewCompare type-checks and returns L op R.
func NewCompare(op string, l, r Expr) (Expr, error) {
	var want func(int) bool
	switch op {
	case "=":
		want = func(c int) bool { return c == 0 }
	case "<>":
		want = func(c int) bool { return c != 0 }
	case "<":
		want = func(c int) bool { return c < 0 }
	case "<=":
		want = func(c int) bool { return c <= 0 }
	case ">":
		want = func(c int) bool { return c > 0 }
	case ">=":
		want = func(c int) bool { return c >= 0 }
	default:
		return nil, fmt.Errorf("unknown comparison operator %q", op)
	}
	if !Comparable(l.Type().Kind, r.Type().Kind) {
		return nil, fmt.Errorf("cannot compare %s and %s", l.Type().Kind, r.Type().Kind)
	}
	if lk, rk := l.Type().Kind, r.Type().Kind; isComposite(lk) || isComposite(rk) {
		var err error
		if l, r, err = alignComposites(op, l, r); err != nil {
			return nil, err
		}
	}
	c := &Compare{Op: op, L: l, R: r, want: want}
	c.composite = isComposite(l.Type().Kind) || isComposite(r.Type().Kind)
	if op == "=" || op == "<>" {
		c.foldX, c.foldText = lowerFold(l, r)
	}
	c.setIntFast()
	return c, nil
}

// Type is BOOLEAN, NOT NULL if both operands are (and are not
// composites, which may hold NULL elements).
func (c *Compare) Type() types.Type {
	return types.Type{Kind: types.KindBoolean, NotNull: !c.composite && !nullable(c.L.Type(), c.R.Type())}
}

// String renders =(a, b).
func (c *Compare) String() string { return Format(c) }

// Children returns L and R.
func (c *Compare) Children() []Expr { return []Expr{c.L, c.R} }

// WithChildren rebuilds the comparison.
func (c *Compare) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity(c.Op, kids, 2); err != nil {
		return nil, err
	}
	return NewCompare(c.Op, kids[0], kids[1])
}

// Eval compares.
func (c *Compare) Eval(row []types.Value) (types.Value, error) {
	if c.intFast {
		if v, ok := c.evalInt(row); ok {
			return v, nil
		}
	}
	if c.foldX != nil {
		x, err := c.foldX.Eval(row)
		if err != nil || x.IsNull() {
			return types.Value{}, err
		}
		return types.BoolValue(equalLower(x.Str(), c.foldText) == (c.Op == "=")), nil
	}
	l, err := c.L.Eval(row)
	if err != nil || l.IsNull() {
		return types.Value{}, err
	}
	r, err := c.R.Eval(row)
	if err != nil || r.IsNull() {
		return types.Value{}, err
	}
	if c.composite && c.Op != "=" && c.Op != "<>" {
		o, unknown := rowOrder(l, r)
		if unknown {
			return types.Value{}, nil
		}
		return types.BoolValue(c.want(o)), nil
	}
	if c.composite {
		eq, unknown := compositeEqual(l, r)
		if unknown {
			return types.Value{}, nil
		}
		return types.BoolValue(eq == (c.Op == "=")), nil
	}
	return types.BoolValue(c.want(types.Compare(l, r))), nil
}

// compositeEqual compares two ROWs or ARRAYs of one type element by
// element, as SQL does: unequal if two non-NULL elements differ, else
// unknown if an element is NULL on either side, else equal. MAPs compare
// by their entries in order.
func compositeEqual(a, b types.Value) (eq, unknown bool) {
	if a.Str() == b.Str() && a.Kind() == b.Kind() && a.Kind() != types.KindMap && !hasNull(a) {
		return true, false
	}
	if a.Kind() == types.KindMap {
		return a.Str() == b.Str(), false
	}
	n := a.Len()
	if n != b.Len() {
		return false, false
	}
	for i := range n {
		x, y := a.Field(i), b.Field(i)
		switch {
		case x.IsNull() || y.IsNull():
			unknown = true
		case isComposite(x.Kind()):
			e, u := compositeEqual(x, y)
			if !e && !u {
				return false, false
			}
			unknown = unknown || u
		case types.Compare(x, y) != 0:
			return false, false
		}
	}
	return !unknown, unknown
}

// hasNull reports whether a ROW or ARRAY has a NULL element, at any depth.
func hasNull(v types.Value) bool {
	found := false
	v.Elems(func(_ int, e types.Value) bool {
		found = e.IsNull() || (e.Kind() == types.KindRow || e.Kind() == types.KindArray) && hasNull(e)
		return !found
	})
	return found
}

// rowOrder compares two ROWs of one type field by field, as SQL compares
// row values: the first pair of fields that differ decides; a NULL field
// met before that makes the result unknown (NULL).
func rowOrder(a, b types.Value) (c int, unknown bool) {
	for i := range min(a.Len(), b.Len()) {
		x, y := a.Field(i), b.Field(i)
		switch {
		case x.IsNull() || y.IsNull():
			return 0, true
		case x.Kind() == types.KindRow:
			if c, u := rowOrder(x, y); u || c != 0 {
				return c, u
			}
		default:
			if c := types.Compare(x, y); c != 0 {
				return c, false
			}
		}
	}
	return 0, false
}

// RowOrderable reports whether values of type t can be ordered: a ROW
// whose fields (at any depth) are neither ARRAY nor MAP.
func RowOrderable(t types.Type) bool {
	if t.Kind != types.KindRow {
		return t.Kind != types.KindArray && t.Kind != types.KindMap
	}
	for _, f := range t.Fields() {
		if !RowOrderable(f.Type) {
			return false
		}
	}
	return true
}

// alignComposites checks a comparison of ROW, ARRAY or MAP values: = and
// <> for all of them (as Flink), < <= > >= for ROWs (field by field, see
// rowOrder), of values converted to one type, so that equal values have
// equal bytes.
func alignComposites(op string, l, r Expr) (Expr, Expr, error) {
	lt, rt := l.Type(), r.Type()
	if op != "=" && op != "<>" {
		for _, t := range []types.Type{lt, rt} {
			if t.Kind != types.KindNull && (t.Kind != types.KindRow || !RowOrderable(t)) {
				return nil, nil, fmt.Errorf("cannot order values of type %s: only = and <> compare them (< <= > >= compare ROWs without ARRAY or MAP fields)", t.Name())
			}
		}
	}
	if lt.Kind == types.KindNull || rt.Kind == types.KindNull || types.SameShape(lt, rt) {
		return l, r, nil
	}
	t, ok := commonComposite(lt, rt)
	if !ok {
		return nil, nil, fmt.Errorf("cannot compare %s and %s", lt.Name(), rt.Name())
	}
	conv := func(e Expr) (Expr, error) {
		if types.SameShape(e.Type(), t) {
			return e, nil
		}
		c, err := NewCast(e, t)
		if err != nil {
			return nil, err
		}
		return Fold(c), nil
	}
	l, err := conv(l)
	if err != nil {
		return nil, nil, err
	}
	r, err = conv(r)
	return l, r, err
}
