package planner

import (
	"sort"
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
)

// This file holds the user functions of the catalog: Go functions of the
// build (package udf) bound to SQL names by CREATE FUNCTION.

// userFunc is a function bound by CREATE FUNCTION.
type userFunc struct {
	name string
	def  *parser.CreateFunction
	f    *expr.UserFunc
}

// UserFunction describes a bound user function for SHOW FUNCTIONS.
type UserFunction struct {
	Name      string // as created
	ID        string // the identifier it is bound to
	Signature string // name(ARG, …) -> RESULT
	Doc       string
}

// IsBuiltinFunction reports whether name (any case) is a function Weir
// has: a scalar, time or aggregate function.
func IsBuiltinFunction(name string) bool {
	n := strings.ToUpper(name)
	return expr.IsFunction(n) || expr.IsTimeFunction(n) || aggfunc.Builtins().Has(n)
}

// CreateFunction binds f, the function registered under cf.Identifier, to
// the name cf.Name. A name of a built-in function, or one already bound
// (without IF NOT EXISTS), is an error at the statement.
func (c *Catalog) CreateFunction(cf *parser.CreateFunction, f *expr.UserFunc) error {
	if IsBuiltinFunction(cf.Name) {
		return parser.Errorf(cf.Pos, "%s is a built-in function; choose another name for the user function", strings.ToUpper(cf.Name))
	}
	k := key(cf.Name)
	if _, ok := c.functions[k]; ok {
		if cf.IfNotExists {
			return nil
		}
		return parser.Errorf(cf.Pos, "function '%s' already exists (DROP FUNCTION %s first)", cf.Name, cf.Name)
	}
	if c.functions == nil {
		c.functions = map[string]*userFunc{}
	}
	c.functions[k] = &userFunc{name: cf.Name, def: cf, f: f}
	return nil
}

// DropFunction removes a user function.
func (c *Catalog) DropFunction(d *parser.DropFunction) error {
	k := key(d.Name)
	if _, ok := c.functions[k]; ok {
		delete(c.functions, k)
		return nil
	}
	if d.IfExists {
		return nil
	}
	if IsBuiltinFunction(d.Name) {
		return parser.Errorf(d.Pos, "%s is a built-in function; only user functions (CREATE FUNCTION) can be dropped", strings.ToUpper(d.Name))
	}
	names := make([]string, 0, len(c.functions))
	for _, u := range c.functions {
		names = append(names, u.name)
	}
	sort.Strings(names)
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return parser.Errorf(d.Pos, "unknown function '%s' (user functions: %s)", d.Name, list)
}

// Function returns the user function bound to name (any case) and its
// name as created. A nil catalog has none.
func (c *Catalog) Function(name string) (*expr.UserFunc, string, bool) {
	if c == nil {
		return nil, "", false
	}
	u, ok := c.functions[key(name)]
	if !ok {
		return nil, "", false
	}
	return u.f, u.name, true
}

// UserFunctions lists the user functions by name.
func (c *Catalog) UserFunctions() []UserFunction {
	out := make([]UserFunction, 0, len(c.functions))
	for _, u := range c.functions {
		out = append(out, UserFunction{Name: u.name, ID: u.f.ID, Signature: u.f.Signature(u.name), Doc: u.f.Doc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// bindUserCall binds a call of a user function; a wrong argument is an
// error at that argument.
func (b *exprBinder) bindUserCall(n *parser.Call, name string, f *expr.UserFunc) (expr.Expr, error) {
	if n.Filter != nil {
		return nil, parser.Errorf(startPos(n.Filter), "FILTER (WHERE ...) is only valid on an aggregate function, not on %s", name)
	}
	args, err := b.bindAll(n.Args)
	if err != nil {
		return nil, err
	}
	x, err := expr.NewUserCall(name, f, args)
	if ae, ok := err.(*expr.ArgError); ok && ae.Arg < len(n.Args) {
		return nil, parser.Errorf(startPos(n.Args[ae.Arg]), "%s", err.Error())
	}
	if err != nil {
		return nil, parser.Errorf(n.Pos, "%s", err.Error())
	}
	return x, nil
}
