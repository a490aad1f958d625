package expr

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// TestLowerComparisons evaluates LOWER(s) = 'text', 'text' <> LOWER(s)
// and LOWER(s) [NOT] IN (...) (directly and behind a Shared node, as in a
// projection that repeats LOWER(s)) on random strings, mixed case,
// non-ASCII (İ and the Kelvin sign change length when lower-cased) and
// invalid UTF-8, against strings.ToLower and == in Go.
func TestLowerComparisons(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	texts := []string{"apple", "google", "k", "ki̇", "", "a-b", "ab"}
	parts := []string{"a", "A", "p", "P", "l", "L", "e", "E", "k", "K", "\u212a", "İ", "I", "i", "\xff", "-", "b", "B", "g", "G", "o", "O"}
	col := &Column{Index: 0, T: types.Type{Kind: types.KindVarchar}}
	lower, err := NewCall("LOWER", []Expr{col})
	if err != nil {
		t.Fatal(err)
	}
	var memo RowMemo
	shared := &Shared{X: lower, memo: &memo}
	list := make([]Expr, 3)
	for _, x := range []Expr{lower, shared} {
		for range 200 {
			text := texts[r.IntN(len(texts))]
			eq, _ := NewCompare("=", x, sv(text))
			ne, _ := NewCompare("<>", sv(text), x)
			ascii := strings.IndexFunc(text, func(c rune) bool { return c > 127 }) < 0
			if ascii && (eq.(*Compare).foldX == nil || ne.(*Compare).foldX == nil) {
				t.Fatalf("LOWER(s) = '%s': not compared case-insensitively", text)
			}
			var set []string
			for i := range list {
				set = append(set, texts[r.IntN(len(texts))])
				list[i] = sv(set[i])
			}
			in, _ := NewIn(x, list, false)
			notIn, _ := NewIn(x, list, true)
			for range 20 {
				var b strings.Builder
				for range r.IntN(7) {
					b.WriteString(parts[r.IntN(len(parts))])
				}
				s := b.String()
				if r.IntN(3) == 0 {
					s = strings.ToUpper(text)
				}
				memo.Next()
				row := []types.Value{types.StringValue(s)}
				low := strings.ToLower(s)
				member := low == set[0] || low == set[1] || low == set[2]
				for _, c := range []struct {
					e    Expr
					want bool
				}{{eq, low == text}, {ne, low != text}, {in, member}, {notIn, !member}} {
					v, err := c.e.Eval(row)
					if err != nil || v.IsNull() || v.Bool() != c.want {
						t.Fatalf("seed %d: %s on %q: %v %v, want %v", seed, c.e, s, v, err, c.want)
					}
				}
			}
		}
	}
	// NULL in gives NULL; upper-case or non-ASCII text is not folded.
	eq, _ := NewCompare("=", lower, sv("apple"))
	if v, err := eq.Eval([]types.Value{{}}); err != nil || !v.IsNull() {
		t.Errorf("LOWER(NULL) = 'apple': %v %v, want NULL", v, err)
	}
	for _, text := range []string{"Apple", "é"} {
		c, _ := NewCompare("=", lower, sv(text))
		if c.(*Compare).foldX != nil {
			t.Errorf("LOWER(s) = '%s' folded", text)
		}
	}
}

// TestLowerComparisonAllocs checks that LOWER(s) = 'apple' on 'Apple'
// allocates nothing.
func TestLowerComparisonAllocs(t *testing.T) {
	lower, _ := NewCall("LOWER", []Expr{&Column{Index: 0, T: types.Type{Kind: types.KindVarchar}}})
	eq, _ := NewCompare("=", lower, sv("apple"))
	row := []types.Value{types.StringValue("Apple")}
	n := testing.AllocsPerRun(100, func() {
		if v, _ := eq.Eval(row); !v.Bool() {
			t.Fatal("LOWER('Apple') = 'apple' is not TRUE")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per row, want 0", n)
	}
}

// TestEqualLower compares equalLower with strings.ToLower on random
// strings around each literal: shorter, longer, a mismatch at any byte,
// İ and the Kelvin sign (lowered to one ASCII byte: "baİdu" lowers to
// "baidu"), other non-ASCII and invalid UTF-8 anywhere.
func TestEqualLower(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 6))
	lits := []string{"", "a", "k", "ki", "baidu", "apple", "facebook", "channel-1"}
	parts := []string{"a", "B", "i", "I", "İ", "k", "K", "\u212a", "é", "É", "\xff", "\xc4", "-", "1", "u", "D", "d"}
	for range 200000 {
		lit := lits[r.IntN(len(lits))]
		var b strings.Builder
		switch r.IntN(3) {
		case 0: // lit's text, mixed case, with a part replaced or added
			for _, c := range lit {
				s := string(c)
				if r.IntN(2) == 0 {
					s = strings.ToUpper(s)
				}
				if r.IntN(6) == 0 {
					s = parts[r.IntN(len(parts))]
				}
				b.WriteString(s)
			}
			if r.IntN(3) == 0 {
				b.WriteString(parts[r.IntN(len(parts))])
			}
		default:
			for range r.IntN(10) {
				b.WriteString(parts[r.IntN(len(parts))])
			}
		}
		s := b.String()
		if got, want := equalLower(s, lit), strings.ToLower(s) == lit; got != want {
			t.Fatalf("seed %d: equalLower(%q, %q) = %v, want %v", seed, s, lit, got, want)
		}
	}
	for _, c := range [][2]string{{"baİdu", "baidu"}, {"\u212aI", "ki"}, {"BAIDU", "baidu"}} {
		if !equalLower(c[0], c[1]) {
			t.Errorf("equalLower(%q, %q) = false, want true", c[0], c[1])
		}
	}
}
