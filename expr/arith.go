package expr

import (
	"errors"
	"fmt"
	"math"

	"github.com/weir-sql/weir/types"
)

// ErrDivisionByZero is the run-time error of an integer division or modulo by zero.
var ErrDivisionByZero = errors.New("division by zero")

// ErrOverflow is the run-time error of a result that does not fit its
// type: integer + - * and negation, a narrowing CAST, a DECIMAL whose
// digits exceed its precision.
var ErrOverflow = errors.New("numeric overflow")

// Source names an expression in run-time errors, e.g. "'a + 1' at line
// 1:8". It is a function so that the text is made only when an error
// happens.
type Source func() string

// located wraps a run-time error with where the expression is written, if known.
func located(src Source, err error) error {
	if err == nil || src == nil {
		return err
	}
	return fmt.Errorf("%s: %w", src(), err)
}

type arithMode uint8

const (
	modeInt      arithMode = iota // INT result: computed in int64, checked against 32 bits
	modeBigInt                    // BIGINT result: int64, overflow checked
	modeDouble                    // DOUBLE result
	modeTsIv                      // TIMESTAMP ± INTERVAL
	modeIvTs                      // INTERVAL + TIMESTAMP
	modeInterval                  // INTERVAL ± INTERVAL
	modeSmallInt                  // TINYINT or SMALLINT result: int64, checked against the kind's bounds
	modeFloat                     // FLOAT result: computed in float64, rounded to float32
	modeDecimal                   // DECIMAL result: exact (decimalOp)
)

// Arith is L op R for op in + - * / %. Types promote as in Flink: the
// wider of two integer types (TINYINT < SMALLINT < INT < BIGINT); with a
// DECIMAL, a DECIMAL by DecimalResultType's rules (exact, rounded HALF_UP
// to its scale, an error if it does not fit its precision); with a FLOAT,
// FLOAT; with a DOUBLE, DOUBLE. Integer
// overflow is a run-time error wrapping ErrOverflow (Flink wraps around
// silently; Weir is stricter, as standard SQL is); integer division or
// modulo by zero fails with ErrDivisionByZero; DOUBLE division by zero gives
// ±Infinity or NaN. TIMESTAMP ± INTERVAL gives a TIMESTAMP.
type Arith struct {
	Op   string
	L, R Expr
	t    types.Type
	mode arithMode
	// Src names the expression in run-time errors, e.g. "'a + 1' at
	// line 1:8"; set by the planner, kept by WithChildren.
	Src Source
}

var _ Node = (*Arith)(nil)

// NewArith type-checks and returns L op R.
func NewArith(op string, l, r Expr) (Expr, error) {
	switch op {
	case "+", "-", "*", "/", "%":
	default:
		return nil, fmt.Errorf("unknown arithmetic operator %q", op)
	}
	lt, rt := l.Type(), r.Type()
	lk, rk := lt.Kind, rt.Kind
	if lk == types.KindNull {
		lk = rk
	}
	if rk == types.KindNull {
		rk = lk
	}
	a := &Arith{Op: op, L: l, R: r}
	nn := !nullable(lt, rt)
	switch {
	case lk.IsNumeric() && rk.IsNumeric():
		k := lk
		if numericRank(rk) > numericRank(k) {
			k = rk
		}
		a.t = types.Type{Kind: k, NotNull: nn}
		switch k {
		case types.KindInt:
			a.mode = modeInt
		case types.KindBigInt:
			a.mode = modeBigInt
		case types.KindTinyInt, types.KindSmallInt:
			a.mode = modeSmallInt
		case types.KindFloat:
			a.mode = modeFloat
		case types.KindDecimal:
			a.mode = modeDecimal
			a.t = DecimalResultType(op[0], types.Type{Kind: lk, P: lt.P, S: lt.S}, types.Type{Kind: rk, P: rt.P, S: rt.S})
			if lt.Kind == types.KindNull {
				a.t = DecimalResultType(op[0], rt, rt)
			} else if rt.Kind == types.KindNull {
				a.t = DecimalResultType(op[0], lt, lt)
			}
			a.t.NotNull = nn
		default:
			a.mode = modeDouble
		}
	case lk.IsTimestamp() && rk == types.KindInterval && (op == "+" || op == "-"):
		a.t, a.mode = types.Type{Kind: lk, NotNull: nn}, modeTsIv
	case lk == types.KindInterval && rk.IsTimestamp() && op == "+":
		a.t, a.mode = types.Type{Kind: rk, NotNull: nn}, modeIvTs
	case lk == types.KindInterval && rk == types.KindInterval && (op == "+" || op == "-"):
		a.t, a.mode = types.Type{Kind: types.KindInterval, NotNull: nn}, modeInterval
	default:
		return nil, fmt.Errorf("cannot apply '%s' to %s and %s", op, lt.Kind, rt.Kind)
	}
	return a, nil
}

// Type returns the promoted result type.
func (a *Arith) Type() types.Type { return a.t }

// String renders the expression as Flink does: +(a, b).
func (a *Arith) String() string { return Format(a) }

// Children returns L and R.
func (a *Arith) Children() []Expr { return []Expr{a.L, a.R} }

// WithChildren rebuilds the operation.
func (a *Arith) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity(a.Op, kids, 2); err != nil {
		return nil, err
	}
	x, err := NewArith(a.Op, kids[0], kids[1])
	if err == nil {
		x.(*Arith).Src = a.Src
	}
	return x, err
}

// Eval computes the operation; NULL if either operand is NULL.
func (a *Arith) Eval(row []types.Value) (types.Value, error) {
	l, err := a.L.Eval(row)
	if err != nil || l.IsNull() {
		return types.Value{}, err
	}
	r, err := a.R.Eval(row)
	if err != nil || r.IsNull() {
		return types.Value{}, err
	}
	switch a.mode {
	case modeInt:
		n, err := intOp(a.Op[0], l.Int(), r.Int())
		if err == nil && n != int64(int32(n)) {
			err = overflowErr(l, a.Op, r, types.KindInt)
		}
		if err != nil {
			return types.Value{}, located(a.Src, err)
		}
		return types.IntValue(n), nil
	case modeBigInt:
		n, err := intOp(a.Op[0], l.Int(), r.Int())
		if err == errOverflow64 {
			err = overflowErr(l, a.Op, r, types.KindBigInt)
		}
		if err != nil {
			return types.Value{}, located(a.Src, err)
		}
		return types.BigIntValue(n), nil
	case modeDouble:
		return types.DoubleValue(floatOp(a.Op[0], l.Float(), r.Float())), nil
	case modeSmallInt:
		n, err := intOp(a.Op[0], l.Int(), r.Int())
		if lo, hi := a.t.Kind.IntegerBounds(); err == nil && (n < lo || n > hi) {
			err = overflowErr(l, a.Op, r, a.t.Kind)
		}
		if err != nil {
			return types.Value{}, located(a.Src, err)
		}
		return types.BigIntValue(n).WithKind(a.t.Kind), nil
	case modeFloat:
		return types.FloatValue(floatOp(a.Op[0], l.Float(), r.Float())), nil
	case modeDecimal:
		v, err := decimalOp(a.Op[0], l, r, a.t)
		if err != nil {
			return types.Value{}, located(a.Src, err)
		}
		return v, nil
	case modeTsIv:
		if a.Op == "-" {
			return types.TimestampValue(l.Int() - r.Int()).WithKind(a.t.Kind), nil
		}
		return types.TimestampValue(l.Int() + r.Int()).WithKind(a.t.Kind), nil
	case modeIvTs:
		return types.TimestampValue(l.Int() + r.Int()).WithKind(a.t.Kind), nil
	default: // modeInterval
		if a.Op == "-" {
			return types.IntervalValue(l.Int() - r.Int()), nil
		}
		return types.IntervalValue(l.Int() + r.Int()), nil
	}
}

// errOverflow64 is intOp's signal that the int64 result overflowed.
var errOverflow64 = errors.New("int64 overflow")

func overflowErr(l types.Value, op string, r types.Value, k types.Kind) error {
	return fmt.Errorf("%w: %d %s %d does not fit in %s", ErrOverflow, l.Int(), op, r.Int(), k)
}

// intOp computes x op y in int64; errOverflow64 if it does not fit.
func intOp(op byte, x, y int64) (int64, error) {
	switch op {
	case '+':
		s := x + y
		if (s > x) != (y > 0) {
			return 0, errOverflow64
		}
		return s, nil
	case '-':
		d := x - y
		if (d < x) != (y > 0) {
			return 0, errOverflow64
		}
		return d, nil
	case '*':
		if x == 0 || y == 0 {
			return 0, nil
		}
		p := x * y
		if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return 0, errOverflow64
		}
		return p, nil
	case '/':
		if y == 0 {
			return 0, ErrDivisionByZero
		}
		if y == -1 && x == math.MinInt64 {
			return 0, errOverflow64
		}
		return x / y, nil
	default:
		if y == 0 {
			return 0, ErrDivisionByZero
		}
		return x % y, nil
	}
}

func floatOp(op byte, x, y float64) float64 {
	switch op {
	case '+':
		return x + y
	case '-':
		return x - y
	case '*':
		return x * y
	case '/':
		return x / y
	default:
		return math.Mod(x, y)
	}
}

// Neg is unary minus.
type Neg struct {
	X   Expr
	Src Source // names the expression in run-time errors (see Arith.Src)
}

var _ Node = (*Neg)(nil)

// NewNeg returns -x for a numeric or interval x.
func NewNeg(x Expr) (Expr, error) {
	k := x.Type().Kind
	if !k.IsNumeric() && k != types.KindInterval && k != types.KindNull {
		return nil, fmt.Errorf("cannot negate %s", k)
	}
	return &Neg{X: x}, nil
}

// Type returns the operand's type.
func (n *Neg) Type() types.Type { return n.X.Type() }

// String renders -(x).
func (n *Neg) String() string { return Format(n) }

// Children returns the operand.
func (n *Neg) Children() []Expr { return []Expr{n.X} }

// WithChildren rebuilds the negation.
func (n *Neg) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("-", kids, 1); err != nil {
		return nil, err
	}
	x, err := NewNeg(kids[0])
	if err == nil {
		x.(*Neg).Src = n.Src
	}
	return x, err
}

// Eval negates; the negation of the smallest integer overflows (an error).
func (n *Neg) Eval(row []types.Value) (types.Value, error) {
	v, err := n.X.Eval(row)
	if err != nil || v.IsNull() {
		return types.Value{}, err
	}
	switch v.Kind() {
	case types.KindDouble:
		return types.DoubleValue(-v.Float()), nil
	case types.KindFloat:
		return types.FloatValue(-v.Float()), nil
	case types.KindDecimal:
		d, err := negDecimal(v)
		return d, located(n.Src, err)
	case types.KindTinyInt, types.KindSmallInt:
		if lo, _ := v.Kind().IntegerBounds(); v.Int() == lo {
			return types.Value{}, located(n.Src, fmt.Errorf("%w: -(%d) does not fit in %s", ErrOverflow, v.Int(), v.Kind()))
		}
		return types.BigIntValue(-v.Int()).WithKind(v.Kind()), nil
	case types.KindInt:
		if v.Int() == math.MinInt32 {
			return types.Value{}, located(n.Src, fmt.Errorf("%w: -(%d) does not fit in INT", ErrOverflow, v.Int()))
		}
		return types.IntValue(-v.Int()), nil
	}
	if v.Int() == math.MinInt64 {
		return types.Value{}, located(n.Src, fmt.Errorf("%w: -(%d) does not fit in %s", ErrOverflow, v.Int(), v.Kind()))
	}
	return types.BigIntValue(-v.Int()).WithKind(v.Kind()), nil
}
