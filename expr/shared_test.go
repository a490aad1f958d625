package expr

import (
	"fmt"
	"math/rand/v2"
	"runtime"
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

// TestShareCommonLinear shares the prefixes of two long chains a + b + a +
// b + ... (every prefix occurs twice) with memory linear in their length:
// four times the terms may take about four times the allocations, not
// sixteen (rendering every prefix in full took quadratic time and memory,
// minutes and gigabytes for a 100,000-term SELECT). The shared result
// still adds up to the sum computed here.
func TestShareCommonLinear(t *testing.T) {
	m := must(t)
	a := NewColumn(0, types.BigInt, "a")
	b := NewColumn(1, types.BigInt, "b")
	row := []types.Value{types.IntValue(3), types.IntValue(-5)}
	chain := func(n int) Expr {
		var e Expr = a
		for i := 1; i < n; i++ {
			next := a
			if i%2 == 1 {
				next = b
			}
			e = m(NewArith("+", e, next))
		}
		return e
	}
	allocated := func(n int) uint64 {
		x, y := chain(n), chain(n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ex, memo := ShareCommon([]Expr{x, y})
		runtime.ReadMemStats(&after)
		if memo == nil {
			t.Fatalf("%d terms: the repeated chain was not shared", n)
		}
		if _, ok := ex[1].(*Shared); !ok || ex[0] != ex[1] {
			t.Fatalf("%d terms: the two chains are not one Shared node: %T, %T", n, ex[0], ex[1])
		}
		memo.Next()
		want := int64(n-n/2)*3 + int64(n/2)*-5
		for _, e := range ex {
			v, err := e.Eval(row)
			if err != nil {
				t.Fatal(err)
			}
			if v.Int() != want {
				t.Fatalf("%d terms: %d, want %d", n, v.Int(), want)
			}
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(2000), allocated(8000)
	if large > 6*small {
		t.Errorf("sharing 8,000 terms allocated %d bytes, 2,000 terms %d: %.1f times, want about 4 (linear)", large, small, float64(large)/float64(small))
	}
}
