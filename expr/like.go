package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

// Matcher is a compiled LIKE pattern: '%' matches any sequence of
// characters, '_' exactly one character (rune); everything else matches
// itself. There is no escape character.
type Matcher struct {
	// segs are the pieces between '%'s; anchoredStart/End say whether the
	// pattern does not begin/end with '%'.
	segs                       []string
	anchoredStart, anchoredEnd bool
}

// CompileLike compiles a LIKE pattern once so that matching a row costs no
// allocation and no regular expression.
func CompileLike(pattern string) *Matcher {
	parts := strings.Split(pattern, "%")
	m := &Matcher{anchoredStart: true, anchoredEnd: true}
	m.anchoredStart = !strings.HasPrefix(pattern, "%")
	m.anchoredEnd = !strings.HasSuffix(pattern, "%")
	for _, p := range parts {
		if p != "" {
			m.segs = append(m.segs, p)
		}
	}
	if len(parts) == 1 { // no '%': one segment anchored at both ends
		m.segs = []string{pattern}
	}
	return m
}

// matchAt reports whether seg matches s at its start, returning the byte length consumed.
func matchAt(s, seg string) (int, bool) {
	i := 0
	for _, pr := range seg {
		if i >= len(s) {
			return 0, false
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if pr != '_' && pr != r {
			return 0, false
		}
		i += w
	}
	return i, true
}

// find returns the first position at or after 0 where seg matches s, and the end of the match.
func find(s, seg string) (start, end int, ok bool) {
	if !strings.ContainsRune(seg, '_') {
		i := strings.Index(s, seg)
		if i < 0 {
			return 0, 0, false
		}
		return i, i + len(seg), true
	}
	for i := 0; i <= len(s); {
		if n, ok := matchAt(s[i:], seg); ok {
			return i, i + n, true
		}
		if i == len(s) {
			break
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return 0, 0, false
}

// Match reports whether s matches the pattern.
func (m *Matcher) Match(s string) bool {
	segs := m.segs
	if len(segs) == 0 { // pattern of only '%' (or empty)
		return !m.anchoredStart || s == ""
	}
	if m.anchoredStart && m.anchoredEnd && len(segs) == 1 {
		n, ok := matchAt(s, segs[0])
		return ok && n == len(s)
	}
	if m.anchoredStart {
		n, ok := matchAt(s, segs[0])
		if !ok {
			return false
		}
		s = s[n:]
		segs = segs[1:]
	}
	var last string
	if m.anchoredEnd {
		last = segs[len(segs)-1]
		segs = segs[:len(segs)-1]
	}
	for _, seg := range segs {
		_, end, ok := find(s, seg)
		if !ok {
			return false
		}
		s = s[end:]
	}
	if !m.anchoredEnd {
		return true
	}
	// The last segment must match a suffix of s: try the rune positions
	// whose remaining length can hold it.
	for i := 0; i <= len(s); {
		if n, ok := matchAt(s[i:], last); ok && i+n == len(s) {
			return true
		}
		if i == len(s) {
			break
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return false
}

// Like is X [NOT] LIKE Pattern. A constant pattern is compiled once; a
// pattern computed per row is compiled per row.
type Like struct {
	X, Pattern Expr
	Not        bool
	m          *Matcher // nil unless Pattern is a non-NULL literal
}

var _ Node = (*Like)(nil)

// NewLike type-checks and returns x [NOT] LIKE pattern.
func NewLike(x, pattern Expr, not bool) (Expr, error) {
	for _, e := range []Expr{x, pattern} {
		if k := e.Type().Kind; k != types.KindVarchar && k != types.KindNull {
			return nil, fmt.Errorf("LIKE needs VARCHAR operands, got %s", k)
		}
	}
	l := &Like{X: x, Pattern: pattern, Not: not}
	if lit, ok := pattern.(*Literal); ok && !lit.V.IsNull() {
		l.m = CompileLike(lit.V.Str())
	}
	return l, nil
}

// Type is BOOLEAN.
func (l *Like) Type() types.Type {
	return types.Type{Kind: types.KindBoolean, NotNull: !nullable(l.X.Type(), l.Pattern.Type())}
}

// String renders LIKE(x, 'p').
func (l *Like) String() string { return Format(l) }

// Children returns X and Pattern.
func (l *Like) Children() []Expr { return []Expr{l.X, l.Pattern} }

// WithChildren rebuilds the test.
func (l *Like) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("LIKE", kids, 2); err != nil {
		return nil, err
	}
	return NewLike(kids[0], kids[1], l.Not)
}

// Eval matches.
func (l *Like) Eval(row []types.Value) (types.Value, error) {
	x, err := l.X.Eval(row)
	if err != nil || x.IsNull() {
		return types.Value{}, err
	}
	m := l.m
	if m == nil {
		p, err := l.Pattern.Eval(row)
		if err != nil || p.IsNull() {
			return types.Value{}, err
		}
		m = CompileLike(p.Str())
	}
	return types.BoolValue(m.Match(x.Str()) != l.Not), nil
}
