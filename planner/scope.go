package planner

import (
	"strings"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// rel is a bound relation: a plan and the qualifier its columns go by. A
// join's rel has parts instead: the qualifier of each joined relation and
// the range of its columns.
type rel struct {
	node  Node
	qual  string // table name or alias; "" for none
	parts []relPart
}

// relPart is the columns [start, start+n) of a join that come from the
// relation named qual.
type relPart struct {
	qual     string
	start, n int
}

// relParts returns r's parts (one covering all columns for a single
// relation).
func (r rel) relParts() []relPart {
	if r.parts != nil {
		return r.parts
	}
	return []relPart{{qual: r.qual, n: r.node.Schema().Len()}}
}

// scope resolves column references against one relation (or a join of
// several).
type scope struct {
	rel    rel
	parts  []relPart
	schema types.Schema
	// outer, for a correlated subquery, resolves the names this scope
	// lacks; this scope's columns are then numbered from off (after the
	// outer query's).
	outer *scope
	off   int
}

func newScope(r rel) *scope { return &scope{rel: r, parts: r.relParts(), schema: r.node.Schema()} }

// quals lists the qualifiers in scope, for errors.
func (s *scope) quals() string {
	var qs []string
	for _, p := range s.parts {
		if p.qual != "" {
			qs = append(qs, p.qual)
		}
	}
	if len(qs) == 0 {
		return "none"
	}
	return strings.Join(qs, ", ")
}

// qualOf returns the qualifier of column i ("" if none).
func (s *scope) qualOf(i int) string {
	for _, p := range s.parts {
		if i >= p.start && i < p.start+p.n {
			return p.qual
		}
	}
	return ""
}

// part returns the part named q, or nil.
func (s *scope) part(q string) *relPart {
	for i := range s.parts {
		if strings.EqualFold(s.parts[i].qual, q) {
			return &s.parts[i]
		}
	}
	return nil
}

func (s *scope) names() string {
	if len(s.schema.Columns) == 0 {
		return "none"
	}
	return strings.Join(s.schema.Names(), ", ")
}

// resolve binds a column reference to a column of the scope, or of the
// outer query's scope when this one has no such column.
func (s *scope) resolve(ref *parser.ColumnRef) (expr.Expr, error) {
	if s.outer == nil {
		return s.resolveHere(ref)
	}
	inner := &scope{rel: s.rel, parts: s.parts, schema: s.schema}
	e, err := inner.resolveHere(ref)
	if err == nil {
		return shiftColumns(e, 0, s.off)
	}
	if pe, ok := err.(*parser.Error); ok && strings.Contains(pe.Msg, "ambiguous") {
		return nil, err
	}
	o, oerr := s.outer.resolve(ref)
	if oerr == nil {
		return o, nil
	}
	if ref.Table != "" && inner.part(ref.Table) == nil && s.outer.part(ref.Table) != nil {
		return nil, oerr // the outer query's table, without that column
	}
	return nil, err
}

// resolveHere binds a column reference to a column of this scope only.
func (s *scope) resolveHere(ref *parser.ColumnRef) (expr.Expr, error) {
	lo, hi := 0, len(s.schema.Columns)
	if ref.Table != "" {
		p := s.part(ref.Table)
		if p == nil {
			return nil, parser.Errorf(ref.Pos, "unknown table '%s' in '%s.%s' (tables in scope: %s)", ref.Table, ref.Table, ref.Name, s.quals())
		}
		lo, hi = p.start, p.start+p.n
	}
	found := -1
	for i := lo; i < hi; i++ {
		if c := s.schema.Columns[i]; strings.EqualFold(c.Name, ref.Name) {
			if found >= 0 {
				if q1, q2 := s.qualOf(found), s.qualOf(i); q1 != "" && q2 != "" && q1 != q2 {
					return nil, parser.Errorf(ref.Pos, "column '%s' is ambiguous: write %s.%s or %s.%s", ref.Name, q1, ref.Name, q2, ref.Name)
				}
				return nil, parser.Errorf(ref.Pos, "column '%s' is ambiguous", ref.Name)
			}
			found = i
		}
	}
	if found < 0 {
		return nil, parser.Errorf(ref.Pos, "unknown column '%s' (columns in scope: %s)", ref.Name, s.names())
	}
	c := s.schema.Columns[found]
	return expr.NewColumn(found, c.Type, c.Name), nil
}

// digest renders e with columns as $i, so that two expressions that compute
// the same thing compare equal whatever their columns are named.
func digest(e expr.Expr) string {
	d, err := expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok {
			return expr.NewColumn(c.Index, c.T, ""), nil
		}
		return x, nil
	})
	if err != nil {
		return e.String()
	}
	return d.String()
}
