package planner

import (
	"strings"

	"github.com/weir-sql/weir/parser"
)

// sqlText renders an AST expression as SQL, for error messages, default
// column names and SHOW CREATE TABLE.
func sqlText(e parser.Expr) string {
	var b strings.Builder
	writeSQL(&b, e)
	return b.String()
}

func writeSQL(b *strings.Builder, e parser.Expr) {
	switch n := e.(type) {
	case *parser.ColumnRef:
		if n.Table != "" {
			b.WriteString(n.Table + ".")
		}
		b.WriteString(n.Name)
	case *parser.NumberLit:
		b.WriteString(n.Text)
	case *parser.StringLit:
		b.WriteString("'" + strings.ReplaceAll(n.Value, "'", "''") + "'")
	case *parser.BoolLit:
		if n.Value {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case *parser.NullLit:
		b.WriteString("NULL")
	case *parser.IntervalLit:
		b.WriteString("INTERVAL '" + n.Value + "' " + n.Unit)
	case *parser.TimestampLit:
		if n.Type != "" {
			b.WriteString(n.Type + " '" + n.Value + "'")
		} else {
			b.WriteString("TIMESTAMP '" + n.Value + "'")
		}
	case *parser.Binary:
		writeSQL(b, n.L)
		b.WriteString(" " + n.Op + " ")
		writeSQL(b, n.R)
	case *parser.Unary:
		b.WriteString(n.Op)
		if n.Op == "NOT" {
			b.WriteByte(' ')
		}
		writeSQL(b, n.X)
	case *parser.IsNull:
		writeSQL(b, n.X)
		if n.Not {
			b.WriteString(" IS NOT NULL")
		} else {
			b.WriteString(" IS NULL")
		}
	case *parser.In:
		writeSQL(b, n.X)
		if n.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		if n.Query != nil {
			b.WriteString(parser.Format(n.Query))
		}
		for i, x := range n.List {
			if i > 0 {
				b.WriteString(", ")
			}
			writeSQL(b, x)
		}
		b.WriteByte(')')
	case *parser.Between:
		writeSQL(b, n.X)
		if n.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		writeSQL(b, n.Lo)
		b.WriteString(" AND ")
		writeSQL(b, n.Hi)
	case *parser.Like:
		writeSQL(b, n.X)
		if n.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" LIKE ")
		writeSQL(b, n.Pattern)
	case *parser.Case:
		b.WriteString("CASE")
		if n.Operand != nil {
			b.WriteByte(' ')
			writeSQL(b, n.Operand)
		}
		for _, w := range n.Whens {
			b.WriteString(" WHEN ")
			writeSQL(b, w.Cond)
			b.WriteString(" THEN ")
			writeSQL(b, w.Result)
		}
		if n.Else != nil {
			b.WriteString(" ELSE ")
			writeSQL(b, n.Else)
		}
		b.WriteString(" END")
	case *parser.Cast:
		if n.Try {
			b.WriteString("TRY_")
		}
		b.WriteString("CAST(")
		writeSQL(b, n.X)
		b.WriteString(" AS " + typeNameText(n.Type) + ")")
	case *parser.Call:
		b.WriteString(n.Name + "(")
		if n.Distinct {
			b.WriteString("DISTINCT ")
		}
		if n.Star {
			b.WriteByte('*')
		}
		sep := ", "
		switch {
		case n.Name == "EXTRACT" && len(n.Args) == 2:
			sep = " FROM "
		case (n.Name == "FLOOR" || n.Name == "CEIL") && len(n.Args) == 2:
			sep = " TO "
		case n.Name == "POSITION" && len(n.Args) == 2:
			sep = " IN "
		}
		for i, x := range n.Args {
			if i > 0 {
				b.WriteString(sep)
			}
			writeSQL(b, x)
		}
		b.WriteByte(')')
		if n.Filter != nil {
			b.WriteString(" FILTER (WHERE ")
			writeSQL(b, n.Filter)
			b.WriteByte(')')
		}
	case *parser.Exists:
		b.WriteString("EXISTS (" + parser.Format(n.Query) + ")")
	case *parser.FieldAccess:
		writeSQL(b, n.X)
		b.WriteString("." + n.Field)
	case *parser.Subscript:
		writeSQL(b, n.X)
		b.WriteByte('[')
		writeSQL(b, n.Index)
		b.WriteByte(']')
	case *parser.Constructor:
		open, closing := "[", "]"
		if n.Kind == "ROW" {
			open, closing = "(", ")"
		}
		b.WriteString(n.Kind + open)
		for i, x := range n.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeSQL(b, x)
		}
		b.WriteString(closing)
	default:
		b.WriteString("?")
	}
}

func typeNameText(t *parser.TypeName) string {
	if t == nil {
		return "?"
	}
	if t.Fields != nil {
		return parser.TypeText(t)
	}
	s := t.Name
	if len(t.Params) > 0 {
		parts := make([]string, len(t.Params))
		for i, p := range t.Params {
			parts[i] = itoa(p)
		}
		s += "(" + strings.Join(parts, ", ") + ")"
	}
	return s
}
