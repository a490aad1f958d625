package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

// A comparison of LOWER(x) with lower-case ASCII text (`LOWER(channel) =
// 'apple'`, `LOWER(channel) IN ('apple', 'google')`, Nexmark q21) compares
// x with the text case-insensitively instead: no lower-cased copy of x per
// row. The answers are those of strings.ToLower(x) = text.

// lowerOperand returns x when e is LOWER(x) of a VARCHAR (behind a Shared
// node or not), else nil.
func lowerOperand(e Expr) Expr {
	if s, ok := e.(*Shared); ok {
		e = s.X
	}
	f, ok := e.(*Func)
	if !ok || f.f != fnLower || len(f.Args) != 1 || f.Args[0].Type().Kind != types.KindVarchar {
		return nil
	}
	return f.Args[0]
}

// lowerFold returns x and text when one of l and r is LOWER(x) and the
// other lower-case ASCII text (lowerText), else nil.
func lowerFold(l, r Expr) (Expr, string) {
	for _, p := range [2][2]Expr{{l, r}, {r, l}} {
		if x := lowerOperand(p[0]); x != nil {
			if t, ok := lowerText(p[1]); ok {
				return x, t
			}
		}
	}
	return nil, ""
}

// lowerText returns the text of e when e is a VARCHAR literal of ASCII
// characters none of which is upper case.
func lowerText(e Expr) (string, bool) {
	l, ok := e.(*Literal)
	if !ok || l.V.Kind() != types.KindVarchar {
		return "", false
	}
	s := l.V.Str()
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return "", false
		}
	}
	return s, true
}

// equalLower reports whether strings.ToLower(s) == lit, for lit as
// lowerText accepts, without lower-casing an ASCII s. ToLower keeps an
// ASCII prefix of s byte for byte (upper case folded), so the first
// ASCII byte that differs from lit decides; only a non-ASCII byte before
// it needs the full ToLower (İ or the Kelvin sign lower to one ASCII
// byte, shortening the text). Without one, the lengths must be equal: a
// longer s lowers to lit and more.
func equalLower(s, lit string) bool {
	n := min(len(s), len(lit))
	for i := 0; i < n; i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return strings.ToLower(s) == lit
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	if len(s) <= len(lit) {
		// All of s matched (ASCII): equal when lit has no more.
		return len(s) == len(lit)
	}
	// ToLower works rune by rune: ToLower(s) is lit followed by the
	// lowered rest of s, which is not empty.
	return false
}

// lowerASCII returns the ASCII byte c lower-cased.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
