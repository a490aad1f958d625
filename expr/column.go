package expr

import (
	"strconv"
	"strings"

	"github.com/weir-sql/weir/types"
)

// Column reads column Index of the input row.
type Column struct {
	Index int
	T     types.Type
	Name  string // for EXPLAIN; "" prints $Index
}

var _ Node = (*Column)(nil)

// NewColumn returns a reference to input column index of type t.
func NewColumn(index int, t types.Type, name string) *Column {
	return &Column{Index: index, T: t, Name: name}
}

// Type returns the column's type.
func (c *Column) Type() types.Type { return c.T }

// Eval returns the column's value.
func (c *Column) Eval(row []types.Value) (types.Value, error) { return row[c.Index], nil }

// String returns the column's name, or $i.
func (c *Column) String() string {
	if c.Name != "" {
		return c.Name
	}
	return "$" + strconv.Itoa(c.Index)
}

// Children returns nil: a column is a leaf.
func (c *Column) Children() []Expr { return nil }

// WithChildren returns c.
func (c *Column) WithChildren(kids []Expr) (Expr, error) { return c, checkArity("column", kids, 0) }

// Literal is a constant.
type Literal struct {
	V    types.Value
	T    types.Type
	Text string // rendering for EXPLAIN; "" renders V
}

var _ Node = (*Literal)(nil)

// NewLiteral returns a constant v of type t. A NULL of type t is NewLiteral(types.NullValue(), t).
func NewLiteral(v types.Value, t types.Type) *Literal {
	if !v.IsNull() {
		t.NotNull = true
	}
	return &Literal{V: v, T: t}
}

// Type returns the literal's type.
func (l *Literal) Type() types.Type { return l.T }

// Eval returns the constant.
func (l *Literal) Eval([]types.Value) (types.Value, error) { return l.V, nil }

// String renders the constant as SQL.
func (l *Literal) String() string {
	if l.Text != "" {
		return l.Text
	}
	switch l.V.Kind() {
	case types.KindNull:
		return "NULL"
	case types.KindVarchar:
		return "'" + strings.ReplaceAll(l.V.Str(), "'", "''") + "'"
	case types.KindBoolean:
		if l.V.Bool() {
			return "TRUE"
		}
		return "FALSE"
	case types.KindTimestamp:
		return "TIMESTAMP '" + l.V.String() + "'"
	case types.KindInterval:
		return "INTERVAL '" + strconv.FormatInt(l.V.Int(), 10) + "' MILLISECOND"
	}
	return l.V.String()
}

// Children returns nil: a literal is a leaf.
func (l *Literal) Children() []Expr { return nil }

// WithChildren returns l.
func (l *Literal) WithChildren(kids []Expr) (Expr, error) { return l, checkArity("literal", kids, 0) }
