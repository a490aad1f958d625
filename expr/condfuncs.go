package expr

import (
	"crypto/rand"
	"fmt"

	"github.com/weir-sql/weir/types"
)

// Conditional functions and UUID.

func addCondFuncs(m map[string]*scalarDef) {
	m["IF"] = &scalarDef{min: 3, max: 3, commonFrom: 2, args: []argClass{aBool, aAny}, result: resultIf, evalN: evalIf,
		doc: "IF(cond, a, b): a if cond is TRUE, else b"}
	m["NULLIF"] = &scalarDef{min: 2, max: 2, result: resultNullIf, evalN: evalNullIf,
		doc: "NULLIF(a, b): NULL if a = b, else a"}
	m["GREATEST"] = &scalarDef{min: 1, max: -1, commonFrom: 1, result: resultCommon("GREATEST"), evalN: evalExtreme(1),
		doc: "GREATEST(a, b, ...): the largest argument; NULL if any is NULL"}
	m["LEAST"] = &scalarDef{min: 1, max: -1, commonFrom: 1, result: resultCommon("LEAST"), evalN: evalExtreme(-1),
		doc: "LEAST(a, b, ...): the smallest argument; NULL if any is NULL"}
	m["UUID"] = &scalarDef{min: 0, max: 0, volatile: true, result: func([]Expr) (types.Type, error) {
		return types.Type{Kind: types.KindVarchar, NotNull: true}, nil
	}, evalN: evalUUID, doc: "UUID(): a random (version 4) UUID"}
}

// commonOf returns the type all args convert to; args start at argument
// first (from 0) of the call, for errors.
func commonOf(name string, args []Expr, first int) (types.Type, error) {
	t := args[0].Type()
	for i, a := range args[1:] {
		c, ok := CommonType(t, a.Type())
		if !ok {
			n := first + i + 1
			return types.Type{}, &ArgError{Arg: n, Err: fmt.Errorf("%s: argument %d has type %s, which does not go with %s", name, n+1, a.Type().Kind, t.Kind)}
		}
		t = c
	}
	return t, nil
}

func resultIf(args []Expr) (types.Type, error) {
	return commonOf("IF", args[1:], 1)
}

func resultNullIf(args []Expr) (types.Type, error) {
	if !Comparable(args[0].Type().Kind, args[1].Type().Kind) {
		return types.Type{}, fmt.Errorf("NULLIF: cannot compare %s with %s", args[0].Type().Kind, args[1].Type().Kind)
	}
	return args[0].Type().Nullable(), nil
}

func resultCommon(name string) func([]Expr) (types.Type, error) {
	return func(args []Expr) (types.Type, error) {
		t, err := commonOf(name, args, 0)
		if err != nil {
			return types.Type{}, err
		}
		if t.Kind == types.KindBoolean {
			return types.Type{}, fmt.Errorf("%s does not take BOOLEAN arguments", name)
		}
		return t, nil
	}
}

// convertTo converts v (of a kind that CommonType widened) to kind k.
func convertTo(v types.Value, k types.Kind) types.Value {
	if v.IsNull() || v.Kind() == k {
		return v
	}
	switch k {
	case types.KindDouble:
		if v.Kind().IsNumeric() {
			return types.DoubleValue(v.Float())
		}
	case types.KindBigInt, types.KindInt:
		if v.Kind().IsInteger() {
			return v.WithKind(k)
		}
	}
	return v
}

func evalIf(s *Scalar, row []types.Value) (types.Value, error) {
	c, err := s.Args[0].Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	arg := s.Args[2]
	if !c.IsNull() && c.Bool() {
		arg = s.Args[1]
	}
	v, err := arg.Eval(row)
	return convertTo(v, s.t.Kind), err
}

func evalNullIf(s *Scalar, row []types.Value) (types.Value, error) {
	a, err := s.Args[0].Eval(row)
	if err != nil || a.IsNull() {
		return types.Value{}, err
	}
	b, err := s.Args[1].Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	if !b.IsNull() && types.Compare(a, b) == 0 {
		return types.Value{}, nil
	}
	return a, nil
}

// evalExtreme is GREATEST (sign 1) or LEAST (sign -1).
func evalExtreme(sign int) func(*Scalar, []types.Value) (types.Value, error) {
	return func(s *Scalar, row []types.Value) (types.Value, error) {
		var best types.Value
		for i, a := range s.Args {
			v, err := a.Eval(row)
			if err != nil || v.IsNull() {
				return types.Value{}, err
			}
			if i == 0 || types.Compare(v, best)*sign > 0 {
				best = v
			}
		}
		return convertTo(best, s.t.Kind), nil
	}
}

func evalUUID(*Scalar, []types.Value) (types.Value, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return types.Value{}, fmt.Errorf("UUID: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexd = "0123456789abcdef"
	var out [36]byte
	j := 0
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexd[x>>4], hexd[x&15]
		j += 2
	}
	return types.StringValue(string(out[:])), nil
}

// IsDistinct is a IS [NOT] DISTINCT FROM b: NULL-safe (in)equality, never NULL.
type IsDistinct struct {
	A, B Expr
	Not  bool
}

var _ Node = (*IsDistinct)(nil)

// NewIsDistinct type-checks a IS [NOT] DISTINCT FROM b.
func NewIsDistinct(a, b Expr, not bool) (Expr, error) {
	if !Comparable(a.Type().Kind, b.Type().Kind) {
		return nil, fmt.Errorf("cannot compare %s with %s in IS DISTINCT FROM", a.Type().Kind, b.Type().Kind)
	}
	return &IsDistinct{A: a, B: b, Not: not}, nil
}

// Type is BOOLEAN NOT NULL.
func (d *IsDistinct) Type() types.Type { return types.Type{Kind: types.KindBoolean, NotNull: true} }

// String renders (a IS [NOT] DISTINCT FROM b).
func (d *IsDistinct) String() string {
	op := " IS DISTINCT FROM "
	if d.Not {
		op = " IS NOT DISTINCT FROM "
	}
	return "(" + Format(d.A) + op + Format(d.B) + ")"
}

// Children returns a and b.
func (d *IsDistinct) Children() []Expr { return []Expr{d.A, d.B} }

// WithChildren rebuilds the test.
func (d *IsDistinct) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("IS DISTINCT FROM", kids, 2); err != nil {
		return nil, err
	}
	return NewIsDistinct(kids[0], kids[1], d.Not)
}

// Eval compares a and b, NULL equal to NULL only.
func (d *IsDistinct) Eval(row []types.Value) (types.Value, error) {
	a, err := d.A.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	b, err := d.B.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	var same bool
	switch {
	case a.IsNull() || b.IsNull():
		same = a.IsNull() && b.IsNull()
	default:
		same = types.Compare(a, b) == 0
	}
	return types.BoolValue(same == d.Not), nil
}
