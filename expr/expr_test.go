package expr

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

var (
	vNull = types.NullValue()
	row   = []types.Value{
		types.IntValue(7),               // $0 i INT
		types.BigIntValue(1 << 40),      // $1 b BIGINT
		types.DoubleValue(2.5),          // $2 d DOUBLE
		types.StringValue("héllo"),      // $3 s VARCHAR
		types.BoolValue(true),           // $4 t BOOLEAN
		vNull,                           // $5 n INT (NULL)
		types.TimestampValue(1_000_000), // $6 ts TIMESTAMP
		vNull,                           // $7 nb BOOLEAN (NULL)
		types.IntValue(0),               // $8 z INT
		types.IntValue(math.MaxInt32),   // $9 mx INT
	}
	cI  = NewColumn(0, types.Int, "i")
	cB  = NewColumn(1, types.BigInt, "b")
	cD  = NewColumn(2, types.Double, "d")
	cS  = NewColumn(3, types.Varchar, "s")
	cT  = NewColumn(4, types.Boolean, "t")
	cN  = NewColumn(5, types.Int, "n")
	cTs = NewColumn(6, types.Timestamp, "ts")
	cNB = NewColumn(7, types.Boolean, "nb")
	cZ  = NewColumn(8, types.Int, "z")
	cMx = NewColumn(9, types.Int, "mx")
)

func lit(v types.Value) Expr {
	t := types.Type{Kind: v.Kind()}
	return NewLiteral(v, t)
}
func iv(n int64) Expr          { return lit(types.IntValue(n)) }
func sv(s string) Expr         { return lit(types.StringValue(s)) }
func bv(b bool) Expr           { return lit(types.BoolValue(b)) }
func nullOf(k types.Kind) Expr { return NewLiteral(vNull, types.Type{Kind: k}) }

func must(t *testing.T) func(Expr, error) Expr {
	return func(e Expr, err error) Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
}

func TestEval(t *testing.T) {
	m := must(t)
	cases := []struct {
		name string
		e    Expr
		want types.Value
		typ  types.Kind
		err  string
	}{
		{"int+int", m(NewArith("+", cI, iv(3))), types.IntValue(10), types.KindInt, ""},
		{"int*bigint", m(NewArith("*", cI, cB)), types.BigIntValue(7 << 40), types.KindBigInt, ""},
		{"int/double", m(NewArith("/", cI, cD)), types.DoubleValue(2.8), types.KindDouble, ""},
		{"int/int truncates", m(NewArith("/", cI, iv(2))), types.IntValue(3), types.KindInt, ""},
		{"int%int", m(NewArith("%", cI, iv(4))), types.IntValue(3), types.KindInt, ""},
		{"int overflow fails", m(NewArith("+", cMx, iv(1))), vNull, types.KindInt, "numeric overflow: 2147483647 + 1 does not fit in INT"},
		{"div by zero", m(NewArith("/", cI, cZ)), vNull, types.KindInt, "division by zero"},
		{"mod by zero", m(NewArith("%", cI, cZ)), vNull, types.KindInt, "division by zero"},
		{"double/0", m(NewArith("/", cD, lit(types.DoubleValue(0)))), types.DoubleValue(math.Inf(1)), types.KindDouble, ""},
		{"null+1", m(NewArith("+", cN, iv(1))), vNull, types.KindInt, ""},
		{"ts+interval", m(NewArith("+", cTs, lit(types.IntervalValue(5000)))), types.TimestampValue(1_005_000), types.KindTimestamp, ""},
		{"ts-interval", m(NewArith("-", cTs, lit(types.IntervalValue(5000)))), types.TimestampValue(995_000), types.KindTimestamp, ""},
		{"neg", m(NewNeg(cB)), types.BigIntValue(-(1 << 40)), types.KindBigInt, ""},
		{"int<bigint", m(NewCompare("<", cI, cB)), types.BoolValue(true), types.KindBoolean, ""},
		{"int=double", m(NewCompare("=", cI, lit(types.DoubleValue(7)))), types.BoolValue(true), types.KindBoolean, ""},
		{"str<>", m(NewCompare("<>", cS, sv("x"))), types.BoolValue(true), types.KindBoolean, ""},
		{"str>=", m(NewCompare(">=", cS, sv("h"))), types.BoolValue(true), types.KindBoolean, ""},
		{"bool=", m(NewCompare("=", cT, bv(false))), types.BoolValue(false), types.KindBoolean, ""},
		{"ts>", m(NewCompare(">", cTs, lit(types.TimestampValue(5)))), types.BoolValue(true), types.KindBoolean, ""},
		{"cmp null", m(NewCompare("=", cN, iv(1))), vNull, types.KindBoolean, ""},
		{"false AND null", m(NewAnd(bv(false), cNB)), types.BoolValue(false), types.KindBoolean, ""},
		{"null AND false", m(NewAnd(cNB, bv(false))), types.BoolValue(false), types.KindBoolean, ""},
		{"true AND null", m(NewAnd(cT, cNB)), vNull, types.KindBoolean, ""},
		{"true AND true", m(NewAnd(cT, cT)), types.BoolValue(true), types.KindBoolean, ""},
		{"null OR true", m(NewOr(cNB, cT)), types.BoolValue(true), types.KindBoolean, ""},
		{"null OR false", m(NewOr(cNB, bv(false))), vNull, types.KindBoolean, ""},
		{"false OR false", m(NewOr(bv(false), bv(false))), types.BoolValue(false), types.KindBoolean, ""},
		{"NOT null", m(NewNot(cNB)), vNull, types.KindBoolean, ""},
		{"NOT true", m(NewNot(cT)), types.BoolValue(false), types.KindBoolean, ""},
		{"null IS NULL", NewIsNull(cN, false), types.BoolValue(true), types.KindBoolean, ""},
		{"i IS NOT NULL", NewIsNull(cI, true), types.BoolValue(true), types.KindBoolean, ""},
		{"IN hit", m(NewIn(cI, []Expr{iv(1), iv(7)}, false)), types.BoolValue(true), types.KindBoolean, ""},
		{"IN miss", m(NewIn(cI, []Expr{iv(1), iv(2)}, false)), types.BoolValue(false), types.KindBoolean, ""},
		{"IN miss with null", m(NewIn(cI, []Expr{iv(1), nullOf(types.KindInt)}, false)), vNull, types.KindBoolean, ""},
		{"IN hit with null", m(NewIn(cI, []Expr{nullOf(types.KindInt), iv(7)}, false)), types.BoolValue(true), types.KindBoolean, ""},
		{"NOT IN miss", m(NewIn(cI, []Expr{iv(1)}, true)), types.BoolValue(true), types.KindBoolean, ""},
		{"null IN", m(NewIn(cN, []Expr{iv(1)}, false)), vNull, types.KindBoolean, ""},
		{"BETWEEN", m(NewBetween(cI, iv(1), iv(7), false)), types.BoolValue(true), types.KindBoolean, ""},
		{"NOT BETWEEN", m(NewBetween(cI, iv(1), iv(6), true)), types.BoolValue(true), types.KindBoolean, ""},
		{"BETWEEN null hi, below", m(NewBetween(cI, iv(8), nullOf(types.KindInt), false)), types.BoolValue(false), types.KindBoolean, ""},
		{"BETWEEN null hi", m(NewBetween(cI, iv(1), nullOf(types.KindInt), false)), vNull, types.KindBoolean, ""},
		{"LIKE prefix", m(NewLike(cS, sv("hé%"), false)), types.BoolValue(true), types.KindBoolean, ""},
		{"LIKE underscore rune", m(NewLike(cS, sv("h_llo"), false)), types.BoolValue(true), types.KindBoolean, ""},
		{"NOT LIKE", m(NewLike(cS, sv("%x%"), true)), types.BoolValue(true), types.KindBoolean, ""},
		{"LIKE null", m(NewLike(cS, nullOf(types.KindVarchar), false)), vNull, types.KindBoolean, ""},
		{"CASE searched", m(NewCase([]Expr{m(NewCompare(">", cI, iv(10))), m(NewCompare(">", cI, iv(5)))}, []Expr{sv("big"), sv("mid")}, sv("small"))), types.StringValue("mid"), types.KindVarchar, ""},
		{"CASE no else", m(NewCase([]Expr{cNB}, []Expr{iv(1)}, nil)), vNull, types.KindInt, ""},
		{"CASE widens", m(NewCase([]Expr{cT}, []Expr{iv(1)}, lit(types.DoubleValue(2)))), types.DoubleValue(1), types.KindDouble, ""},
		{"COALESCE", m(NewCoalesce([]Expr{cN, iv(3)})), types.IntValue(3), types.KindInt, ""},
		{"COALESCE all null", m(NewCoalesce([]Expr{cN, nullOf(types.KindInt)})), vNull, types.KindInt, ""},
		{"cast str->int", m(NewCast(sv(" 42 "), types.Int)), types.IntValue(42), types.KindInt, ""},
		{"cast bad str->int", m(NewCast(sv("abc"), types.Int)), vNull, types.KindInt, "cannot cast 'abc' to INT"},
		{"cast big str->int", m(NewCast(sv("3000000000"), types.Int)), vNull, types.KindInt, "cannot cast '3000000000' to INT"},
		{"cast str->double", m(NewCast(sv("1.5"), types.Double)), types.DoubleValue(1.5), types.KindDouble, ""},
		{"cast double->int", m(NewCast(lit(types.DoubleValue(-2.7)), types.Int)), types.IntValue(-2), types.KindInt, ""},
		{"cast int->str", m(NewCast(cI, types.Varchar)), types.StringValue("7"), types.KindVarchar, ""},
		{"cast double->str", m(NewCast(lit(types.DoubleValue(3)), types.Varchar)), types.StringValue("3.0"), types.KindVarchar, ""},
		{"cast bool->str", m(NewCast(cT, types.Varchar)), types.StringValue("TRUE"), types.KindVarchar, ""},
		{"cast ts->str", m(NewCast(cTs, types.Varchar)), types.StringValue("1970-01-01 00:16:40.000"), types.KindVarchar, ""},
		{"cast str->ts", m(NewCast(sv("2024-02-03 04:05:06.789"), types.Timestamp)), types.TimestampValue(1706933106789), types.KindTimestamp, ""},
		{"cast bad str->ts", m(NewCast(sv("yesterday"), types.Timestamp)), vNull, types.KindTimestamp, "cannot cast 'yesterday' to TIMESTAMP(3)"},
		{"cast str->bool", m(NewCast(sv("True"), types.Boolean)), types.BoolValue(true), types.KindBoolean, ""},
		{"cast null", m(NewCast(cN, types.Varchar)), vNull, types.KindVarchar, ""},
		{"UPPER", m(NewCall("UPPER", []Expr{cS})), types.StringValue("HÉLLO"), types.KindVarchar, ""},
		{"LOWER", m(NewCall("LOWER", []Expr{sv("AbC")})), types.StringValue("abc"), types.KindVarchar, ""},
		{"CHAR_LENGTH runes", m(NewCall("CHAR_LENGTH", []Expr{cS})), types.IntValue(5), types.KindInt, ""},
		{"SUBSTRING 2,3", m(NewCall("SUBSTRING", []Expr{cS, iv(2), iv(3)})), types.StringValue("éll"), types.KindVarchar, ""},
		{"SUBSTRING from 0 for 3", m(NewCall("SUBSTRING", []Expr{cS, iv(0), iv(3)})), types.StringValue("hé"), types.KindVarchar, ""},
		{"SUBSTRING 4", m(NewCall("SUBSTRING", []Expr{cS, iv(4)})), types.StringValue("lo"), types.KindVarchar, ""},
		{"SUBSTRING past end", m(NewCall("SUBSTRING", []Expr{cS, iv(9)})), types.StringValue(""), types.KindVarchar, ""},
		{"SUBSTRING before start", m(NewCall("SUBSTRING", []Expr{cS, iv(-5), iv(3)})), types.StringValue(""), types.KindVarchar, ""},
		{"SUBSTRING negative len", m(NewCall("SUBSTRING", []Expr{cS, iv(1), iv(-1)})), vNull, types.KindVarchar, "negative length"},
		{"CONCAT", m(NewCall("CONCAT", []Expr{cS, sv("-"), cI})), types.StringValue("héllo-7"), types.KindVarchar, ""},
		{"|| null", m(NewCall("||", []Expr{cS, NewLiteral(vNull, types.Varchar)})), vNull, types.KindVarchar, ""},
		{"TRIM", m(NewCall("TRIM", []Expr{sv("  a b  ")})), types.StringValue("a b"), types.KindVarchar, ""},
		{"ABS", m(NewCall("ABS", []Expr{iv(-3)})), types.IntValue(3), types.KindInt, ""},
		{"MOD", m(NewCall("MOD", []Expr{cI, iv(4)})), types.IntValue(3), types.KindInt, ""},
		{"FLOOR", m(NewCall("FLOOR", []Expr{cD})), types.DoubleValue(2), types.KindDouble, ""},
		{"CEIL", m(NewCall("CEIL", []Expr{cD})), types.DoubleValue(3), types.KindDouble, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.e.Eval(row)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind() != c.want.Kind() || !types.Equal(got, c.want) {
				t.Fatalf("%s = %v (%s), want %v (%s)", c.e, got, got.Kind(), c.want, c.want.Kind())
			}
			if c.e.Type().Kind != c.typ {
				t.Fatalf("type %s, want %s", c.e.Type(), c.typ)
			}
		})
	}
}

func TestTypeErrors(t *testing.T) {
	cases := []struct {
		name string
		f    func() (Expr, error)
		want string
	}{
		{"str+int", func() (Expr, error) { return NewArith("+", cS, cI) }, "cannot apply '+' to VARCHAR and INT"},
		{"compare str int", func() (Expr, error) { return NewCompare("=", cS, cI) }, "cannot compare VARCHAR and INT"},
		{"and int", func() (Expr, error) { return NewAnd(cI, cT) }, "AND needs BOOLEAN operands, got INT"},
		{"like int", func() (Expr, error) { return NewLike(cI, sv("x"), false) }, "LIKE needs VARCHAR"},
		{"cast ts->int", func() (Expr, error) { return NewCast(cTs, types.Int) }, "cannot cast TIMESTAMP(3) to INT"},
		{"upper int", func() (Expr, error) { return NewCall("UPPER", []Expr{cI}) }, "UPPER: argument 1 has type INT"},
		{"unknown fn", func() (Expr, error) { return NewCall("FOO", nil) }, "unknown function FOO"},
		{"case mixed", func() (Expr, error) { return NewCase([]Expr{cT}, []Expr{cS}, cI) }, "incompatible types"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.f()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestLikeMatcher(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true}, {"", "a", false}, {"%", "", true}, {"%", "abc", true},
		{"abc", "abc", true}, {"abc", "abcd", false}, {"a%", "abc", true}, {"%c", "abc", true},
		{"%b%", "abc", true}, {"%x%", "abc", false}, {"a%c", "ac", true}, {"a%a", "a", false},
		{"_", "é", true}, {"__", "é", false}, {"a_c", "abc", true}, {"%_c", "c", false},
		{"%a_c%", "xxabcxx", true}, {"%b_d", "abxbcd", true}, {"a%b%c", "aXbYc", true}, {"a%b%c", "aXcYb", false},
	}
	for _, c := range cases {
		if got := CompileLike(c.pattern).Match(c.s); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.s, c.pattern, got, c.want)
		}
	}
}

func TestFoldAndSubstitute(t *testing.T) {
	m := must(t)
	e := m(NewArith("+", cI, m(NewArith("*", iv(2), iv(3)))))
	f := FoldAll(e)
	if got := f.String(); got != "+(i, 6)" {
		t.Fatalf("folded = %s", got)
	}
	// 1/0 is left to fail at run time.
	if _, ok := FoldAll(m(NewArith("/", iv(1), iv(0)))).(*Literal); ok {
		t.Fatal("1/0 folded")
	}
	s, err := Substitute(f, []Expr{m(NewArith("-", cB, iv(1)))})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "+(-(b, 1), 6)" || s.Type().Kind != types.KindBigInt {
		t.Fatalf("substituted = %s %s", got, s.Type())
	}
	if !errors.Is(ErrDivisionByZero, ErrDivisionByZero) || IsConstant(e) || !IsConstant(iv(1)) {
		t.Fatal("IsConstant")
	}
}

func TestNoAllocs(t *testing.T) {
	m := must(t)
	e := m(NewAnd(m(NewCompare(">", m(NewArith("*", cI, cB)), iv(3))), m(NewLike(cS, sv("%ll%"), false))))
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := e.Eval(row); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Eval", allocs)
	}
}
