package expr

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/types"
)

// This file holds the expressions over ROW, ARRAY and MAP values: field
// access, subscripts and constructors. The planner binds a field name to
// its position, so evaluation reads the field without a name lookup.

// FieldGet is X.name: field Index of the ROW X; NULL if X is NULL.
type FieldGet struct {
	X     Expr
	Index int
	Name  string
	t     types.Type
}

var _ Node = (*FieldGet)(nil)

// NewFieldGet returns field name of the ROW x, or an error naming the
// fields if it has none of that name.
func NewFieldGet(x Expr, name string) (Expr, error) {
	xt := x.Type()
	if xt.Kind != types.KindRow {
		return nil, fmt.Errorf("cannot access field '%s' of a value of type %s (only a ROW has fields)", name, sqlName(xt))
	}
	i := xt.FieldIndex(name)
	if i < 0 {
		var names []string
		for _, f := range xt.Fields() {
			names = append(names, f.Name)
		}
		return nil, fmt.Errorf("a %s has no field '%s' (its fields: %s)", sqlName(xt), name, strings.Join(names, ", "))
	}
	return newFieldGet(x, i)
}

// NewFieldAt returns x.f for the i-th field of the ROW x (names may repeat).
func NewFieldAt(x Expr, i int) (Expr, error) {
	if x.Type().Kind != types.KindRow {
		return nil, fmt.Errorf("cannot access field %d of a value of type %s (only a ROW has fields)", i, sqlName(x.Type()))
	}
	return newFieldGet(x, i)
}

func newFieldGet(x Expr, i int) (Expr, error) {
	fs := x.Type().Fields()
	if i < 0 || i >= len(fs) {
		return nil, fmt.Errorf("field %d of %s out of range", i, x.Type().Name())
	}
	t := fs[i].Type
	if !x.Type().NotNull {
		t.NotNull = false
	}
	return &FieldGet{X: x, Index: i, Name: fs[i].Name, t: t}, nil
}

// Type is the field's type, nullable if the ROW is.
func (f *FieldGet) Type() types.Type { return f.t }

// String renders x.name.
func (f *FieldGet) String() string { return Format(f.X) + "." + f.Name }

// Children returns X.
func (f *FieldGet) Children() []Expr { return []Expr{f.X} }

// WithChildren rebuilds the access at the same position.
func (f *FieldGet) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("field access", kids, 1); err != nil {
		return nil, err
	}
	return newFieldGet(kids[0], f.Index)
}

// Eval reads the field.
func (f *FieldGet) Eval(row []types.Value) (types.Value, error) {
	v, err := f.X.Eval(row)
	if err != nil || v.IsNull() {
		return types.Value{}, err
	}
	return v.Field(f.Index), nil
}

// Subscript is X[I]: element I (1-based) of the ARRAY X, NULL when I is
// out of range (as Flink); or the value of key I in the MAP X, NULL when
// there is none.
type Subscript struct {
	X, I Expr
	t    types.Type
}

var _ Node = (*Subscript)(nil)

// NewSubscript type-checks x[i].
func NewSubscript(x, i Expr) (Expr, error) {
	xt := x.Type()
	switch xt.Kind {
	case types.KindArray:
		if k := i.Type().Kind; !k.IsInteger() && k != types.KindNull {
			return nil, fmt.Errorf("an ARRAY index must be an integer, not %s", sqlName(i.Type()))
		}
	case types.KindMap:
		if !Comparable(xt.Key().Kind, i.Type().Kind) {
			return nil, fmt.Errorf("the key of a %s is %s, not %s", sqlName(xt), sqlName(xt.Key()), sqlName(i.Type()))
		}
	default:
		return nil, fmt.Errorf("cannot subscript a value of type %s (only an ARRAY or a MAP)", sqlName(xt))
	}
	return &Subscript{X: x, I: i, t: xt.Elem().Nullable()}, nil
}

// Type is the element or value type, nullable.
func (s *Subscript) Type() types.Type { return s.t }

// String renders x[i].
func (s *Subscript) String() string { return Format(s.X) + "[" + Format(s.I) + "]" }

// Children returns X and I.
func (s *Subscript) Children() []Expr { return []Expr{s.X, s.I} }

// WithChildren rebuilds the subscript.
func (s *Subscript) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("subscript", kids, 2); err != nil {
		return nil, err
	}
	return NewSubscript(kids[0], kids[1])
}

// Eval reads the element.
func (s *Subscript) Eval(row []types.Value) (types.Value, error) {
	x, err := s.X.Eval(row)
	if err != nil || x.IsNull() {
		return types.Value{}, err
	}
	i, err := s.I.Eval(row)
	if err != nil || i.IsNull() {
		return types.Value{}, err
	}
	if x.Kind() == types.KindArray {
		n := i.Int()
		if n < 1 || n > int64(x.Len()) {
			return types.Value{}, nil
		}
		return x.Field(int(n - 1)), nil
	}
	return MapLookup(x, i), nil
}

// MapLookup returns the value of key k in the MAP m (the first entry of
// that key), or NULL.
func MapLookup(m, k types.Value) types.Value {
	var out types.Value
	found := false
	m.Elems(func(j int, e types.Value) bool {
		if found {
			out = e
			return false
		}
		if j%2 == 0 && !e.IsNull() && types.Compare(e, k) == 0 {
			found = true
		}
		return true
	})
	return out
}

// Constructor is ROW(a, …), ARRAY[a, …] or MAP[k, v, …]. A constructed
// value is allocated per row (once, at its exact size); a constant one is
// folded at planning.
type Constructor struct {
	Kind types.Kind
	Args []Expr
	t    types.Type
}

var _ Node = (*Constructor)(nil)

// NewConstructor type-checks a constructor of kind k (KindRow, KindArray,
// KindMap). ARRAY elements, MAP keys and MAP values are each converted to
// their common type; an argument that does not fit is an *ArgError.
func NewConstructor(k types.Kind, args []Expr) (Expr, error) {
	c := &Constructor{Kind: k, Args: append([]Expr(nil), args...)}
	switch k {
	case types.KindRow:
		ts := make([]types.Type, len(args))
		for i, a := range args {
			ts[i] = a.Type().Plain()
		}
		c.t = types.RowOfTypes(ts...)
	case types.KindArray, types.KindMap:
		step := 1
		if k == types.KindMap {
			step = 2
			if len(args)%2 != 0 {
				return nil, fmt.Errorf("MAP[…] takes keys and values in pairs, not %d values", len(args))
			}
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("%s[] needs at least one element", k)
		}
		var common [2]types.Type
		for off := 0; off < step; off++ {
			t := args[off].Type()
			for i := off + step; i < len(args); i += step {
				ct, ok := CommonType(t, args[i].Type())
				if !ok {
					return nil, &ArgError{Arg: i, Err: fmt.Errorf("%s[…]: element %d has type %s, which does not go with %s", k, i+1, sqlName(args[i].Type()), sqlName(t))}
				}
				t = ct
			}
			if t.Kind == types.KindNull {
				return nil, fmt.Errorf("%s[…] of NULLs alone has no type: CAST one of them", k)
			}
			t = t.Plain()
			common[off] = t
			for i := off; i < len(args); i += step {
				if types.SameShape(args[i].Type(), t) {
					continue
				}
				x, err := NewCast(args[i], t)
				if err != nil {
					return nil, &ArgError{Arg: i, Err: err}
				}
				c.Args[i] = x
			}
		}
		if k == types.KindArray {
			c.t = types.ArrayOf(common[0])
		} else {
			c.t = types.MapOf(common[0], common[1])
		}
	default:
		return nil, fmt.Errorf("no constructor for %s", k)
	}
	c.t.NotNull = true
	return c, nil
}

// Type is the constructed type, NOT NULL.
func (c *Constructor) Type() types.Type { return c.t }

// String renders ROW(a, b), ARRAY[a, b] or MAP[k, v].
func (c *Constructor) String() string {
	var b strings.Builder
	b.WriteString(c.Kind.String())
	open, closing := "[", "]"
	if c.Kind == types.KindRow {
		open, closing = "(", ")"
	}
	b.WriteString(open)
	for i, a := range c.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Format(a))
	}
	b.WriteString(closing)
	return b.String()
}

// Children returns the arguments.
func (c *Constructor) Children() []Expr { return c.Args }

// WithChildren rebuilds the constructor.
func (c *Constructor) WithChildren(kids []Expr) (Expr, error) {
	if len(kids) != len(c.Args) {
		return nil, fmt.Errorf("constructor: want %d operands, got %d", len(c.Args), len(kids))
	}
	if c.Kind == types.KindRow {
		n, err := NewConstructor(c.Kind, kids)
		if err == nil {
			// Keep the field names the planner gave the ROW.
			n.(*Constructor).t = c.t
		}
		return n, err
	}
	return NewConstructor(c.Kind, kids)
}

// WithFieldNames returns the ROW constructor with its fields named names
// (as a CAST to a named ROW type does).
func (c *Constructor) WithFieldNames(names []string) *Constructor {
	fs := append([]types.Field(nil), c.t.Fields()...)
	for i := range fs {
		if i < len(names) {
			fs[i].Name = names[i]
		}
	}
	n := *c
	n.t = types.RowOf(fs...)
	n.t.NotNull = true
	return &n
}

// maxInlineElems is how many elements Eval gathers without allocating.
const maxInlineElems = 16

// Eval builds the value.
func (c *Constructor) Eval(row []types.Value) (types.Value, error) {
	var inline [maxInlineElems]types.Value
	vals := inline[:0]
	if len(c.Args) > maxInlineElems {
		vals = make([]types.Value, 0, len(c.Args))
	}
	for _, a := range c.Args {
		v, err := a.Eval(row)
		if err != nil {
			return types.Value{}, err
		}
		vals = append(vals, v)
	}
	return types.NewComposite(c.Kind, vals...), nil
}

// castComposite converts a ROW, ARRAY or MAP value to type t element by
// element (a ROW to a ROW of as many fields, an ARRAY to an ARRAY, a MAP
// to a MAP).
func castComposite(v types.Value, from, to types.Type) (types.Value, error) {
	if types.SameShape(from, to) {
		return v.AsComposite(to.Kind), nil
	}
	var out []types.Value
	var err error
	v.Elems(func(i int, e types.Value) bool {
		var et types.Type
		switch to.Kind {
		case types.KindRow:
			et = to.Fields()[i].Type
		case types.KindArray:
			et = to.Elem()
		default:
			et = to.Key()
			if i%2 == 1 {
				et = to.Elem()
			}
		}
		if !e.IsNull() {
			if e.Kind() == types.KindRow || e.Kind() == types.KindArray || e.Kind() == types.KindMap {
				e, err = castComposite(e, elemType(from, i), et)
			} else {
				e, err = CastTo(e, et, nil)
			}
			if err != nil {
				return false
			}
		}
		out = append(out, e)
		return true
	})
	if err != nil {
		return types.Value{}, err
	}
	return types.NewComposite(to.Kind, out...), nil
}

// elemType returns the type of element i of a value of composite type t.
func elemType(t types.Type, i int) types.Type {
	switch t.Kind {
	case types.KindRow:
		if fs := t.Fields(); i < len(fs) {
			return fs[i].Type
		}
	case types.KindArray:
		return t.Elem()
	case types.KindMap:
		if i%2 == 0 {
			return t.Key()
		}
		return t.Elem()
	}
	return types.Type{}
}

// castableComposite reports whether CAST(from AS to) is supported between
// composite types: the same kind, a ROW of as many fields, each element
// castable.
func castableComposite(from, to types.Type) error {
	if from.Kind != to.Kind {
		return fmt.Errorf("cannot cast %s to %s", sqlName(from), sqlName(to))
	}
	ff, tf := from.Comp, to.Comp
	if ff == nil || tf == nil || len(ff.Fields) != len(tf.Fields) {
		return fmt.Errorf("cannot cast %s to %s: not as many fields", sqlName(from), sqlName(to))
	}
	for i := range ff.Fields {
		a, b := ff.Fields[i].Type, tf.Fields[i].Type
		if a.Comp != nil || b.Comp != nil {
			if err := castableComposite(a, b); err != nil {
				return err
			}
			continue
		}
		if _, err := NewCast(&Literal{T: a}, b); err != nil {
			return fmt.Errorf("cannot cast %s to %s: %w", sqlName(from), sqlName(to), err)
		}
	}
	return nil
}

// isComposite reports whether k is ROW, ARRAY or MAP.
func isComposite(k types.Kind) bool {
	return k == types.KindRow || k == types.KindArray || k == types.KindMap
}

// commonComposite returns the composite type both a and b convert to:
// the same kind and number of elements, each element the common type of
// the two (a's field names).
func commonComposite(a, b types.Type) (types.Type, bool) {
	if a.Kind != b.Kind || a.Comp == nil || b.Comp == nil || len(a.Comp.Fields) != len(b.Comp.Fields) {
		return types.Type{}, false
	}
	fs := make([]types.Field, len(a.Comp.Fields))
	for i := range fs {
		t, ok := CommonType(a.Comp.Fields[i].Type, b.Comp.Fields[i].Type)
		if !ok {
			return types.Type{}, false
		}
		fs[i] = types.Field{Name: a.Comp.Fields[i].Name, Type: t.Plain()}
	}
	return types.Type{Kind: a.Kind, NotNull: a.NotNull && b.NotNull, Comp: &types.Composite{Fields: fs}}, true
}

// sqlName renders t for messages as DDL writes it: STRING, ROW<`a` INT>.
func sqlName(t types.Type) string { return t.Nullable().Plain().SQL() }
