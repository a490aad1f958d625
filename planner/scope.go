package planner

import (
	"strings"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// rel is a bound relation: a plan and the qualifier its columns go by.
type rel struct {
	node Node
	qual string // table name or alias; "" for none
}

// scope resolves column references against one relation.
type scope struct {
	rel    rel
	schema types.Schema
}

func newScope(r rel) *scope { return &scope{rel: r, schema: r.node.Schema()} }

func (s *scope) names() string {
	if len(s.schema.Columns) == 0 {
		return "none"
	}
	return strings.Join(s.schema.Names(), ", ")
}

// resolve binds a column reference to a column of the scope.
func (s *scope) resolve(ref *parser.ColumnRef) (expr.Expr, error) {
	if ref.Table != "" && !strings.EqualFold(ref.Table, s.rel.qual) {
		q := s.rel.qual
		if q == "" {
			q = "none"
		}
		return nil, parser.Errorf(ref.Pos, "unknown table '%s' in '%s.%s' (tables in scope: %s)", ref.Table, ref.Table, ref.Name, q)
	}
	found := -1
	for i, c := range s.schema.Columns {
		if strings.EqualFold(c.Name, ref.Name) {
			if found >= 0 {
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
