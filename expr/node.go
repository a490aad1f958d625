package expr

import (
	"fmt"

	"github.com/weir-sql/weir/types"
)

// Node is implemented by every expression of this package. It exposes the
// tree so that the planner can rewrite expressions (substitute columns,
// fold constants). WithChildren rebuilds the node with new children of the
// same arity; it re-checks types and fails if they no longer fit.
type Node interface {
	Expr
	// Children returns the node's operands, in order (not a copy to modify).
	Children() []Expr
	// WithChildren returns a copy of the node with kids as its operands.
	WithChildren(kids []Expr) (Expr, error)
}

// Transform rebuilds e bottom-up, replacing every node n by f(n) after its
// children have been transformed.
func Transform(e Expr, f func(Expr) (Expr, error)) (Expr, error) {
	if n, ok := e.(Node); ok {
		kids := n.Children()
		if len(kids) > 0 {
			changed := false
			nk := make([]Expr, len(kids))
			for i, k := range kids {
				t, err := Transform(k, f)
				if err != nil {
					return nil, err
				}
				nk[i] = t
				changed = changed || t != k
			}
			if changed {
				r, err := n.WithChildren(nk)
				if err != nil {
					return nil, err
				}
				e = r
			}
		}
	}
	return f(e)
}

// Substitute replaces every column reference $i in e by cols[i]. It is how
// two stacked projections are merged into one.
func Substitute(e Expr, cols []Expr) (Expr, error) {
	return Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*Column); ok {
			if c.Index < 0 || c.Index >= len(cols) {
				return nil, fmt.Errorf("column $%d out of range (%d columns)", c.Index, len(cols))
			}
			return cols[c.Index], nil
		}
		return x, nil
	})
}

// VisitColumns calls f with the index of every column reference in e.
func VisitColumns(e Expr, f func(index int)) {
	if c, ok := e.(*Column); ok {
		f(c.Index)
		return
	}
	if n, ok := e.(Node); ok {
		for _, k := range n.Children() {
			VisitColumns(k, f)
		}
	}
}

// IsVolatile reports whether e or a subexpression (through Shared nodes)
// is volatile (RAND, UUID, a volatile user function): two evaluations on
// one row may differ.
func IsVolatile(e Expr) bool {
	if s, ok := e.(*Shared); ok {
		return IsVolatile(s.X)
	}
	if v, ok := e.(interface{ Volatile() bool }); ok && v.Volatile() {
		return true
	}
	if n, ok := e.(Node); ok {
		for _, k := range n.Children() {
			if IsVolatile(k) {
				return true
			}
		}
	}
	return false
}

// IsConstant reports whether e references no input column.
func IsConstant(e Expr) bool {
	constant := true
	VisitColumns(e, func(int) { constant = false })
	return constant
}

// Fold evaluates e once if all its direct operands are literals and returns
// the result as a literal; otherwise (or if evaluation fails, which is left
// to fail at run time) it returns e unchanged. Applied while building a tree
// bottom-up it folds every constant subtree.
func Fold(e Expr) Expr {
	n, ok := e.(Node)
	if !ok || len(n.Children()) == 0 {
		return e
	}
	if v, ok := e.(interface{ Volatile() bool }); ok && v.Volatile() {
		return e
	}
	for _, k := range n.Children() {
		if _, lit := k.(*Literal); !lit {
			return e
		}
	}
	v, err := e.Eval(nil)
	if err != nil {
		return e
	}
	return NewLiteral(v, e.Type())
}

// FoldAll folds every constant subtree of e (see Fold).
func FoldAll(e Expr) Expr {
	r, err := Transform(e, func(x Expr) (Expr, error) { return Fold(x), nil })
	if err != nil {
		return e
	}
	return r
}

func nullable(ts ...types.Type) bool {
	for _, t := range ts {
		if !t.NotNull {
			return true
		}
	}
	return false
}

func checkArity(name string, kids []Expr, n int) error {
	if len(kids) != n {
		return fmt.Errorf("%s: want %d operands, got %d", name, n, len(kids))
	}
	return nil
}
