package expr

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// TestSplitIndex evaluates SPLIT_INDEX(s, sep, i) on random strings
// (empty pieces, separators at either end, non-ASCII text, one- and
// multi-byte separators; up to ~80 bytes, several 8-byte words) against strings.Split: piece i, NULL past the
// end or for a negative i.
func TestSplitIndex(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	seps := []string{"/", "a", "é", "//", "ab"}
	// "." and "`" differ from "/" and "a" in the lowest bit, "\xaf" and
	// "\xe1" in the highest: near misses for a word-at-a-time search.
	parts := []string{"a", "b", "/", "é", "\xc3", "x", "//", ".", "`", "\xaf", "\xe1", "0"}
	col := &Column{Index: 0, T: types.Type{Kind: types.KindVarchar}}
	for range 20000 {
		sep := seps[r.IntN(len(seps))]
		idx := int64(r.IntN(20)) - 1
		// The separator a literal (kept by the call, not evaluated per
		// row) or a column.
		sepArg := sv(sep)
		if r.IntN(2) == 0 {
			sepArg = &Column{Index: 1, T: types.Type{Kind: types.KindVarchar}}
		}
		e, err := NewCall("SPLIT_INDEX", []Expr{col, sepArg, iv(idx)})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		s := b.String()
		v, err := e.Eval([]types.Value{types.StringValue(s), types.StringValue(sep)})
		if err != nil {
			t.Fatal(err)
		}
		pieces := strings.Split(s, sep)
		if s == "" {
			pieces = nil // Flink: an empty string has no pieces
		}
		if idx < 0 || idx >= int64(len(pieces)) {
			if !v.IsNull() {
				t.Fatalf("seed %d: SPLIT_INDEX(%q, %q, %d) = %v, want NULL", seed, s, sep, idx, v)
			}
			continue
		}
		if v.IsNull() || v.Str() != pieces[idx] {
			t.Fatalf("seed %d: SPLIT_INDEX(%q, %q, %d) = %v, want %q", seed, s, sep, idx, v, pieces[idx])
		}
	}
}

// TestSplitIndexWhitespace checks SPLIT_INDEX with an empty separator,
// which splits at each of Java's whitespace characters (listed here from
// Character.isWhitespace's definition, not from the code under test),
// keeping empty pieces; an empty string has no pieces.
func TestSplitIndexWhitespace(t *testing.T) {
	javaSpace := regexp.MustCompile(`[\t\n\v\f\r\x1c-\x1f \x{1680}\x{2000}-\x{2006}\x{2008}-\x{200a}\x{2028}\x{2029}\x{205f}\x{3000}]`)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	// The no-break spaces U+00A0, U+2007, U+202F are not whitespace to Java.
	parts := []string{"a", "é", " ", "\t", "\n", "\x1d", "\u00a0", "\u2007", "\u202f", "\u3000", "\u2028", "\u1680", "x"}
	col := &Column{Index: 0, T: types.Type{Kind: types.KindVarchar}}
	for range 5000 {
		idx := int64(r.IntN(8))
		e, err := NewCall("SPLIT_INDEX", []Expr{col, sv(""), iv(idx)})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		s := b.String()
		v, err := e.Eval([]types.Value{types.StringValue(s)})
		if err != nil {
			t.Fatal(err)
		}
		var pieces []string
		if s != "" {
			pieces = javaSpace.Split(s, -1)
		}
		if idx >= int64(len(pieces)) {
			if !v.IsNull() {
				t.Fatalf("seed %d: SPLIT_INDEX(%q, '', %d) = %v, want NULL", seed, s, idx, v)
			}
			continue
		}
		if v.IsNull() || v.Str() != pieces[idx] {
			t.Fatalf("seed %d: SPLIT_INDEX(%q, '', %d) = %v, want %q", seed, s, idx, v, pieces[idx])
		}
	}
}

// TestScalarNullLiteral checks that a NULL literal argument of a strict
// function still gives NULL (literal arguments are kept by the call).
func TestScalarNullLiteral(t *testing.T) {
	col := &Column{Index: 0, T: types.Type{Kind: types.KindVarchar}}
	for _, args := range [][]Expr{
		{col, lit(types.Value{}), iv(1)},
		{col, sv("/"), lit(types.Value{})},
		{lit(types.Value{}), sv("/"), iv(1)},
	} {
		e, err := NewCall("SPLIT_INDEX", args)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := e.Eval([]types.Value{types.StringValue("a/b")}); err != nil || !v.IsNull() {
			t.Errorf("%s: %v %v, want NULL", e, v, err)
		}
	}
}

// TestSplitIndexAllocs checks that SPLIT_INDEX returns a piece of its
// input without allocating.
func TestSplitIndexAllocs(t *testing.T) {
	col := &Column{Index: 0, T: types.Type{Kind: types.KindVarchar}}
	e, _ := NewCall("SPLIT_INDEX", []Expr{col, sv("/"), iv(4)})
	row := []types.Value{types.StringValue("https://www.nexmark.com/abcde/fg_hi/jklmn/item.htm?query=1")}
	n := testing.AllocsPerRun(100, func() {
		if v, _ := e.Eval(row); v.Str() != "fg_hi" {
			t.Fatalf("SPLIT_INDEX: %v, want fg_hi", v)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per row, want 0", n)
	}
}

// BenchmarkSplitIndexURL is Nexmark q22's three SPLIT_INDEX calls on a
// URL shaped like the generator's.
func BenchmarkSplitIndexURL(b *testing.B) {
	col := &Column{Index: 0, T: types.Type{Kind: types.KindVarchar}}
	var es []Expr
	for i := int64(3); i <= 5; i++ {
		e, err := NewCall("SPLIT_INDEX", []Expr{col, sv("/"), iv(i)})
		if err != nil {
			b.Fatal(err)
		}
		es = append(es, e)
	}
	row := []types.Value{types.StringValue("https://www.nexmark.com/abcde/fg_hi/jklmn/item.htm?query=1&channel_id=1234567")}
	for range b.N {
		for _, e := range es {
			if _, err := e.Eval(row); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestRegexpExtractCall evaluates REGEXP_EXTRACT(s, re [, i]) as a call
// with a literal pattern and group (the one-argument path) and with the
// pattern or group from a column, against Go's regexp on random URLs.
func TestRegexpExtractCall(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 8))
	const pattern = `(&|^)channel_id=([^&]*)`
	re := regexp.MustCompile(pattern)
	str := types.Type{Kind: types.KindVarchar}
	s, p, g := &Column{Index: 0, T: str}, &Column{Index: 1, T: str}, &Column{Index: 2, T: types.Type{Kind: types.KindBigInt}}
	parts := []string{"&", "channel_id=", "a", "1", "=", "/", "é"}
	for range 3000 {
		i := int64(r.IntN(4)) - 1
		var args []Expr
		switch r.IntN(4) {
		case 0:
			args = []Expr{s, sv(pattern)} // group 0
			i = 0
		case 1:
			args = []Expr{s, sv(pattern), iv(i)}
		case 2:
			args = []Expr{s, p, iv(i)}
		default:
			args = []Expr{s, sv(pattern), g}
		}
		e, err := NewCall("REGEXP_EXTRACT", args)
		if err != nil {
			t.Fatal(err)
		}
		_, litPattern := args[1].(*Literal)
		_, litGroup := args[len(args)-1].(*Literal)
		if want := litPattern && litGroup; e.(*Scalar).first != want {
			t.Fatalf("%s: one-argument path %v, want %v", e, !want, want)
		}
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		in := b.String()
		v, err := e.Eval([]types.Value{types.StringValue(in), types.StringValue(pattern), types.BigIntValue(i)})
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindStringSubmatchIndex(in)
		if i < 0 || i > 2 || m == nil || m[2*i] < 0 {
			if !v.IsNull() {
				t.Fatalf("seed %d: %s on %q, group %d: %v, want NULL", seed, e, in, i, v)
			}
			continue
		}
		if want := in[m[2*i]:m[2*i+1]]; v.IsNull() || v.Str() != want {
			t.Fatalf("seed %d: %s on %q, group %d: %v, want %q", seed, e, in, i, v, want)
		}
	}
}
