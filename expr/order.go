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

// facts are what cheapFirst computes of a subtree bottom-up, so that a long
// AND chain is reordered in linear time: its evaluation cost, whether it
// cannot fail, whether it is volatile.
type facts struct {
	cost     int
	safe     bool
	volatile bool
}

// cheapFirst reorders e's subtrees bottom-up and returns e's facts.
func cheapFirst(e Expr) (Expr, facts) {
	if s, ok := e.(*Shared); ok { // left as it is: other places read it
		_, f := cheapFirst(s.X)
		return e, f
	}
	f := facts{cost: ownCost(e), safe: ownSafe(e)}
	if v, ok := e.(interface{ Volatile() bool }); ok && v.Volatile() {
		f.volatile = true
	}
	n, ok := e.(Node)
	if !ok {
		return e, f
	}
	kids := n.Children()
	if len(kids) == 0 {
		return e, f
	}
	var changed []Expr
	kf := make([]facts, len(kids))
	for i, k := range kids {
		nk, c := cheapFirst(k)
		kf[i] = c
		f.cost += c.cost
		f.safe = f.safe && c.safe
		f.volatile = f.volatile || c.volatile
		if nk != k {
			if changed == nil {
				changed = append([]Expr(nil), kids...)
			}
			changed[i] = nk
		}
	}
	if changed != nil {
		if rebuilt, err := n.WithChildren(changed); err == nil {
			e = rebuilt
		}
	}
	g, isLogic := e.(*Logic)
	if !isLogic || kf[1].cost >= kf[0].cost || !kf[1].safe || kf[0].volatile || kf[1].volatile {
		return e, f
	}
	return &Logic{Or: g.Or, L: g.R, R: g.L}, f
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

// ownSafe reports whether evaluating e itself, its operands aside, never
// returns an error: columns, literals, comparisons, IN, BETWEEN, IS NULL,
// NOT, AND, OR and a few total string functions. An operand moved first
// must be safe with all its operands.
func ownSafe(e Expr) bool {
	switch x := e.(type) {
	case *Column, *Literal, *Compare, *In, *Between, *IsNull, *Not, *Logic:
		return true
	case *Func:
		switch x.Name {
		case "LOWER", "UPPER", "CHAR_LENGTH", "CHARACTER_LENGTH":
			return true
		}
	}
	return false
}
