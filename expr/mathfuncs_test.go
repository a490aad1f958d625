package expr

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestRandSeededAndVolatile: RAND(seed) gives the same sequence for the
// same seed in two calls, different values along the sequence, and is never
// folded into a constant (nor is UUID()).
func TestRandSeededAndVolatile(t *testing.T) {
	seq := func() []float64 {
		c, err := NewCall("RAND", []Expr{NewLiteral(types.IntValue(42), types.Type{Kind: types.KindInt, NotNull: true})})
		if err != nil {
			t.Fatal(err)
		}
		if _, lit := Fold(c).(*Literal); lit {
			t.Fatal("RAND(42) folded into a constant")
		}
		var out []float64
		for range 5 {
			v, err := c.Eval(nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v.Float())
		}
		return out
	}
	a, b := seq(), seq()
	distinct := map[float64]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("RAND(42) sequences differ at %d: %v vs %v", i, a, b)
		}
		if a[i] < 0 || a[i] >= 1 {
			t.Fatalf("RAND value %v outside [0, 1)", a[i])
		}
		distinct[a[i]] = true
	}
	if len(distinct) < 4 {
		t.Fatalf("RAND(42) repeats itself: %v", a)
	}
	u, err := NewCall("UUID", nil)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := u.Eval(nil)
	y, _ := u.Eval(nil)
	if x.Str() == y.Str() {
		t.Fatalf("UUID() gave %s twice", x.Str())
	}
	if _, err := NewCall("RAND", []Expr{NewColumn(0, types.Int, "n")}); err == nil {
		t.Fatal("RAND(column): no error, want 'the seed must be a constant'")
	}
}
