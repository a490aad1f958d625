package planner

import (
	"testing"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
)

// TestUnsupportedFunctionsAreUnknown checks that the parser's list of
// Flink functions Weir lacks holds none that Weir has: a function added to
// expr or to the aggregates must leave that list.
func TestUnsupportedFunctionsAreUnknown(t *testing.T) {
	for _, name := range parser.UnsupportedFunctionNames() {
		if expr.IsFunction(name) || aggfunc.Builtins().Has(name) {
			t.Errorf("%s is listed as not supported yet (parser/unsupported.go) but Weir has it", name)
		}
	}
	for _, name := range knownFunctions() {
		if _, ok := parser.UnsupportedFunction(name, false); ok {
			t.Errorf("known function %s is reported as not supported", name)
		}
	}
}
