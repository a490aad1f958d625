package expr

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/types"
)

// UserFunc is a scalar function written outside Weir's function table, in
// Go, and bound to a SQL name by CREATE FUNCTION (package udf builds and
// registers them). It takes up to three arguments of fixed types and is
// strict: a NULL argument gives NULL without calling it.
type UserFunc struct {
	// ID is the identifier the function is registered under.
	ID string
	// Args are the argument types, in order (at most three).
	Args []types.Kind
	// Result is the result type.
	Result types.Kind
	// Call computes the result from the arguments (the missing ones are
	// NULL). An error fails the job.
	Call func(a, b, c types.Value) (types.Value, error)
	// Volatile: the result may differ between calls with the same
	// arguments, so a call with constant arguments is never folded.
	Volatile bool
	// Doc is a one-line description for SHOW FUNCTIONS.
	Doc string
}

// Signature renders the function's call form, NAME(BIGINT, VARCHAR) →
// BIGINT, for SHOW FUNCTIONS and errors.
func (f *UserFunc) Signature(name string) string {
	parts := make([]string, len(f.Args))
	for i, k := range f.Args {
		parts[i] = k.SQL()
	}
	return fmt.Sprintf("%s(%s) -> %s", name, strings.Join(parts, ", "), f.Result.SQL())
}

// UserCall is a call of a UserFunc.
type UserCall struct {
	Name string
	Args []Expr
	f    *UserFunc
	t    types.Type
}

var _ Node = (*UserCall)(nil)

// NewUserCall type-checks a call of f under the SQL name name. Each
// argument must be of the declared type, or an integer type for BIGINT, a
// number for DOUBLE (cast to it), or NULL; an *ArgError names the argument
// that is not.
func NewUserCall(name string, f *UserFunc, args []Expr) (*UserCall, error) {
	if len(args) != len(f.Args) {
		return nil, fmt.Errorf("%s takes %d argument(s), got %d: %s", name, len(f.Args), len(args), f.Signature(name))
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		want, got := f.Args[i], a.Type().Kind
		switch {
		case got == want:
			out[i] = a
		case got == types.KindNull,
			want == types.KindBigInt && got.IsInteger(),
			want == types.KindInt && (got == types.KindTinyInt || got == types.KindSmallInt),
			want == types.KindDouble && got.IsNumeric():
			c, err := NewCast(a, types.Type{Kind: want, NotNull: a.Type().NotNull})
			if err != nil {
				return nil, &ArgError{Arg: i, Err: fmt.Errorf("%s: argument %d: %w", name, i+1, err)}
			}
			out[i] = c
		default:
			return nil, &ArgError{Arg: i, Err: fmt.Errorf("%s: argument %d has type %s, want %s (%s)", name, i+1, got.SQL(), want.SQL(), f.Signature(name))}
		}
	}
	return &UserCall{Name: name, Args: out, f: f, t: types.Type{Kind: f.Result, NotNull: !nullable(argTypes(out)...)}}, nil
}

// Type returns the result type: NOT NULL when no argument may be NULL.
func (u *UserCall) Type() types.Type { return u.t }

// String renders name(args).
func (u *UserCall) String() string {
	var b strings.Builder
	writeCall(&b, u.Name, u.Args...)
	return b.String()
}

// Children returns the arguments.
func (u *UserCall) Children() []Expr { return u.Args }

// WithChildren rebuilds the call.
func (u *UserCall) WithChildren(kids []Expr) (Expr, error) { return NewUserCall(u.Name, u.f, kids) }

// Volatile reports whether the function is volatile (never folded).
func (u *UserCall) Volatile() bool { return u.f.Volatile }

// Eval evaluates the arguments and calls the function; NULL if any
// argument is NULL. A panic in the function is returned as an error.
func (u *UserCall) Eval(row []types.Value) (v types.Value, err error) {
	var a [3]types.Value
	for i, x := range u.Args {
		a[i], err = x.Eval(row)
		if err != nil || a[i].IsNull() {
			return types.Value{}, err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = types.Value{}, fmt.Errorf("user function %s (%s) panicked: %v", u.Name, u.f.ID, r)
		}
	}()
	v, err = u.f.Call(a[0], a[1], a[2])
	if err != nil {
		return types.Value{}, fmt.Errorf("user function %s: %w", u.Name, err)
	}
	return v, nil
}
