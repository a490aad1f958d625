// Package aggfunc is the registry of aggregate functions: each one is
// described once, with its SQL name, the typing rule of its argument and
// result, whether it is correct on updating input (consumes -U and -D),
// and the Kind of runtime accumulator that computes it. The planner binds
// aggregate calls through a Registry and keeps the resulting Calls in its
// plans; the runtime (exec.NewAccumulator) builds accumulators from them.
//
// Adding an aggregate: a Kind (new values at the end: Kinds are part of
// operator ids), a Func in Builtins, and its accumulator in exec/aggs.go.
package aggfunc

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/types"
)

// Kind identifies the runtime accumulator of an aggregate. Its values are
// stable: they are hashed into operator ids (so into checkpoints), so new
// kinds go at the end and none is renumbered.
type Kind int

// The aggregate kinds.
const (
	CountStar  Kind = iota // COUNT(*): counts rows
	Count                  // COUNT(x): counts non-NULL x
	Sum                    // SUM(x): NULL if no non-NULL x
	Avg                    // AVG(x): NULL if no non-NULL x; integer input gives integer result (as Flink)
	Min                    // MIN(x), correct under retraction
	Max                    // MAX(x), correct under retraction
	VarPop                 // VAR_POP(x): population variance
	VarSamp                // VAR_SAMP(x): sample variance; NULL for fewer than two values
	StddevPop              // STDDEV_POP(x): population standard deviation
	StddevSamp             // STDDEV_SAMP(x): sample standard deviation
	FirstValue             // FIRST_VALUE(x): the earliest non-NULL value still present
	LastValue              // LAST_VALUE(x): the latest non-NULL value still present
	ListAgg                // LISTAGG(x [, sep]): the non-NULL values joined in arrival order
	BoolAnd                // BOOL_AND(x): TRUE if every non-NULL x is TRUE
	BoolOr                 // BOOL_OR(x): TRUE if some x is TRUE
)

// ArgClass is what a function's argument may be.
type ArgClass int

// The argument classes.
const (
	AnyArg     ArgClass = iota // any type
	NumericArg                 // INT, BIGINT, DOUBLE (or NULL)
	NoArg                      // called as NAME(*)
	StringArg                  // VARCHAR (or NULL)
	BooleanArg                 // BOOLEAN (or NULL)
)

// Result says how a function's result type follows from its argument's.
type Result int

// The result rules.
const (
	BigIntNotNull Result = iota // BIGINT NOT NULL, whatever the argument
	ArgNullable                 // the argument's type, nullable (no rows, or only NULLs, give NULL)
)

// Func describes one aggregate function (one form of it: COUNT(*) and
// COUNT(x) are two). Funcs are immutable.
type Func struct {
	// Name is the SQL name, upper case.
	Name string
	// Kind is the runtime accumulator.
	Kind Kind
	// Arg is what the argument may be.
	Arg ArgClass
	// Result is the result type rule.
	Result Result
	// Distinct reports whether NAME(DISTINCT x) is allowed.
	Distinct bool
	// Retracts reports whether the function is correct on updating input:
	// its accumulator takes retracted values (-U, -D) back out.
	Retracts bool
	// Doc is a one-line description, for SHOW FUNCTIONS.
	Doc string
}

// Signature renders the call form, e.g. "COUNT(*)", "SUM(numeric)".
func (f *Func) Signature() string {
	switch f.Arg {
	case NoArg:
		return f.Name + "(*)"
	case NumericArg:
		return f.Name + "(numeric)"
	case StringArg:
		if f.Kind == ListAgg {
			return f.Name + "(string [, separator])"
		}
		return f.Name + "(string)"
	case BooleanArg:
		return f.Name + "(boolean)"
	}
	return f.Name + "(x)"
}

// ResultType returns the result type of f over an argument of type arg
// (ignored for NoArg), or an error saying why arg does not fit.
func (f *Func) ResultType(arg types.Type) (types.Type, error) {
	if f.Arg == NumericArg && !arg.Kind.IsNumeric() && arg.Kind != types.KindNull {
		return types.Type{}, fmt.Errorf("%s needs a numeric argument, not %s", f.Name, arg.Kind)
	}
	if f.Arg == StringArg && arg.Kind != types.KindVarchar && arg.Kind != types.KindNull {
		return types.Type{}, fmt.Errorf("%s needs a VARCHAR argument, not %s", f.Name, arg.Kind)
	}
	if f.Arg == BooleanArg && arg.Kind != types.KindBoolean && arg.Kind != types.KindNull {
		return types.Type{}, fmt.Errorf("%s needs a BOOLEAN argument, not %s", f.Name, arg.Kind)
	}
	switch f.Result {
	case BigIntNotNull:
		return types.Type{Kind: types.KindBigInt, NotNull: true}, nil
	case ArgNullable:
		if arg.Kind == types.KindDecimal && (f.Kind == Sum || f.Kind == Avg) {
			// As Flink: SUM of DECIMAL(p, s) is DECIMAL(38, s), AVG is
			// DECIMAL(38, max(s, 6)).
			if f.Kind == Sum {
				return types.Decimal(types.MaxDecimalPrecision, int(arg.S)), nil
			}
			return types.Decimal(types.MaxDecimalPrecision, max(int(arg.S), 6)), nil
		}
		if arg.Kind == types.KindNull {
			// Flink refuses an untyped NULL here too: the result would
			// have no type.
			return types.Type{}, fmt.Errorf("%s of an untyped NULL has no result type; give it one, e.g. %s(CAST(NULL AS BIGINT))", f.Name, f.Name)
		}
		return arg.Nullable(), nil
	}
	return types.Type{}, fmt.Errorf("%s: unknown result rule %d", f.Name, f.Result)
}

// Call is one bound aggregate call: what a plan holds and the runtime
// builds an accumulator for.
type Call struct {
	Func     *Func
	Distinct bool       // NAME(DISTINCT x)
	Arg      int        // input column; -1 for NAME(*)
	ArgType  types.Type // type of the input column
	Type     types.Type // result type
	Name     string     // for EXPLAIN, e.g. "SUM(v)"
	Sep      string     // LISTAGG's separator
	// DistinctArg identifies, for a DISTINCT call, the expression x whose
	// value its argument is on every row where it is not NULL (x itself,
	// or CASE WHEN cond THEN x END for NAME(DISTINCT x) FILTER (WHERE
	// cond)): DISTINCT calls with the same DistinctArg may share one set
	// of values per group, with a count per call. Empty: the call shares
	// only with calls of the same argument column.
	DistinctArg string
}

// Registry is a set of aggregate functions by name. It is immutable once
// built.
type Registry struct {
	funcs  []*Func
	byName map[string][]*Func
}

// New builds a registry of funcs. Two forms of one name must differ in
// whether they take an argument.
func New(funcs ...*Func) (*Registry, error) {
	r := &Registry{byName: map[string][]*Func{}}
	for _, f := range funcs {
		if f.Name == "" || f.Name != strings.ToUpper(f.Name) {
			return nil, fmt.Errorf("aggregate function name %q: want a non-empty upper-case name", f.Name)
		}
		for _, g := range r.byName[f.Name] {
			if (g.Arg == NoArg) == (f.Arg == NoArg) {
				return nil, fmt.Errorf("aggregate function %s registered twice", f.Signature())
			}
		}
		r.byName[f.Name] = append(r.byName[f.Name], f)
		r.funcs = append(r.funcs, f)
	}
	return r, nil
}

// builtins is the registry of Weir's aggregate functions (immutable).
var builtins = func() *Registry {
	r, err := New(
		&Func{Name: "COUNT", Kind: CountStar, Arg: NoArg, Result: BigIntNotNull, Retracts: true, Doc: "number of rows"},
		&Func{Name: "COUNT", Kind: Count, Arg: AnyArg, Result: BigIntNotNull, Distinct: true, Retracts: true, Doc: "number of non-NULL values"},
		&Func{Name: "SUM", Kind: Sum, Arg: NumericArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "sum of the non-NULL values, in the argument's type"},
		&Func{Name: "AVG", Kind: Avg, Arg: NumericArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "average of the non-NULL values, in the argument's type (integer division for integers)"},
		&Func{Name: "MIN", Kind: Min, Arg: AnyArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "smallest non-NULL value"},
		&Func{Name: "MAX", Kind: Max, Arg: AnyArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "largest non-NULL value"},
		&Func{Name: "VAR_POP", Kind: VarPop, Arg: NumericArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "population variance of the non-NULL values, in the argument's type"},
		&Func{Name: "VAR_SAMP", Kind: VarSamp, Arg: NumericArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "sample variance of the non-NULL values (NULL for fewer than two), in the argument's type"},
		&Func{Name: "STDDEV_POP", Kind: StddevPop, Arg: NumericArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "population standard deviation of the non-NULL values, in the argument's type"},
		&Func{Name: "STDDEV_SAMP", Kind: StddevSamp, Arg: NumericArg, Result: ArgNullable, Distinct: true, Retracts: true, Doc: "sample standard deviation of the non-NULL values (NULL for fewer than two), in the argument's type"},
		&Func{Name: "FIRST_VALUE", Kind: FirstValue, Arg: AnyArg, Result: ArgNullable, Retracts: true, Doc: "the earliest non-NULL value still present (a retraction removes the value's earliest occurrence)"},
		&Func{Name: "LAST_VALUE", Kind: LastValue, Arg: AnyArg, Result: ArgNullable, Retracts: true, Doc: "the latest non-NULL value still present (a retraction removes the value's earliest occurrence)"},
		&Func{Name: "LISTAGG", Kind: ListAgg, Arg: StringArg, Result: ArgNullable, Retracts: true, Doc: "the non-NULL values joined by the separator (default ','), in arrival order"},
		&Func{Name: "BOOL_AND", Kind: BoolAnd, Arg: BooleanArg, Result: ArgNullable, Retracts: true, Doc: "TRUE if every non-NULL value is TRUE; NULL if there is none"},
		&Func{Name: "BOOL_OR", Kind: BoolOr, Arg: BooleanArg, Result: ArgNullable, Retracts: true, Doc: "TRUE if some value is TRUE; NULL if there is no non-NULL value"},
	)
	if err != nil {
		panic(err) // a bad table above: caught by every test
	}
	return r
}()

// Builtins returns the registry of Weir's aggregate functions.
func Builtins() *Registry { return builtins }

// Funcs returns every function, in registration order.
func (r *Registry) Funcs() []*Func { return slices.Clone(r.funcs) }

// Has reports whether name (upper case) is an aggregate function.
func (r *Registry) Has(name string) bool { return len(r.byName[name]) > 0 }

// Names returns the function names, sorted, each once.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the form of function name (upper case) called with
// (star) or without a '*'. An unknown name is an error that lists the
// closest names; a known name without that form says which forms exist.
func (r *Registry) Lookup(name string, star bool) (*Func, error) {
	forms := r.byName[name]
	if len(forms) == 0 {
		msg := "unknown aggregate function " + name
		if near := r.Closest(name); len(near) > 0 {
			return nil, fmt.Errorf("%s (closest: %s)", msg, strings.Join(near, ", "))
		}
		return nil, fmt.Errorf("%s (aggregate functions: %s)", msg, strings.Join(r.Names(), ", "))
	}
	for _, f := range forms {
		if (f.Arg == NoArg) == star {
			return f, nil
		}
	}
	if star {
		var with []string
		for _, f := range r.funcs {
			if f.Arg == NoArg {
				with = append(with, f.Signature())
			}
		}
		return nil, fmt.Errorf("%s(*) is not supported; only %s", name, strings.Join(with, ", "))
	}
	return nil, fmt.Errorf("%s takes no argument: write %s(*)", name, name)
}

// maxClosest bounds how many names Closest returns.
const maxClosest = 3

// Closest returns up to three function names close to name (upper case),
// closest first: within a third of name's length in edits (at least one,
// two from four letters on), or containing it or contained in it.
func (r *Registry) Closest(name string) []string {
	type near struct {
		name string
		dist int
	}
	limit := 1
	if len(name) >= 4 {
		limit = max(2, len(name)/3)
	}
	var found []near
	for _, n := range r.Names() {
		d := confval.EditDistance(name, n)
		contains := min(len(name), len(n)) >= 3 && (strings.Contains(n, name) || strings.Contains(name, n))
		if d <= limit || contains {
			found = append(found, near{n, d})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	var out []string
	for i := 0; i < len(found) && i < maxClosest; i++ {
		out = append(out, found[i].name)
	}
	return out
}
