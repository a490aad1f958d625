package expr

import "strings"

// Format renders e as its String method does, in time and memory linear in
// the size of the tree. Every composite node's String calls it: were each
// node to concatenate the strings of its children, a long chain such as
// a + b + c + … would copy the text of each subtree once per level, which
// is quadratic in the length of the chain.
func Format(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// writeExpr appends the text of e to b. Leaves (columns, literals, and
// expressions of other packages) render through their String method.
func writeExpr(b *strings.Builder, e Expr) {
	switch n := e.(type) {
	case *Arith:
		writeCall(b, n.Op, n.L, n.R)
	case *Compare:
		writeCall(b, n.Op, n.L, n.R)
	case *Logic:
		writeCall(b, n.name(), n.L, n.R)
	case *Neg:
		writeCall(b, "-", n.X)
	case *Not:
		writeCall(b, "NOT", n.X)
	case *IsNull:
		if n.Not {
			writeCall(b, "IS NOT NULL", n.X)
		} else {
			writeCall(b, "IS NULL", n.X)
		}
	case *In:
		if n.Not {
			b.WriteString("NOT ")
		}
		b.WriteString("IN(")
		writeExpr(b, n.X)
		writeArgs(b, n.List, true)
	case *Between:
		if n.Not {
			writeCall(b, "NOT BETWEEN", n.X, n.Lo, n.Hi)
		} else {
			writeCall(b, "BETWEEN", n.X, n.Lo, n.Hi)
		}
	case *Like:
		if n.Not {
			writeCall(b, "NOT LIKE", n.X, n.Pattern)
		} else {
			writeCall(b, "LIKE", n.X, n.Pattern)
		}
	case *Cast:
		if n.Try {
			b.WriteString("TRY_")
		}
		b.WriteString("CAST(")
		writeExpr(b, n.X)
		b.WriteString(" AS ")
		b.WriteString(n.T.Name())
		b.WriteByte(')')
	case *Case:
		b.WriteString("CASE(")
		for i := range n.Conds {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, n.Conds[i])
			b.WriteString(", ")
			writeExpr(b, n.Results[i])
		}
		if n.Else != nil {
			b.WriteString(", ")
			writeExpr(b, n.Else)
		}
		b.WriteByte(')')
	case *Coalesce:
		b.WriteString("COALESCE(")
		writeArgs(b, n.Args, false)
	case *Func:
		if n.Name == "||" {
			b.WriteString("CONCAT(")
		} else {
			b.WriteString(n.Name)
			b.WriteByte('(')
		}
		writeArgs(b, n.Args, false)
	default:
		b.WriteString(e.String())
	}
}

// writeCall appends name(args...).
func writeCall(b *strings.Builder, name string, args ...Expr) {
	b.WriteString(name)
	b.WriteByte('(')
	writeArgs(b, args, false)
}

// writeArgs appends args separated by ", " and the closing parenthesis;
// more says that something was written after the opening one already.
func writeArgs(b *strings.Builder, args []Expr, more bool) {
	for i, a := range args {
		if i > 0 || more {
			b.WriteString(", ")
		}
		writeExpr(b, a)
	}
	b.WriteByte(')')
}
