package expr

import (
	"fmt"

	"github.com/weir-sql/weir/types"
)

// Case is a searched CASE WHEN c1 THEN r1 ... [ELSE e] END; results are
// coerced to their common type. (A simple CASE x WHEN v is built as
// WHEN x = v.) Without ELSE the result is NULL when no arm matches.
type Case struct {
	Conds, Results []Expr
	Else           Expr // nil if none
	t              types.Type
}

var _ Node = (*Case)(nil)

// NewCase type-checks and returns a searched CASE.
func NewCase(conds, results []Expr, els Expr) (Expr, error) {
	if len(conds) == 0 || len(conds) != len(results) {
		return nil, fmt.Errorf("CASE needs WHEN arms")
	}
	if err := checkBool("CASE WHEN", conds...); err != nil {
		return nil, err
	}
	all := append([]Expr{}, results...)
	if els != nil {
		all = append(all, els)
	}
	t := all[0].Type()
	for _, r := range all[1:] {
		c, ok := CommonType(t, r.Type())
		if !ok {
			return nil, fmt.Errorf("CASE arms have incompatible types %s and %s", t.Kind, r.Type().Kind)
		}
		t = c
	}
	if els == nil {
		t = t.Nullable()
	}
	c := &Case{Conds: conds, t: t}
	for _, r := range results {
		cr, err := Coerce(r, t)
		if err != nil {
			return nil, err
		}
		c.Results = append(c.Results, cr)
	}
	if els != nil {
		ce, err := Coerce(els, t)
		if err != nil {
			return nil, err
		}
		c.Else = ce
	}
	return c, nil
}

// Type is the arms' common type.
func (c *Case) Type() types.Type { return c.t }

// String renders CASE(c1, r1, ..., else).
func (c *Case) String() string { return Format(c) }

// Children returns c1, r1, c2, r2, ..., then ELSE if present.
func (c *Case) Children() []Expr {
	var k []Expr
	for i := range c.Conds {
		k = append(k, c.Conds[i], c.Results[i])
	}
	if c.Else != nil {
		k = append(k, c.Else)
	}
	return k
}

// WithChildren rebuilds the CASE.
func (c *Case) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("CASE", kids, len(c.Children())); err != nil {
		return nil, err
	}
	var conds, res []Expr
	for i := range c.Conds {
		conds = append(conds, kids[2*i])
		res = append(res, kids[2*i+1])
	}
	var els Expr
	if c.Else != nil {
		els = kids[len(kids)-1]
	}
	return NewCase(conds, res, els)
}

// Eval returns the result of the first arm whose condition is TRUE.
func (c *Case) Eval(row []types.Value) (types.Value, error) {
	for i, cond := range c.Conds {
		v, err := cond.Eval(row)
		if err != nil {
			return types.Value{}, err
		}
		if !v.IsNull() && v.Bool() {
			return c.Results[i].Eval(row)
		}
	}
	if c.Else != nil {
		return c.Else.Eval(row)
	}
	return types.Value{}, nil
}

// Coalesce returns its first non-NULL argument.
type Coalesce struct {
	Args []Expr
	t    types.Type
}

var _ Node = (*Coalesce)(nil)

// NewCoalesce type-checks and returns COALESCE(args...).
func NewCoalesce(args []Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("COALESCE needs arguments")
	}
	t := args[0].Type()
	for _, a := range args[1:] {
		c, ok := CommonType(t, a.Type())
		if !ok {
			return nil, fmt.Errorf("COALESCE arguments have incompatible types %s and %s", t.Kind, a.Type().Kind)
		}
		t = c
	}
	t.NotNull = false
	for _, a := range args {
		t.NotNull = t.NotNull || a.Type().NotNull
	}
	co := &Coalesce{t: t}
	for _, a := range args {
		ca, err := Coerce(a, t)
		if err != nil {
			return nil, err
		}
		co.Args = append(co.Args, ca)
	}
	return co, nil
}

// Type is the arguments' common type.
func (c *Coalesce) Type() types.Type { return c.t }

// String renders COALESCE(a, b).
func (c *Coalesce) String() string { return Format(c) }

// Children returns the arguments.
func (c *Coalesce) Children() []Expr { return c.Args }

// WithChildren rebuilds the COALESCE.
func (c *Coalesce) WithChildren(kids []Expr) (Expr, error) { return NewCoalesce(kids) }

// Eval returns the first non-NULL argument, evaluating no further.
func (c *Coalesce) Eval(row []types.Value) (types.Value, error) {
	for _, a := range c.Args {
		v, err := a.Eval(row)
		if err != nil || !v.IsNull() {
			return v, err
		}
	}
	return types.Value{}, nil
}
