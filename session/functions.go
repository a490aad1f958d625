package session

import (
	"sort"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
)

// Function is one row of SHOW FUNCTIONS.
type Function struct {
	Name string
	Kind string // "aggregate" or "scalar"
	// Forms lists an aggregate's call forms ("COUNT(*), COUNT(x)") or a
	// scalar function's ("LPAD(s, n, pad)"; empty for the older ones).
	Forms string
}

// Functions lists the functions a query can call, sorted by name: the
// aggregates of the registry and the scalar functions of package expr.
func Functions() []Function {
	var out []Function
	reg := aggfunc.Builtins()
	for _, n := range reg.Names() {
		var forms []string
		for _, f := range reg.Funcs() {
			if f.Name != n {
				continue
			}
			sig := f.Signature()
			forms = append(forms, sig)
			if f.Distinct {
				forms = append(forms, strings.Replace(sig, "(", "(DISTINCT ", 1))
			}
		}
		out = append(out, Function{Name: n, Kind: "aggregate", Forms: strings.Join(forms, ", ")})
	}
	for _, n := range append(expr.FunctionNames(), expr.TimeFunctionNames()...) {
		form, _, _ := strings.Cut(expr.ScalarDoc(n), ": ")
		out = append(out, Function{Name: n, Kind: "scalar", Forms: form})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
