// Package udf lets a build of Weir add scalar functions written in Go.
// A build registers each function under an identifier in a Registry and
// gives the registry to its sessions (cmd/weir does so in
// cmd/weir/functions.go); SQL binds an identifier to a name with
//
//	CREATE FUNCTION count_char AS 'count_char' [LANGUAGE GO];
//
// as Flink binds a Java class name. Functions are typed from their Go
// signature (Func1, Func2, Func3): int32 is INT, int64 BIGINT, float64
// DOUBLE, string VARCHAR, bool BOOLEAN. They are strict: a NULL argument
// gives NULL without a call. A function must be safe to call from several
// goroutines at once (each subtask calls it), and should not allocate per
// call if it is to keep up with the engine.
package udf

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// Type is the set of Go types a function's arguments and result may have.
type Type interface {
	bool | int32 | int64 | float64 | string
}

// Func is a function ready to register: its types and how to call it.
type Func = expr.UserFunc

// Func1 makes a function of one argument from a Go function.
func Func1[A, R Type](f func(A) R) *Func {
	ga, sr := getter[A](), setter[R]()
	return &Func{Args: []types.Kind{kindOf[A]()}, Result: kindOf[R](),
		Call: func(a, _, _ types.Value) (types.Value, error) { return sr(f(ga(a))), nil }}
}

// Func2 makes a function of two arguments from a Go function.
func Func2[A, B, R Type](f func(A, B) R) *Func {
	ga, gb, sr := getter[A](), getter[B](), setter[R]()
	return &Func{Args: []types.Kind{kindOf[A](), kindOf[B]()}, Result: kindOf[R](),
		Call: func(a, b, _ types.Value) (types.Value, error) { return sr(f(ga(a), gb(b))), nil }}
}

// Func3 makes a function of three arguments from a Go function.
func Func3[A, B, C, R Type](f func(A, B, C) R) *Func {
	ga, gb, gc, sr := getter[A](), getter[B](), getter[C](), setter[R]()
	return &Func{Args: []types.Kind{kindOf[A](), kindOf[B](), kindOf[C]()}, Result: kindOf[R](),
		Call: func(a, b, c types.Value) (types.Value, error) { return sr(f(ga(a), gb(b), gc(c))), nil }}
}

func kindOf[T Type]() types.Kind {
	var z T
	switch any(z).(type) {
	case bool:
		return types.KindBoolean
	case int32:
		return types.KindInt
	case int64:
		return types.KindBigInt
	case float64:
		return types.KindDouble
	default:
		return types.KindVarchar
	}
}

// getter returns the conversion of a Value of T's kind to T, chosen once
// so that a call converts without boxing.
func getter[T Type]() func(types.Value) T {
	var z T
	var g any
	switch any(z).(type) {
	case bool:
		g = func(v types.Value) bool { return v.Bool() }
	case int32:
		g = func(v types.Value) int32 { return int32(v.Int()) }
	case int64:
		g = func(v types.Value) int64 { return v.Int() }
	case float64:
		g = func(v types.Value) float64 { return v.Float() }
	default:
		g = func(v types.Value) string { return v.Str() }
	}
	return g.(func(types.Value) T)
}

// setter returns the conversion of a T to a Value of T's kind.
func setter[T Type]() func(T) types.Value {
	var z T
	var s any
	switch any(z).(type) {
	case bool:
		s = types.BoolValue
	case int32:
		s = func(x int32) types.Value { return types.IntValue(int64(x)) }
	case int64:
		s = types.BigIntValue
	case float64:
		s = types.DoubleValue
	default:
		s = types.StringValue
	}
	return s.(func(T) types.Value)
}

// Registry holds the functions of a build by identifier. It is filled
// before sessions use it and only read afterwards.
type Registry struct {
	funcs map[string]*Func
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{funcs: map[string]*Func{}} }

// Register adds f under id (any text without spaces, such as count_char or
// com.example.CountChar), with a one-line description doc. A function may
// be registered under several identifiers.
func (r *Registry) Register(id, doc string, f *Func) error {
	switch {
	case id == "" || strings.ContainsAny(id, " \t\n'"):
		return fmt.Errorf("udf: invalid identifier %q: it must be non-empty, without spaces or quotes", id)
	case f == nil || f.Call == nil:
		return fmt.Errorf("udf: %s: no function", id)
	case len(f.Args) > 3:
		return fmt.Errorf("udf: %s: %d arguments; at most 3", id, len(f.Args))
	case r.funcs[id] != nil:
		return fmt.Errorf("udf: %s is registered twice", id)
	}
	g := *f
	g.ID, g.Doc = id, doc
	r.funcs[id] = &g
	return nil
}

// MustRegister is Register for a build's fixed list: it panics on error (a
// mistake in the build, found when it starts).
func (r *Registry) MustRegister(id, doc string, f *Func) {
	if err := r.Register(id, doc, f); err != nil {
		panic(err)
	}
}

// Lookup returns the function registered under id.
func (r *Registry) Lookup(id string) (*Func, bool) {
	if r == nil {
		return nil, false
	}
	f, ok := r.funcs[id]
	return f, ok
}

// IDs returns the registered identifiers, sorted.
func (r *Registry) IDs() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.funcs))
	for id := range r.funcs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// CountChar counts the bytes of s equal to the first byte of char (0 for
// an empty char): Nexmark q14's count_char, as the reference's CountChar.
func CountChar(s, char string) int64 {
	if char == "" {
		return 0
	}
	// Count of a one-byte string counts bytes (vectorised).
	return int64(strings.Count(s, char[:1]))
}
