package expr

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

type fn uint8

const (
	fnUpper fn = iota
	fnLower
	fnCharLength
	fnSubstring
	fnConcat
	fnAbs
	fnMod
	fnFloor
	fnCeil
)

var fnNames = map[string]fn{
	"UPPER": fnUpper, "LOWER": fnLower, "CHAR_LENGTH": fnCharLength, "CHARACTER_LENGTH": fnCharLength,
	"SUBSTRING": fnSubstring, "SUBSTR": fnSubstring, "CONCAT": fnConcat, "||": fnConcat,
	"ABS": fnAbs, "MOD": fnMod,
	"FLOOR": fnFloor, "CEIL": fnCeil, "CEILING": fnCeil,
}

// IsFunction reports whether name (upper case) is a scalar function NewCall knows.
func IsFunction(name string) bool {
	_, ok := fnNames[name]
	return ok || name == "COALESCE" || defs[name] != nil
}

// FunctionNames returns the names of the scalar functions NewCall knows
// (COALESCE included), sorted.
func FunctionNames() []string {
	out := []string{"COALESCE"}
	for n := range fnNames {
		if n != "||" {
			out = append(out, n)
		}
	}
	out = append(out, scalarNames()...)
	sort.Strings(out)
	return out
}

// Func is a built-in scalar function. All are strict: NULL if any argument is NULL.
//
//	UPPER(s), LOWER(s)                              VARCHAR
//	CHAR_LENGTH(s)                                   INT, counting characters (runes)
//	SUBSTRING(s, start [, len])                      VARCHAR, 1-based as in SQL
//	CONCAT(a, b, ...) and a || b                      VARCHAR; non-strings are converted to text
//	ABS(n), FLOOR(n), CEIL(n)                         the argument's type
//	MOD(a, b)                                         as a % b
type Func struct {
	Name string
	Args []Expr
	f    fn
	t    types.Type
	mod  Expr // MOD's Arith
}

var _ Node = (*Func)(nil)

// NewCall type-checks and returns the call of a built-in function (name upper case).
func NewCall(name string, args []Expr) (Expr, error) {
	if name == "COALESCE" {
		return NewCoalesce(args)
	}
	if d := defs[name]; d != nil {
		return newScalar(name, d, args)
	}
	f, ok := fnNames[name]
	if !ok {
		return nil, fmt.Errorf("unknown function %s", name)
	}
	c := &Func{Name: name, Args: args, f: f}
	nn := !nullable(argTypes(args)...)
	want := func(n int, kinds ...types.Kind) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d argument(s), got %d", name, n, len(args))
		}
		for i, a := range args {
			k := a.Type().Kind
			if k == types.KindNull {
				continue
			}
			okk := false
			for _, w := range kinds {
				okk = okk || k == w || (w == types.KindDouble && k.IsNumeric()) || (w == types.KindBigInt && k.IsInteger())
			}
			if !okk {
				return fmt.Errorf("%s: argument %d has type %s, want %s", name, i+1, k, kinds[0])
			}
		}
		return nil
	}
	var err error
	switch f {
	case fnUpper, fnLower:
		err = want(1, types.KindVarchar)
		c.t = types.Type{Kind: types.KindVarchar, NotNull: nn}
	case fnCharLength:
		err = want(1, types.KindVarchar)
		c.t = types.Type{Kind: types.KindInt, NotNull: nn}
	case fnSubstring:
		if len(args) == 2 {
			err = want(2, types.KindVarchar, types.KindBigInt)
		} else {
			err = want(3, types.KindVarchar, types.KindBigInt)
		}
		if err == nil && args[0].Type().Kind != types.KindVarchar && args[0].Type().Kind != types.KindNull {
			err = fmt.Errorf("SUBSTRING: argument 1 has type %s, want VARCHAR", args[0].Type().Kind)
		}
		for _, a := range args[1:] {
			if k := a.Type().Kind; err == nil && k != types.KindNull && !k.IsInteger() {
				err = fmt.Errorf("SUBSTRING: position and length must be integers, got %s", k)
			}
		}
		c.t = types.Type{Kind: types.KindVarchar, NotNull: nn}
	case fnConcat:
		if len(args) < 1 {
			err = fmt.Errorf("CONCAT needs arguments")
		}
		c.t = types.Type{Kind: types.KindVarchar, NotNull: nn}
	case fnAbs, fnFloor, fnCeil:
		err = want(1, types.KindDouble)
		if err == nil {
			c.t = args[0].Type()
		}
	case fnMod:
		if len(args) != 2 {
			return nil, fmt.Errorf("MOD takes 2 arguments, got %d", len(args))
		}
		m, err := NewArith("%", args[0], args[1])
		if err != nil {
			return nil, fmt.Errorf("MOD: %w", err)
		}
		c.mod, c.t = m, m.Type()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

func argTypes(args []Expr) []types.Type {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return ts
}

// Type returns the result type.
func (c *Func) Type() types.Type { return c.t }

// String renders NAME(args).
func (c *Func) String() string { return Format(c) }

// Children returns the arguments.
func (c *Func) Children() []Expr { return c.Args }

// WithChildren rebuilds the call.
func (c *Func) WithChildren(kids []Expr) (Expr, error) { return NewCall(c.Name, kids) }

// Eval calls the function.
func (c *Func) Eval(row []types.Value) (types.Value, error) {
	if c.f == fnMod {
		return c.mod.Eval(row)
	}
	if c.f == fnConcat {
		return c.concat(row)
	}
	v, err := c.Args[0].Eval(row)
	if err != nil || v.IsNull() {
		return types.Value{}, err
	}
	switch c.f {
	case fnUpper:
		return types.StringValue(strings.ToUpper(v.Str())), nil
	case fnLower:
		return types.StringValue(strings.ToLower(v.Str())), nil
	case fnCharLength:
		return types.IntValue(int64(utf8.RuneCountInString(v.Str()))), nil
	case fnSubstring:
		return c.substring(v, row)
	case fnAbs:
		switch v.Kind() {
		case types.KindDouble:
			return types.DoubleValue(math.Abs(v.Float())), nil
		case types.KindInt:
			return types.IntValue(int64(absInt32(int32(v.Int())))), nil
		case types.KindFloat:
			return types.FloatValue(math.Abs(v.Float())), nil
		case types.KindDecimal:
			if types.Compare(v, types.DecimalValue(0, 0)) < 0 {
				return negDecimal(v)
			}
			return v, nil
		case types.KindTinyInt, types.KindSmallInt:
			if v.Int() < 0 {
				return types.BigIntValue(-v.Int()).WithKind(v.Kind()), nil
			}
			return v, nil
		}
		if v.Int() < 0 {
			return types.BigIntValue(-v.Int()), nil
		}
		return v, nil
	case fnFloor, fnCeil:
		switch v.Kind() {
		case types.KindFloat:
			if c.f == fnFloor {
				return types.FloatValue(math.Floor(v.Float())), nil
			}
			return types.FloatValue(math.Ceil(v.Float())), nil
		case types.KindDecimal:
			// Rounded to a whole number, kept at the type's scale.
			return decimalFloorCeil(v, c.f == fnCeil)
		}
		if v.Kind() != types.KindDouble {
			return v, nil
		}
		if c.f == fnFloor {
			return types.DoubleValue(math.Floor(v.Float())), nil
		}
		return types.DoubleValue(math.Ceil(v.Float())), nil
	}
	panic("expr: unhandled function " + c.Name)
}

func absInt32(n int32) int32 {
	if n < 0 {
		return -n
	}
	return n
}

// substring implements SQL's SUBSTRING(s FROM start [FOR len]) on
// characters: positions are 1-based, the result covers positions
// [start, start+len) intersected with the string; a negative length is an error.
func (c *Func) substring(v types.Value, row []types.Value) (types.Value, error) {
	sv, err := c.Args[1].Eval(row)
	if err != nil || sv.IsNull() {
		return types.Value{}, err
	}
	start := sv.Int()
	end := int64(math.MaxInt64)
	if len(c.Args) == 3 {
		lv, err := c.Args[2].Eval(row)
		if err != nil || lv.IsNull() {
			return types.Value{}, err
		}
		if lv.Int() < 0 {
			return types.Value{}, fmt.Errorf("SUBSTRING: negative length %d", lv.Int())
		}
		if start <= 0 || lv.Int() < math.MaxInt64-start {
			end = start + lv.Int()
		}
	}
	s := v.Str()
	if end <= max(start, 1) {
		return types.StringValue(""), nil
	}
	from, to := -1, len(s)
	pos := int64(1)
	for i := range s { // i: byte offset of the character at position pos
		if pos == max(start, 1) && from < 0 {
			from = i
		}
		if pos == end {
			to = i
			break
		}
		pos++
	}
	if from < 0 || from >= to {
		return types.StringValue(""), nil
	}
	return types.StringValue(s[from:to]), nil
}

func (c *Func) concat(row []types.Value) (types.Value, error) {
	var buf []byte
	for _, a := range c.Args {
		v, err := a.Eval(row)
		if err != nil || v.IsNull() {
			return types.Value{}, err
		}
		if v.Kind() == types.KindVarchar {
			buf = append(buf, v.Str()...)
		} else {
			buf = append(buf, castToString(v)...)
		}
	}
	return types.StringValue(string(buf)), nil
}
