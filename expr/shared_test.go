package expr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// countingFunc returns a user function "tag(s)" = "<" + s + ">" that counts
// its calls, and the counter.
func countingFunc(volatile bool) (*UserFunc, *int) {
	n := new(int)
	return &UserFunc{ID: "tag", Args: []types.Kind{types.KindVarchar}, Result: types.KindVarchar, Volatile: volatile,
		Call: func(a, _, _ types.Value) (types.Value, error) {
			*n++
			return types.StringValue("<" + a.Str() + ">"), nil
		}}, n
}

// TestShareCommonEvaluatesOncePerRow checks that a call repeated in a
// filter and a projection (q21's shape: f(x) IS NOT NULL, then CASE ...
// ELSE f(x)) is computed once per row, gives the same results as the
// unshared expressions, and that a branch not taken still computes nothing.
func TestShareCommonEvaluatesOncePerRow(t *testing.T) {
	m := must(t)
	f, calls := countingFunc(false)
	s := NewColumn(0, types.Varchar, "s")
	call := func() Expr {
		c, err := NewUserCall("tag", f, []Expr{s})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lower := func() Expr { return m(NewCall("LOWER", []Expr{s})) }
	filter := m(NewOr(NewIsNull(call(), true), m(NewCompare("=", lower(), sv("apple")))))
	proj := m(NewCase([]Expr{m(NewCompare("=", lower(), sv("apple"))), m(NewCompare("=", lower(), sv("google")))},
		[]Expr{sv("0"), sv("1")}, call()))
	exprs, memo := ShareCommon([]Expr{filter, proj})
	if memo == nil {
		t.Fatal("nothing shared")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	words := []string{"Apple", "google", "x", "apple", "GOOGLE", "baidu"}
	for i := 0; i < 200; i++ {
		w := words[r.IntN(len(words))]
		row := []types.Value{types.StringValue(w)}
		memo.Next()
		*calls = 0
		gf, err1 := exprs[0].Eval(row)
		gp, err2 := exprs[1].Eval(row)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if *calls != 1 {
			t.Errorf("row %q: tag called %d times; want 1", w, *calls)
		}
		// The answer computed here: tag(s) is never NULL, so the filter
		// is true; the projection by lower(s).
		want := "<" + w + ">"
		switch strings.ToLower(w) {
		case "apple":
			want = "0"
		case "google":
			want = "1"
		}
		if !gf.Bool() || gp.Str() != want {
			t.Errorf("row %q: filter %v, projection %v; want true, %s", w, gf, gp, want)
		}
	}
	// Lazy: a shared call in a branch not taken is not computed.
	lazy := m(NewCase([]Expr{m(NewCompare("=", s, sv("a")))}, []Expr{call()}, call()))
	ex, memo2 := ShareCommon([]Expr{lazy, m(NewCompare("=", s, sv("a")))})
	if memo2 == nil {
		t.Fatal("nothing shared")
	}
	memo2.Next()
	*calls = 0
	if _, err := ex[1].Eval([]types.Value{types.StringValue("b")}); err != nil || *calls != 0 {
		t.Errorf("calls %d, err %v; want 0 calls", *calls, err)
	}
}

// TestShareCommonKeepsVolatileAndDistinct checks that a volatile call is
// computed at each occurrence, that the same rendering over different
// columns is not merged, and that nothing repeated means no memo.
func TestShareCommonKeepsVolatileAndDistinct(t *testing.T) {
	m := must(t)
	f, calls := countingFunc(true)
	a := NewColumn(0, types.Varchar, "x")
	b := NewColumn(1, types.Varchar, "x") // the same name, another column
	vol := func() Expr { return m(NewUserCall("tag", f, []Expr{a})) }
	ex, memo := ShareCommon([]Expr{vol(), vol()})
	if memo != nil {
		t.Errorf("volatile calls shared: %v", ex)
	}
	row := []types.Value{types.StringValue("p"), types.StringValue("q")}
	*calls = 0
	for _, e := range ex {
		if _, err := e.Eval(row); err != nil {
			t.Fatal(err)
		}
	}
	if *calls != 2 {
		t.Errorf("volatile tag called %d times; want 2", *calls)
	}
	la, lb := m(NewCall("UPPER", []Expr{a})), m(NewCall("UPPER", []Expr{b}))
	if la.String() != lb.String() {
		t.Skipf("renderings differ (%s, %s): nothing to check", la, lb)
	}
	ex, memo = ShareCommon([]Expr{la, lb})
	if memo != nil {
		memo.Next()
	}
	var got []string
	for _, e := range ex {
		v, err := e.Eval(row)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Str())
	}
	if fmt.Sprint(got) != "[P Q]" {
		t.Errorf("UPPER of two columns named x = %v; want [P Q]", got)
	}
}
