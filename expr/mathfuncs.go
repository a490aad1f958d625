package expr

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/weir-sql/weir/types"
)

// Numeric functions, with Flink's semantics: DOUBLE results follow Java's
// Math (LN(0) is -Infinity, SQRT(-1) NaN); ROUND, TRUNCATE and SIGN keep
// their argument's type.

func addMathFuncs(m map[string]*scalarDef) {
	num := []argClass{aNum}
	dbl := typeOf(types.KindDouble)
	unary := func(f func(float64) float64, doc string) *scalarDef {
		return &scalarDef{min: 1, max: 1, args: num, result: dbl, doc: doc,
			eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) { return types.DoubleValue(f(a.Float())), nil }}
	}
	m["SQRT"] = unary(math.Sqrt, "SQRT(x): the square root of x")
	m["LN"] = unary(math.Log, "LN(x): the natural logarithm of x")
	m["LOG10"] = unary(math.Log10, "LOG10(x): the base-10 logarithm of x")
	m["LOG2"] = unary(math.Log2, "LOG2(x): the base-2 logarithm of x")
	m["EXP"] = unary(math.Exp, "EXP(x): e to the power x")
	m["SIN"] = unary(math.Sin, "SIN(x): the sine of x (radians)")
	m["COS"] = unary(math.Cos, "COS(x): the cosine of x")
	m["TAN"] = unary(math.Tan, "TAN(x): the tangent of x")
	m["COT"] = unary(func(x float64) float64 { return 1 / math.Tan(x) }, "COT(x): the cotangent of x")
	m["ASIN"] = unary(math.Asin, "ASIN(x): the arc sine of x")
	m["ACOS"] = unary(math.Acos, "ACOS(x): the arc cosine of x")
	m["ATAN"] = unary(math.Atan, "ATAN(x): the arc tangent of x")
	m["SINH"] = unary(math.Sinh, "SINH(x): the hyperbolic sine of x")
	m["COSH"] = unary(math.Cosh, "COSH(x): the hyperbolic cosine of x")
	m["TANH"] = unary(math.Tanh, "TANH(x): the hyperbolic tangent of x")
	m["DEGREES"] = unary(func(x float64) float64 { return x * 180 / math.Pi }, "DEGREES(x): radians x in degrees")
	m["RADIANS"] = unary(func(x float64) float64 { return x * math.Pi / 180 }, "RADIANS(x): degrees x in radians")
	m["ATAN2"] = &scalarDef{min: 2, max: 2, args: num, result: dbl, doc: "ATAN2(y, x): the angle of the point (x, y)",
		eval3: func(_ *Scalar, a, b, _ types.Value) (types.Value, error) {
			return types.DoubleValue(math.Atan2(a.Float(), b.Float())), nil
		}}
	m["POWER"] = &scalarDef{min: 2, max: 2, args: num, result: dbl, doc: "POWER(x, y): x to the power y",
		eval3: func(_ *Scalar, a, b, _ types.Value) (types.Value, error) {
			return types.DoubleValue(math.Pow(a.Float(), b.Float())), nil
		}}
	m["LOG"] = &scalarDef{min: 1, max: 2, args: num, result: dbl, doc: "LOG(x) or LOG(b, x): the natural logarithm of x, or its base-b logarithm",
		eval3: func(s *Scalar, a, b, _ types.Value) (types.Value, error) {
			if len(s.Args) == 1 {
				return types.DoubleValue(math.Log(a.Float())), nil
			}
			return types.DoubleValue(math.Log(b.Float()) / math.Log(a.Float())), nil
		}}
	m["PI"] = &scalarDef{min: 0, max: 0, result: dbl, doc: "PI(): π",
		eval3: func(*Scalar, types.Value, types.Value, types.Value) (types.Value, error) {
			return types.DoubleValue(math.Pi), nil
		}}
	m["E"] = &scalarDef{min: 0, max: 0, result: dbl, doc: "E(): e",
		eval3: func(*Scalar, types.Value, types.Value, types.Value) (types.Value, error) {
			return types.DoubleValue(math.E), nil
		}}
	m["SIGN"] = &scalarDef{min: 1, max: 1, args: num, result: firstArgType, doc: "SIGN(x): -1, 0 or 1, in x's type",
		eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
			if a.Kind() == types.KindDouble {
				f := a.Float()
				switch {
				case f > 0:
					return types.DoubleValue(1), nil
				case f < 0:
					return types.DoubleValue(-1), nil
				}
				return a, nil
			}
			n := a.Int()
			return intOfKind(a.Kind(), int64(min(max(n, -1), 1))), nil
		}}
	m["ROUND"] = &scalarDef{min: 1, max: 2, args: []argClass{aNum, aInt}, result: firstArgType, eval3: evalRound(false),
		doc: "ROUND(x [, d]): x rounded half away from zero to d decimal places (default 0), in x's type"}
	m["TRUNCATE"] = &scalarDef{min: 1, max: 2, args: []argClass{aNum, aInt}, result: firstArgType, eval3: evalRound(true),
		doc: "TRUNCATE(x [, d]): x cut toward zero to d decimal places (default 0), in x's type"}
	m["RAND"] = &scalarDef{min: 0, max: 1, args: []argClass{aInt}, result: func([]Expr) (types.Type, error) {
		return types.Type{Kind: types.KindDouble, NotNull: true}, nil
	}, volatile: true, evalN: evalRand(false),
		prepare: prepareRand, doc: "RAND([seed]): a random DOUBLE in [0, 1); with a seed, the same sequence each run"}
	m["RAND_INTEGER"] = &scalarDef{min: 1, max: 2, args: []argClass{aInt}, result: func(args []Expr) (types.Type, error) {
		return types.Type{Kind: types.KindInt, NotNull: args[len(args)-1].Type().NotNull}, nil
	}, volatile: true, evalN: evalRand(true),
		prepare: prepareRand, doc: "RAND_INTEGER([seed,] n): a random INT in [0, n); with a seed, the same sequence each run"}
}

func intOfKind(k types.Kind, n int64) types.Value {
	if k == types.KindInt {
		return types.IntValue(n)
	}
	return types.BigIntValue(n)
}

// pow10 holds the powers of ten an int64 can hold.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// evalRound is ROUND (half away from zero, as Java's HALF_UP) or TRUNCATE
// (toward zero) to d decimal places, d < 0 rounding to tens, hundreds, ...
func evalRound(trunc bool) func(*Scalar, types.Value, types.Value, types.Value) (types.Value, error) {
	return func(s *Scalar, a, b, _ types.Value) (types.Value, error) {
		d := int64(0)
		if len(s.Args) == 2 {
			d = b.Int()
		}
		if a.Kind() == types.KindDouble {
			return types.DoubleValue(roundFloat(a.Float(), d, trunc)), nil
		}
		n := a.Int()
		if d >= 0 {
			return a, nil
		}
		if -d >= int64(len(pow10)) {
			return intOfKind(a.Kind(), 0), nil
		}
		p := pow10[-d]
		q, r := n/p, n%p
		if !trunc && (r >= p/2+p%2 || r <= -(p/2+p%2)) {
			if r > 0 {
				q++
			} else {
				q--
			}
		}
		res := q * p
		if q != 0 && res/p != q || a.Kind() == types.KindInt && (res > math.MaxInt32 || res < math.MinInt32) {
			return types.Value{}, fmt.Errorf("%s(%d, %d): the result does not fit %s", s.Name, n, d, a.Kind())
		}
		return intOfKind(a.Kind(), res), nil
	}
}

// roundFloat rounds f to d decimal places through its shortest decimal
// text, so that ROUND(2.675, 2) is 2.68 as the decimal 2.675 would give.
func roundFloat(f float64, d int64, trunc bool) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || d > 300 {
		return f
	}
	if d < -308 {
		return 0
	}
	p := math.Pow(10, float64(d))
	x := f * p
	var r float64
	if trunc {
		r = math.Trunc(x)
	} else {
		r = math.Round(x)
		// x may sit just below .5 although the decimal f is exactly at .5
		// (2.675 * 100 = 267.49999...): decide on the decimal text.
		if frac := math.Abs(x - math.Trunc(x)); d >= 0 && frac > 0.49 && frac < 0.5 {
			var buf [40]byte
			s := strconv.AppendFloat(buf[:0], f, 'f', -1, 64)
			if dot := bytes.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 == int(d)+1 && s[len(s)-1] == '5' {
				r = math.Trunc(x) + math.Copysign(1, x)
			}
		}
	}
	if math.IsInf(p, 0) || p == 0 {
		return f
	}
	return r / p
}

// randState is the generator of a seeded RAND call, shared by the
// subtasks that evaluate it.
type randState struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func prepareRand(s *Scalar) error {
	if s.Name == "RAND" && len(s.Args) == 1 || s.Name == "RAND_INTEGER" && len(s.Args) == 2 {
		v, ok := s.constArg(0)
		if !ok {
			return &ArgError{Arg: 0, Err: fmt.Errorf("%s: the seed must be a constant", s.Name)}
		}
		seed := uint64(v.Int())
		s.state = &randState{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	}
	return nil
}

// evalRand is RAND or (integer) RAND_INTEGER.
func evalRand(integer bool) func(*Scalar, []types.Value) (types.Value, error) {
	return func(s *Scalar, row []types.Value) (types.Value, error) {
		bound := int64(0)
		if integer {
			bv, err := s.Args[len(s.Args)-1].Eval(row)
			if err != nil || bv.IsNull() {
				return types.Value{}, err
			}
			if bound = bv.Int(); bound <= 0 {
				return types.Value{}, fmt.Errorf("RAND_INTEGER: the bound must be positive, got %d", bound)
			}
		}
		var f float64
		var n int64
		if st, ok := s.state.(*randState); ok {
			st.mu.Lock()
			if integer {
				n = st.rng.Int64N(bound)
			} else {
				f = st.rng.Float64()
			}
			st.mu.Unlock()
		} else if integer {
			n = rand.Int64N(bound)
		} else {
			f = rand.Float64()
		}
		if integer {
			return types.IntValue(n), nil
		}
		return types.DoubleValue(f), nil
	}
}
