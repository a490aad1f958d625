package expr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestCompareIntColumnLiteral checks the integer fast path of Compare (a
// column of an integer type against an integer literal, either side, each
// operator) on values at and around the literal, the int64 bounds and
// NULL: the result is the one computed here in Go, and the one of the
// generic path (the same comparison of two columns, the literal's value
// in the second); and IntRange's range holds exactly the values for which
// it is TRUE.
func TestCompareIntColumnLiteral(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 2))
	kinds := []struct {
		t    types.Type
		make func(int64) types.Value
	}{
		{types.Type{Kind: types.KindTinyInt}, types.TinyIntValue},
		{types.Type{Kind: types.KindSmallInt}, types.SmallIntValue},
		{types.Int, types.IntValue},
		{types.BigInt, types.BigIntValue},
	}
	want := map[string]func(a, b int64) bool{
		"=":  func(a, b int64) bool { return a == b },
		"<>": func(a, b int64) bool { return a != b },
		"<":  func(a, b int64) bool { return a < b },
		"<=": func(a, b int64) bool { return a <= b },
		">":  func(a, b int64) bool { return a > b },
		">=": func(a, b int64) bool { return a >= b },
	}
	lits := []int64{0, 1, -1, 100, 10000, 1000000, math.MaxInt64, math.MinInt64, r.Int64N(200) - 100}
	for op, f := range want {
		for _, ck := range kinds {
			for _, lk := range kinds[2:] { // INT and BIGINT literals
				for _, lit := range lits {
					for _, litLeft := range []bool{false, true} {
						name := fmt.Sprintf("%s %s %s lit %d left=%v", ck.t.Kind, op, lk.t.Kind, lit, litLeft)
						col := NewColumn(0, ck.t, "x")
						l := NewLiteral(lk.make(lit), lk.t)
						other := NewColumn(1, lk.t, "y")
						var fast, generic Expr
						var err error
						if litLeft {
							fast, err = NewCompare(op, l, col)
							if err == nil {
								generic, err = NewCompare(op, other, col)
							}
						} else {
							fast, err = NewCompare(op, col, l)
							if err == nil {
								generic, err = NewCompare(op, col, other)
							}
						}
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if !fast.(*Compare).intFast || generic.(*Compare).intFast {
							t.Fatalf("%s: fast path %v for the literal, %v for two columns", name, fast.(*Compare).intFast, generic.(*Compare).intFast)
						}
						xs := []int64{lit, lit + 1, lit - 1, math.MaxInt64, math.MinInt64, 0, r.Int64(), r.Int64N(2001) - 1000}
						for i := range len(xs) + 1 {
							row := []types.Value{{}, lk.make(lit)}
							wantV := types.Value{}
							if i < len(xs) {
								row[0] = ck.make(xs[i])
								a, b := xs[i], lit
								if litLeft {
									a, b = b, a
								}
								wantV = types.BoolValue(f(a, b))
							}
							got, err := fast.Eval(row)
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							gen, err := generic.Eval(row)
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							if got != wantV || gen != wantV {
								t.Fatalf("%s, x=%s: fast %s, generic %s; want %s (seed %d)", name, row[0], got, gen, wantV, seed)
							}
							// IntRange (every operator but <>) holds the
							// values for which the comparison is TRUE.
							c, lo, hi, ok := fast.(*Compare).IntRange()
							if ok != (op != "<>") || ok && c != 0 {
								t.Fatalf("%s: IntRange column %d ok %v", name, c, ok)
							}
							if ok && i < len(xs) && (lo <= xs[i] && xs[i] <= hi) != wantV.Bool() {
								t.Fatalf("%s, x=%d: in IntRange [%d, %d] = %v, want %s (seed %d)", name, xs[i], lo, hi, !wantV.Bool(), wantV, seed)
							}
						}
					}
				}
			}
		}
	}
}

// TestCompareIntFastPathOnlyForIntegers: a comparison of a column with a
// literal of another kind (DOUBLE, VARCHAR), of two literals or with a
// NULL literal keeps the generic path.
func TestCompareIntFastPathOnlyForIntegers(t *testing.T) {
	cases := []struct {
		name string
		l, r Expr
	}{
		{"double column", NewColumn(0, types.Type{Kind: types.KindDouble}, "d"), NewLiteral(types.IntValue(1), types.Int)},
		{"double literal", NewColumn(0, types.BigInt, "b"), NewLiteral(types.DoubleValue(1.5), types.Type{Kind: types.KindDouble})},
		{"null literal", NewColumn(0, types.BigInt, "b"), NewLiteral(types.NullValue(), types.BigInt)},
		{"two literals", NewLiteral(types.IntValue(2), types.Int), NewLiteral(types.IntValue(1), types.Int)},
		{"varchar", NewColumn(0, types.Varchar, "s"), NewLiteral(types.StringValue("a"), types.Varchar)},
	}
	for _, c := range cases {
		e, err := NewCompare("<", c.l, c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if e.(*Compare).intFast {
			t.Errorf("%s: on the integer fast path", c.name)
		}
	}
}
