package expr

import (
	"fmt"
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
	k := shareKeys{ids: map[string]int{}, keys: map[Expr]int{}, counts: map[int]int{}}
	for _, e := range exprs {
		if e != nil {
			k.key(e)
		}
	}
	repeated := false
	for _, c := range k.counts {
		repeated = repeated || c > 1
	}
	if !repeated {
		return exprs, nil
	}
	memo := &RowMemo{gen: 1}
	shared := map[int]*Shared{}
	out := make([]Expr, len(exprs))
	for i, e := range exprs {
		if e == nil {
			continue
		}
		out[i] = shareRewrite(e, k.keys, k.counts, shared, memo)
	}
	return out, memo
}

// shareKeys numbers subexpressions bottom-up so that two with the same
// number compute the same: a node's number stands for its own rendering
// with each operand replaced by the operand's number, its type and its
// operands' numbers. Each node is rendered once, without its operands'
// text, so numbering takes time linear in the expressions' size (a
// rendering of every subexpression in full took quadratic time and memory
// on a long chain such as a + b + c + ...).
type shareKeys struct {
	ids    map[string]int // a node's key text to its number
	keys   map[Expr]int   // a node that may be shared to its number
	counts map[int]int    // how often each shareable number occurs
}

// key returns e's number and whether e or a subexpression is volatile.
func (k *shareKeys) key(e Expr) (id int, volatile bool) {
	if v, ok := e.(interface{ Volatile() bool }); ok && v.Volatile() {
		volatile = true
	}
	n, isNode := e.(Node)
	var kids []Expr
	if isNode {
		kids = n.Children()
	}
	var b strings.Builder
	if len(kids) == 0 {
		// A column, a literal, a call without operands: its own text.
		b.WriteString("L")
		b.WriteString(e.String())
		VisitColumns(e, func(i int) { b.WriteString("\x00$"); b.WriteString(strconv.Itoa(i)) })
	} else {
		holes := make([]Expr, len(kids))
		for i, c := range kids {
			cid, cv := k.key(c)
			volatile = volatile || cv
			holes[i] = operandHole{id: cid, t: c.Type()}
		}
		b.WriteString("N")
		if local, err := n.WithChildren(holes); err == nil {
			b.WriteString(local.String())
		} else {
			// Cannot stand in for the operands: the full rendering (slower
			// on long chains, still the same key for the same node).
			b.WriteString(e.String())
			VisitColumns(e, func(i int) { b.WriteString("\x00$"); b.WriteString(strconv.Itoa(i)) })
		}
	}
	b.WriteString("\x00")
	b.WriteString(e.Type().Name())
	text := b.String()
	id, ok := k.ids[text]
	if !ok {
		id = len(k.ids)
		k.ids[text] = id
	}
	if isNode && len(kids) > 0 && !volatile {
		k.keys[e] = id
		k.counts[id]++
	}
	return id, volatile
}

// operandHole stands in for an operand numbered id while a node is
// rendered for its key; it is never evaluated.
type operandHole struct {
	id int
	t  types.Type
}

// Type returns the operand's type.
func (h operandHole) Type() types.Type { return h.t }

// Eval fails: a hole is only rendered.
func (h operandHole) Eval([]types.Value) (types.Value, error) {
	return types.Value{}, fmt.Errorf("expr: operand placeholder #%d evaluated", h.id)
}

// String renders the operand's number, in a form no expression renders.
func (h operandHole) String() string { return "\x01#" + strconv.Itoa(h.id) + "\x01" }

// shareRewrite rebuilds e with its repeated subexpressions (by keys and
// counts) replaced by their Shared node. On a failure to rebuild a node it
// keeps the node unshared (the result is the same, only slower).
func shareRewrite(e Expr, keys map[Expr]int, counts map[int]int, shared map[int]*Shared, memo *RowMemo) Expr {
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
