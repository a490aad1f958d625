// Package expr holds compiled scalar expressions: typed trees that the planner
// builds from the AST and operators evaluate against rows.
package expr

import "github.com/weir-sql/weir/types"

// Expr is a compiled, typed scalar expression over the columns of one input row.
type Expr interface {
	// Type is the expression's result type.
	Type() types.Type
	// Eval computes the expression for row. It does not retain row. An
	// error is a runtime failure that must fail the job (for example an
	// integer division by zero or a CAST of 'abc' to INT), never a panic.
	Eval(row []types.Value) (types.Value, error)
	// String renders the expression for EXPLAIN, with input columns as
	// their names where known (or $i).
	String() string
}
