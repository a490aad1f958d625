package expr

import (
	"strconv"
	"strings"

	"github.com/weir-sql/weir/types"
)

// RowMemo numbers the rows an operator evaluates its expressions on, so
// that a Shared subexpression computes once per row. The operator calls
// Next before evaluating each row. It is owned by one operator instance
// (one goroutine).
type RowMemo struct{ gen uint64 }

// Next starts a new row: every Shared of the memo evaluates again.
func (m *RowMemo) Next() { m.gen++ }

// Shared is a subexpression that occurs more than once in an operator's
// expressions (a filter and its projections): it evaluates X at most once
// per row (lazily, so a branch not taken still costs nothing) and returns
// the same result to each occurrence. Built by ShareCommon.
type Shared struct {
	X    Expr
	memo *RowMemo
	gen  uint64 // the row of v and err; memo.gen starts above it
	v    types.Value
	err  error
}

// Type returns X's type.
func (s *Shared) Type() types.Type { return s.X.Type() }

// String renders X.
func (s *Shared) String() string { return s.X.String() }

// Eval returns X's value for the memo's current row, computing it on the
// first call of the row.
func (s *Shared) Eval(row []types.Value) (types.Value, error) {
	if s.gen == s.memo.gen {
		return s.v, s.err
	}
	s.v, s.err = s.X.Eval(row)
	s.gen = s.memo.gen
	return s.v, s.err
}

// ShareCommon returns exprs with every subexpression that occurs more than
// once among them (the same rendering, type and input columns; not a bare
// column or literal, nothing volatile such as RAND inside) replaced by one
// Shared node, and the RowMemo that numbers their rows; the memo is nil
// (and exprs returned as they are) when nothing repeats. A nil entry stays
// nil. The result holds per-row state: each operator instance builds its
// own from the original expressions.
func ShareCommon(exprs []Expr) ([]Expr, *RowMemo) {
	counts := map[string]int{}
	keys := map[Expr]string{}
	var count func(e Expr)
	count = func(e Expr) {
		n, ok := e.(Node)
		if !ok {
			return // a column, a literal: nothing to save
		}
		kids := n.Children()
		for _, k := range kids {
			count(k)
		}
		if len(kids) == 0 || hasVolatile(e) {
			return
		}
		var b strings.Builder
		b.WriteString(e.String())
		b.WriteString("\x00")
		b.WriteString(e.Type().Name())
		VisitColumns(e, func(i int) { b.WriteString("\x00$"); b.WriteString(strconv.Itoa(i)) })
		key := b.String()
		keys[e] = key
		counts[key]++
	}
	for _, e := range exprs {
		if e != nil {
			count(e)
		}
	}
	repeated := false
	for _, c := range counts {
		repeated = repeated || c > 1
	}
	if !repeated {
		return exprs, nil
	}
	memo := &RowMemo{gen: 1}
	shared := map[string]*Shared{}
	out := make([]Expr, len(exprs))
	for i, e := range exprs {
		if e == nil {
			continue
		}
		out[i] = shareRewrite(e, keys, counts, shared, memo)
	}
	return out, memo
}

// shareRewrite rebuilds e with its repeated subexpressions (by keys and
// counts) replaced by their Shared node. On a failure to rebuild a node it
// keeps the node unshared (the result is the same, only slower).
func shareRewrite(e Expr, keys map[Expr]string, counts map[string]int, shared map[string]*Shared, memo *RowMemo) Expr {
	key, ok := keys[e]
	if ok && counts[key] > 1 {
		if s := shared[key]; s != nil {
			return s
		}
	}
	n, isNode := e.(Node)
	if !isNode {
		return e
	}
	kids := n.Children()
	r := e
	if len(kids) > 0 {
		nk := make([]Expr, len(kids))
		changed := false
		for i, k := range kids {
			nk[i] = shareRewrite(k, keys, counts, shared, memo)
			changed = changed || nk[i] != k
		}
		if changed {
			if rebuilt, err := n.WithChildren(nk); err == nil {
				r = rebuilt
			}
		}
	}
	if ok && counts[key] > 1 {
		s := &Shared{X: r, memo: memo}
		shared[key] = s
		return s
	}
	return r
}

// hasVolatile reports whether e or a subexpression is volatile.
func hasVolatile(e Expr) bool {
	if v, ok := e.(interface{ Volatile() bool }); ok && v.Volatile() {
		return true
	}
	if n, ok := e.(Node); ok {
		for _, k := range n.Children() {
			if hasVolatile(k) {
				return true
			}
		}
	}
	return false
}
