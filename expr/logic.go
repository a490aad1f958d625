package expr

import (
	"fmt"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

func checkBool(what string, es ...Expr) error {
	for _, e := range es {
		if k := e.Type().Kind; k != types.KindBoolean && k != types.KindNull {
			return fmt.Errorf("%s needs BOOLEAN operands, got %s", what, k)
		}
	}
	return nil
}

// Logic is L AND R or L OR R with SQL's three-valued logic.
type Logic struct {
	Or   bool
	L, R Expr
}

var _ Node = (*Logic)(nil)

// NewAnd returns L AND R.
func NewAnd(l, r Expr) (Expr, error) {
	if err := checkBool("AND", l, r); err != nil {
		return nil, err
	}
	return &Logic{L: l, R: r}, nil
}

// NewOr returns L OR R.
func NewOr(l, r Expr) (Expr, error) {
	if err := checkBool("OR", l, r); err != nil {
		return nil, err
	}
	return &Logic{Or: true, L: l, R: r}, nil
}

func (g *Logic) name() string {
	if g.Or {
		return "OR"
	}
	return "AND"
}

// Type is BOOLEAN.
func (g *Logic) Type() types.Type {
	return types.Type{Kind: types.KindBoolean, NotNull: !nullable(g.L.Type(), g.R.Type())}
}

// String renders AND(a, b).
func (g *Logic) String() string { return Format(g) }

// Children returns L and R.
func (g *Logic) Children() []Expr { return []Expr{g.L, g.R} }

// WithChildren rebuilds the connective.
func (g *Logic) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity(g.name(), kids, 2); err != nil {
		return nil, err
	}
	if g.Or {
		return NewOr(kids[0], kids[1])
	}
	return NewAnd(kids[0], kids[1])
}

// Eval: AND is FALSE if either side is FALSE, else NULL if either is NULL;
// OR is TRUE if either side is TRUE, else NULL if either is NULL. The right
// side is not evaluated when the left decides.
func (g *Logic) Eval(row []types.Value) (types.Value, error) {
	l, err := g.L.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	decisive := g.Or // OR: TRUE decides; AND: FALSE decides
	if !l.IsNull() && l.Bool() == decisive {
		return l, nil
	}
	r, err := g.R.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	if !r.IsNull() && r.Bool() == decisive {
		return r, nil
	}
	if l.IsNull() || r.IsNull() {
		return types.Value{}, nil
	}
	return types.BoolValue(!decisive), nil
}

// Not is NOT X: NULL stays NULL.
type Not struct{ X Expr }

var _ Node = (*Not)(nil)

// NewNot returns NOT x.
func NewNot(x Expr) (Expr, error) {
	if err := checkBool("NOT", x); err != nil {
		return nil, err
	}
	return &Not{X: x}, nil
}

// Type is BOOLEAN.
func (n *Not) Type() types.Type {
	return types.Type{Kind: types.KindBoolean, NotNull: n.X.Type().NotNull}
}

// String renders NOT(x).
func (n *Not) String() string { return Format(n) }

// Children returns X.
func (n *Not) Children() []Expr { return []Expr{n.X} }

// WithChildren rebuilds the negation.
func (n *Not) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("NOT", kids, 1); err != nil {
		return nil, err
	}
	return NewNot(kids[0])
}

// Eval negates.
func (n *Not) Eval(row []types.Value) (types.Value, error) {
	v, err := n.X.Eval(row)
	if err != nil || v.IsNull() {
		return types.Value{}, err
	}
	return types.BoolValue(!v.Bool()), nil
}

// IsNull is X IS [NOT] NULL; never NULL itself.
type IsNull struct {
	X   Expr
	Not bool
}

var _ Node = (*IsNull)(nil)

// NewIsNull returns x IS NULL, or x IS NOT NULL if not.
func NewIsNull(x Expr, not bool) Expr { return &IsNull{X: x, Not: not} }

// Type is BOOLEAN NOT NULL.
func (n *IsNull) Type() types.Type { return types.Type{Kind: types.KindBoolean, NotNull: true} }

// String renders IS NULL(x).
func (n *IsNull) String() string { return Format(n) }

// Children returns X.
func (n *IsNull) Children() []Expr { return []Expr{n.X} }

// WithChildren rebuilds the test.
func (n *IsNull) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("IS NULL", kids, 1); err != nil {
		return nil, err
	}
	return NewIsNull(kids[0], n.Not), nil
}

// Eval tests for NULL.
func (n *IsNull) Eval(row []types.Value) (types.Value, error) {
	v, err := n.X.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	return types.BoolValue(v.IsNull() != n.Not), nil
}

// In is X [NOT] IN (list): TRUE if X equals an element; else NULL if X or
// an element is NULL; else FALSE (NOT IN negates that, NULL staying NULL).
type In struct {
	X    Expr
	List []Expr
	Not  bool
	// foldX, foldText: X is LOWER(foldX) and the list lower-case ASCII
	// texts, compared case-insensitively (lowerfold.go).
	foldX    Expr
	foldText []string
	// foldFirst holds the first bytes of the non-empty foldText: an ASCII
	// text whose first byte, lower-cased, is not among them matches none.
	foldFirst asciiSet
}

var _ Node = (*In)(nil)

// NewIn type-checks and returns x [NOT] IN (list).
func NewIn(x Expr, list []Expr, not bool) (Expr, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("IN needs at least one value")
	}
	for _, e := range list {
		if !Comparable(x.Type().Kind, e.Type().Kind) {
			return nil, fmt.Errorf("cannot compare %s and %s in IN list", x.Type().Kind, e.Type().Kind)
		}
	}
	n := &In{X: x, List: list, Not: not}
	if fx := lowerOperand(x); fx != nil {
		texts := make([]string, 0, len(list))
		for _, e := range list {
			if t, ok := lowerText(e); ok {
				texts = append(texts, t)
			}
		}
		if len(texts) == len(list) {
			n.foldX, n.foldText = fx, texts
			for _, t := range texts {
				if t != "" {
					n.foldFirst.add(t[0])
				}
			}
		}
	}
	return n, nil
}

// Type is BOOLEAN.
func (n *In) Type() types.Type {
	t := types.Type{Kind: types.KindBoolean, NotNull: n.X.Type().NotNull}
	for _, e := range n.List {
		t.NotNull = t.NotNull && e.Type().NotNull
	}
	return t
}

// String renders IN(x, a, b) or NOT IN(x, a, b).
func (n *In) String() string { return Format(n) }

// Children returns X followed by the list.
func (n *In) Children() []Expr { return append([]Expr{n.X}, n.List...) }

// WithChildren rebuilds the test.
func (n *In) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("IN", kids, len(n.List)+1); err != nil {
		return nil, err
	}
	return NewIn(kids[0], kids[1:], n.Not)
}

// Eval tests membership.
func (n *In) Eval(row []types.Value) (types.Value, error) {
	if n.foldX != nil {
		x, err := n.foldX.Eval(row)
		if err != nil || x.IsNull() {
			return types.Value{}, err
		}
		s := x.Str()
		// A text of ASCII first byte lowers to a text that starts with that
		// byte lower-cased: one test rules out the whole list (q21's
		// channels not in it). A non-ASCII one may lower to ASCII (the
		// Kelvin sign to k): the list decides.
		if len(s) > 0 && s[0] < utf8.RuneSelf && !n.foldFirst.has(lowerASCII(s[0])) {
			return types.BoolValue(n.Not), nil
		}
		for _, t := range n.foldText {
			if equalLower(s, t) {
				return types.BoolValue(!n.Not), nil
			}
		}
		return types.BoolValue(n.Not), nil
	}
	x, err := n.X.Eval(row)
	if err != nil || x.IsNull() {
		return types.Value{}, err
	}
	sawNull := false
	for _, e := range n.List {
		v, err := e.Eval(row)
		if err != nil {
			return types.Value{}, err
		}
		if v.IsNull() {
			sawNull = true
			continue
		}
		if types.Compare(x, v) == 0 {
			return types.BoolValue(!n.Not), nil
		}
	}
	if sawNull {
		return types.Value{}, nil
	}
	return types.BoolValue(n.Not), nil
}

// Between is X [NOT] BETWEEN Lo AND Hi, i.e. X >= Lo AND X <= Hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

var _ Node = (*Between)(nil)

// NewBetween type-checks and returns x [NOT] BETWEEN lo AND hi.
func NewBetween(x, lo, hi Expr, not bool) (Expr, error) {
	for _, b := range []Expr{lo, hi} {
		if !Comparable(x.Type().Kind, b.Type().Kind) {
			return nil, fmt.Errorf("cannot compare %s and %s in BETWEEN", x.Type().Kind, b.Type().Kind)
		}
	}
	return &Between{X: x, Lo: lo, Hi: hi, Not: not}, nil
}

// Type is BOOLEAN.
func (n *Between) Type() types.Type {
	return types.Type{Kind: types.KindBoolean, NotNull: !nullable(n.X.Type(), n.Lo.Type(), n.Hi.Type())}
}

// String renders BETWEEN(x, lo, hi).
func (n *Between) String() string { return Format(n) }

// Children returns X, Lo, Hi.
func (n *Between) Children() []Expr { return []Expr{n.X, n.Lo, n.Hi} }

// WithChildren rebuilds the test.
func (n *Between) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("BETWEEN", kids, 3); err != nil {
		return nil, err
	}
	return NewBetween(kids[0], kids[1], kids[2], n.Not)
}

// Eval computes (x >= lo) AND (x <= hi) in three-valued logic, negated for NOT.
func (n *Between) Eval(row []types.Value) (types.Value, error) {
	x, err := n.X.Eval(row)
	if err != nil || x.IsNull() {
		return types.Value{}, err
	}
	lo, err := n.Lo.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	hi, err := n.Hi.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	// A side that is known FALSE decides; otherwise a NULL side gives NULL.
	if (!lo.IsNull() && types.Compare(x, lo) < 0) || (!hi.IsNull() && types.Compare(x, hi) > 0) {
		return types.BoolValue(n.Not), nil
	}
	if lo.IsNull() || hi.IsNull() {
		return types.Value{}, nil
	}
	return types.BoolValue(!n.Not), nil
}
