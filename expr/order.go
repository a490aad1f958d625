package expr

import "strings"

// CheapFirst returns e with the operands of each AND and OR ordered so that
// a cheap operand is evaluated before a costly one: AND and OR evaluate
// their right side only when the left does not decide, so in
// `REGEXP_EXTRACT(url, p) IS NOT NULL OR lower(channel) IN (…)` (Nexmark
// q21) the comparison, tested first, spares the regular expression on the
// rows it accepts. SQL leaves the order of evaluation open, and the result
// is the same either way, with two exceptions that the rule avoids: an
// operand moved first must never fail (else a row the costly operand used
// to decide could now raise an error), and no side may be volatile (RAND's
// sequence would change). A tree with nothing to reorder is returned as is.
func CheapFirst(e Expr) Expr {
	out, _ := cheapFirst(e)
	return out
}

// cheapFirst reorders e's subtrees bottom-up and returns e's evaluation cost.
func cheapFirst(e Expr) (Expr, int) {
	if s, ok := e.(*Shared); ok { // left as it is: other places read it
		_, c := cheapFirst(s.X)
		return e, c
	}
	n, ok := e.(Node)
	if !ok {
		return e, 0
	}
	kids := n.Children()
	if len(kids) == 0 {
		return e, ownCost(e)
	}
	var changed []Expr
	costs := make([]int, len(kids))
	total := ownCost(e)
	for i, k := range kids {
		nk, c := cheapFirst(k)
		costs[i] = c
		total += c
		if nk != k {
			if changed == nil {
				changed = append([]Expr(nil), kids...)
			}
			changed[i] = nk
		}
	}
	if changed != nil {
		if rebuilt, err := n.WithChildren(changed); err == nil {
			e, kids = rebuilt, changed
		} else {
			changed = nil
		}
	}
	g, isLogic := e.(*Logic)
	if !isLogic || costs[1] >= costs[0] || !cannotFail(g.R) || IsVolatile(g.L) || IsVolatile(g.R) {
		return e, total
	}
	return &Logic{Or: g.Or, L: g.R, R: g.L}, total
}

// costlyCall is the cost of a call that scans or parses its argument (a
// regular expression, a JSON document) or runs a user's Go function, next
// to 1 for each other node.
const costlyCall = 20

// ownCost is the cost of evaluating e itself, without its operands: a
// column or literal 0, a costly call costlyCall, other nodes 1.
func ownCost(e Expr) int {
	switch x := e.(type) {
	case *Column, *Literal:
		return 0
	case *Scalar:
		if strings.HasPrefix(x.Name, "REGEXP") || strings.HasPrefix(x.Name, "JSON_") {
			return costlyCall
		}
	case *UserCall:
		return costlyCall
	case *Like:
		return 3
	}
	return 1
}

// cannotFail reports whether evaluating e never returns an error: columns,
// literals, comparisons, IN, BETWEEN, IS NULL, NOT, AND, OR and a few total
// string functions, over operands that cannot fail either.
func cannotFail(e Expr) bool {
	switch x := e.(type) {
	case *Column, *Literal:
		return true
	case *Func:
		switch x.Name {
		case "LOWER", "UPPER", "CHAR_LENGTH", "CHARACTER_LENGTH":
		default:
			return false
		}
	case *Shared:
		return cannotFail(x.X)
	case *Compare, *In, *Between, *IsNull, *Not, *Logic:
	default:
		return false
	}
	for _, k := range e.(Node).Children() {
		if !cannotFail(k) {
			return false
		}
	}
	return true
}
