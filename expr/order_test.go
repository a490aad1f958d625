package expr

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestCheapFirst: CheapFirst moves a cheap operand that cannot fail before
// a costly one (q21's shape and an AND chain), leaves alone the orders it
// must keep (a cheap side that may fail, a volatile side, a cheap side
// already first), and the reordered expression gives the original's result
// on random rows with NULLs while calling the costly function only on the
// rows the cheap side does not decide, once.
func TestCheapFirst(t *testing.T) {
	m := must(t)
	s := NewColumn(0, types.Varchar, "s")
	n := NewColumn(1, types.Int, "n")
	f, calls := countingFunc(false)
	vf, _ := countingFunc(true)
	costly := func(fn *UserFunc) Expr { return NewIsNull(m(NewUserCall("tag", fn, []Expr{s})), true) }
	lowerIn := m(NewIn(m(NewCall("LOWER", []Expr{s})), []Expr{sv("apple"), sv("google")}, false))
	small := m(NewCompare("<", n, iv(3)))
	quotient := m(NewCompare(">", m(NewArith("/", iv(10), n)), iv(1))) // fails where n = 0

	cases := []struct {
		name      string
		in        Expr
		want      string // the reordered expression; "" = unchanged
		cheapDone func(row []types.Value) bool
	}{
		{"q21 OR", m(NewOr(costly(f), lowerIn)), "OR(IN(LOWER(s), 'apple', 'google'), IS NOT NULL(tag(s)))",
			func(row []types.Value) bool {
				return !row[0].IsNull() && (row[0].Str() == "apple" || row[0].Str() == "Google")
			}},
		{"AND chain", m(NewAnd(m(NewAnd(costly(f), small)), lowerIn)),
			"AND(IN(LOWER(s), 'apple', 'google'), AND(<(n, 3), IS NOT NULL(tag(s))))",
			func(row []types.Value) bool {
				inFalse := !row[0].IsNull() && row[0].Str() != "apple" && row[0].Str() != "Google"
				return inFalse || (!row[1].IsNull() && row[1].Int() >= 3)
			}},
		{"cheap side may fail", m(NewOr(costly(f), quotient)), "", nil},
		{"volatile side", m(NewOr(costly(vf), lowerIn)), "", nil},
		{"already cheap first", m(NewOr(lowerIn, costly(f))), "", nil},
		{"nothing costly", m(NewAnd(small, lowerIn)), "", nil},
	}
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 5))
	words := []string{"apple", "Google", "x", "baidu", ""}
	for _, c := range cases {
		got := CheapFirst(c.in)
		if c.want == "" {
			if got != c.in {
				t.Errorf("%s: %s reordered to %s, want it unchanged", c.name, c.in, got)
			}
			continue
		}
		if got.String() != c.want {
			t.Errorf("%s: CheapFirst(%s) = %s, want %s", c.name, c.in, got, c.want)
			continue
		}
		for i := 0; i < 300; i++ {
			row := []types.Value{types.StringValue(words[r.IntN(len(words))]), types.IntValue(r.Int64N(6))}
			if r.IntN(5) == 0 {
				row[r.IntN(2)] = types.Value{}
			}
			want, err := c.in.Eval(row)
			if err != nil {
				t.Fatal(err)
			}
			*calls = 0
			v, err := got.Eval(row)
			if err != nil {
				t.Fatal(err)
			}
			if v.IsNull() != want.IsNull() || (!v.IsNull() && v.Bool() != want.Bool()) {
				t.Fatalf("%s (seed %d): row %v gives %v, the original %v", c.name, seed, row, v, want)
			}
			// The function is strict: never called on a NULL s.
			if wantCalls := !c.cheapDone(row) && !row[0].IsNull(); wantCalls != (*calls == 1) || *calls > 1 {
				t.Fatalf("%s (seed %d): row %v called the costly function %d times; the cheap side decides: %v",
					c.name, seed, row, *calls, c.cheapDone(row))
			}
		}
	}
}
