package session

import (
	"sort"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
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

// AllFunctions is Functions with the session's user functions (kind
// "user", the form their signature and the identifier they are bound to).
func (s *Session) AllFunctions() []Function {
	out := Functions()
	for _, u := range s.Catalog.UserFunctions() {
		form := u.Signature + " = '" + u.ID + "'"
		if u.Doc != "" {
			form += ": " + u.Doc
		}
		out = append(out, Function{Name: u.Name, Kind: "user", Forms: form})
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToUpper(out[i].Name) < strings.ToUpper(out[j].Name) })
	return out
}

// createFunction binds a function of s.Functions to a SQL name. The
// identifier must be registered in the build; LANGUAGE, if written, GO.
func (s *Session) createFunction(cf *parser.CreateFunction) error {
	if cf.Language != "" && cf.Language != "GO" {
		return parser.Errorf(cf.LangPos, "LANGUAGE %s is not supported: Weir's user functions are Go functions registered in its build (LANGUAGE GO)", cf.Language)
	}
	f, ok := s.Functions.Lookup(cf.Identifier)
	if !ok {
		ids := s.Functions.IDs()
		list := "none"
		if len(ids) > 0 {
			list = strings.Join(ids, ", ")
		}
		return parser.Errorf(cf.IDPos, "no function is registered as '%s' in this build (registered: %s); a build adds them with udf.Registry.Register (see cmd/weir/functions.go)", cf.Identifier, list)
	}
	return s.Catalog.CreateFunction(cf, f)
}
