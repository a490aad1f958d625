package expr

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weir-sql/weir/types"
)

// This file is the table of the scalar functions defined in strfuncs.go,
// mathfuncs.go, jsonfuncs.go and condfuncs.go: each is a scalarDef (arity,
// argument kinds, result type, evaluation), compiled into a *Scalar node
// by NewCall.

// argClass is what one argument of a scalar function may be.
type argClass uint8

const (
	aAny  argClass = iota // any type
	aStr                  // VARCHAR
	aNum                  // INT, BIGINT, DOUBLE
	aInt                  // INT, BIGINT
	aBool                 // BOOLEAN
)

func (c argClass) accepts(k types.Kind) bool {
	if k == types.KindNull {
		return true
	}
	switch c {
	case aStr:
		return k == types.KindVarchar
	case aNum:
		return k.IsNumeric()
	case aInt:
		return k.IsInteger()
	case aBool:
		return k == types.KindBoolean
	}
	return true
}

func (c argClass) String() string {
	return [...]string{"any", "VARCHAR", "a number", "an integer", "BOOLEAN"}[c]
}

// scalarDef describes one scalar function.
type scalarDef struct {
	// min and max bound the number of arguments; max < 0: no bound.
	min, max int
	// args are the argument classes by position; the last one repeats.
	args []argClass
	// result returns the result type (its nullability is added by
	// NewCall for strict functions). nil: VARCHAR.
	result func(args []Expr) (types.Type, error)
	// eval3 evaluates a strict function of at most three arguments:
	// called only when none is NULL, with the missing ones NULL.
	eval3 func(s *Scalar, a, b, c types.Value) (types.Value, error)
	// eval1, optional, is eval3 for a call whose arguments after the
	// first are literals (not NULL), read from s.consts: SPLIT_INDEX(url,
	// '/', 3) passes one value instead of three.
	eval1 func(s *Scalar, a types.Value) (types.Value, error)
	// evalN evaluates the function itself (non-strict or variadic).
	evalN func(s *Scalar, row []types.Value) (types.Value, error)
	// prepare checks and precompiles constant arguments (a regular
	// expression), once when the call is built.
	prepare func(s *Scalar) error
	// nullable: the result may be NULL although no argument is.
	nullable bool
	// volatile: the result may differ between calls with the same
	// arguments (RAND, UUID); never folded into a constant.
	volatile bool
	// doc is a one-line description for SHOW FUNCTIONS.
	doc string
	// commonFrom > 0: the arguments from commonFrom-1 on are of the
	// result's type (IF, GREATEST, LEAST), cast to it where they differ.
	commonFrom int
}

func typeOf(k types.Kind) func([]Expr) (types.Type, error) {
	return func([]Expr) (types.Type, error) { return types.Type{Kind: k}, nil }
}

// firstArgType is a result rule: the first argument's type.
func firstArgType(args []Expr) (types.Type, error) { return args[0].Type().Nullable(), nil }

// scalarDefs returns the table of the functions defined in this package's
// scalar files, by upper-case name. It is built on each call (callers
// keep what they need), so that there is no package state.
func scalarDefs() map[string]*scalarDef {
	m := map[string]*scalarDef{}
	addStringFuncs(m)
	addMathFuncs(m)
	addJSONFuncs(m)
	addCondFuncs(m)
	addCompositeFuncs(m)
	return m
}

// defs is the table used by NewCall, IsFunction and FunctionNames; it is
// never modified after initialisation.
var defs = scalarDefs()

// ScalarDoc returns the one-line description of scalar function name, or "".
func ScalarDoc(name string) string {
	if d := defs[name]; d != nil {
		return d.doc
	}
	return ""
}

// Scalar is a call of a scalar function of the table above.
type Scalar struct {
	Name string
	Args []Expr
	def  *scalarDef
	t    types.Type
	// state precompiled by prepare (a regular expression, a JSON path),
	// read-only once built.
	state any
	// consts holds the values of the literal arguments of an eval3
	// function (a pattern, a separator, an index), so that Eval evaluates
	// only the others: the bits of varying.
	consts  [3]types.Value
	varying uint8
	first   bool // only the first argument varies and def.eval1 is set
}

var _ Node = (*Scalar)(nil)

// newScalar type-checks a call of def.
func newScalar(name string, def *scalarDef, args []Expr) (*Scalar, error) {
	if len(args) < def.min || def.max >= 0 && len(args) > def.max {
		switch {
		case def.min == def.max:
			return nil, fmt.Errorf("%s takes %d argument(s), got %d", name, def.min, len(args))
		case def.max < 0:
			return nil, fmt.Errorf("%s takes at least %d argument(s), got %d", name, def.min, len(args))
		}
		return nil, fmt.Errorf("%s takes %d to %d arguments, got %d", name, def.min, def.max, len(args))
	}
	for i, a := range args {
		c := aAny
		if len(def.args) > 0 {
			c = def.args[min(i, len(def.args)-1)]
		}
		if k := a.Type().Kind; !c.accepts(k) {
			return nil, &ArgError{Arg: i, Err: fmt.Errorf("%s: argument %d has type %s, want %s", name, i+1, k, c)}
		}
	}
	args = numericArgs(def, args)
	s := &Scalar{Name: name, Args: args, def: def}
	t := types.Type{Kind: types.KindVarchar}
	if def.result != nil {
		var err error
		if t, err = def.result(args); err != nil {
			return nil, err
		}
	}
	if def.eval3 != nil {
		t.NotNull = !def.nullable && !nullable(argTypes(args)...)
	}
	if def.commonFrom > 0 {
		for i := def.commonFrom - 1; i < len(args); i++ {
			at := args[i].Type()
			if at.Kind == types.KindNull || at.Kind == t.Kind && (t.Kind != types.KindDecimal || at.S == t.S) {
				continue
			}
			c, err := NewCast(args[i], t.Nullable())
			if err != nil {
				return nil, &ArgError{Arg: i, Err: fmt.Errorf("%s: %w", name, err)}
			}
			args[i] = c
		}
	}
	s.t = t
	if def.eval3 != nil { // at most three arguments
		for i, a := range args {
			if l, ok := a.(*Literal); ok && !l.V.IsNull() {
				s.consts[i] = l.V
			} else {
				s.varying |= 1 << i
			}
		}
	}
	s.first = s.varying == 1 && def.eval1 != nil
	if def.prepare != nil {
		if err := def.prepare(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Type returns the result type.
func (s *Scalar) Type() types.Type { return s.t }

// String renders NAME(args).
func (s *Scalar) String() string {
	var b strings.Builder
	writeCall(&b, s.Name, s.Args...)
	return b.String()
}

// Children returns the arguments.
func (s *Scalar) Children() []Expr { return s.Args }

// WithChildren rebuilds the call.
func (s *Scalar) WithChildren(kids []Expr) (Expr, error) { return newScalar(s.Name, s.def, kids) }

// Volatile reports whether the call may give different results for the
// same arguments (RAND, UUID), so that it must not be folded.
func (s *Scalar) Volatile() bool { return s.def.volatile }

// Eval calls the function.
func (s *Scalar) Eval(row []types.Value) (types.Value, error) {
	if s.first {
		a, err := s.Args[0].Eval(row)
		if err != nil || a.IsNull() {
			return types.Value{}, err
		}
		return s.def.eval1(s, a)
	}
	if s.def.evalN != nil {
		return s.def.evalN(s, row)
	}
	v := s.consts
	for i, a := range s.Args {
		if s.varying&(1<<i) == 0 {
			continue
		}
		x, err := a.Eval(row)
		if err != nil || x.IsNull() {
			return types.Value{}, err
		}
		v[i] = x
	}
	return s.def.eval3(s, v[0], v[1], v[2])
}

// constArg returns the value of argument i if it is a literal.
func (s *Scalar) constArg(i int) (types.Value, bool) {
	if i >= len(s.Args) {
		return types.Value{}, false
	}
	l, ok := s.Args[i].(*Literal)
	if !ok {
		return types.Value{}, false
	}
	return l.V, true
}

// scalarNames returns the names of the table's functions.
func scalarNames() []string {
	out := make([]string, 0, len(defs))
	for n := range defs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// numericArgs casts the arguments of numeric class (aNum) that the math
// functions do not compute on directly: DECIMAL and FLOAT become DOUBLE,
// TINYINT and SMALLINT become INT. It returns a new slice when it casts.
func numericArgs(def *scalarDef, args []Expr) []Expr {
	out := args
	for i, a := range args {
		if len(def.args) == 0 || def.args[min(i, len(def.args)-1)] != aNum {
			continue
		}
		var to types.Kind
		switch a.Type().Kind {
		case types.KindDecimal, types.KindFloat:
			to = types.KindDouble
		case types.KindTinyInt, types.KindSmallInt:
			to = types.KindInt
		default:
			continue
		}
		c, err := NewCast(a, types.Type{Kind: to, NotNull: a.Type().NotNull})
		if err != nil {
			continue // every numeric kind casts to these; keep the argument
		}
		if &out[0] == &args[0] {
			out = append([]Expr(nil), args...)
		}
		out[i] = c
	}
	return out
}
