package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sql/weir/types"
)

// Cast is CAST(X AS T), or TRY_CAST(X AS T) with Try set: a value that
// does not convert gives NULL instead of an error. Supported: between the
// numeric kinds (DOUBLE to integer truncates toward zero; a value that does
// not fit the target type is an error wrapping ErrOverflow), numbers
// and BOOLEAN both ways, anything to VARCHAR, VARCHAR to anything (a
// malformed string is a run-time error naming it), TIMESTAMP ↔ VARCHAR
// as 'yyyy-mm-dd hh:mm:ss.fff', and TIMESTAMP_LTZ ↔ TIMESTAMP and
// TIMESTAMP_LTZ ↔ VARCHAR as local times in the time zone Loc (the
// session's), as Flink converts them.
type Cast struct {
	X   Expr
	T   types.Type
	Loc *time.Location // the session's time zone; nil: UTC
	Try bool           // TRY_CAST: NULL instead of a conversion error
	Src Source         // names the expression in run-time errors (see Arith.Src)
}

var _ Node = (*Cast)(nil)

// NewCast returns CAST(x AS t), or an error if the conversion is not
// supported; TIMESTAMP_LTZ converts in UTC (see NewCastIn).
func NewCast(x Expr, t types.Type) (Expr, error) { return NewCastIn(x, t, nil) }

// NewCastIn returns CAST(x AS t) with TIMESTAMP_LTZ values converted as
// local times in loc (nil: UTC).
func NewCastIn(x Expr, t types.Type, loc *time.Location) (Expr, error) {
	from, to := x.Type().Kind, t.Kind
	ok := from == to || from == types.KindNull || to == types.KindVarchar || from == types.KindVarchar ||
		(from.IsTimestamp() && to.IsTimestamp()) ||
		(from.IsNumeric() && to.IsNumeric()) ||
		(from.IsNumeric() && to == types.KindBoolean) || (from == types.KindBoolean && to.IsNumeric())
	if !ok || to == types.KindNull {
		return nil, fmt.Errorf("cannot cast %s to %s", from, to)
	}
	t.NotNull = x.Type().NotNull
	t.Attr = types.NoTimeAttr
	return &Cast{X: x, T: t, Loc: loc}, nil
}

// NewTryCast returns TRY_CAST(x AS t): as NewCastIn, but a value that does
// not convert gives NULL (so the result is nullable).
func NewTryCast(x Expr, t types.Type, loc *time.Location) (Expr, error) {
	e, err := NewCastIn(x, t, loc)
	if err != nil {
		return nil, err
	}
	c := e.(*Cast)
	c.Try = true
	c.T.NotNull = false
	return c, nil
}

// Type is the target type.
func (c *Cast) Type() types.Type { return c.T }

// String renders CAST(x AS T).
func (c *Cast) String() string { return Format(c) }

// Children returns X.
func (c *Cast) Children() []Expr { return []Expr{c.X} }

// WithChildren rebuilds the cast.
func (c *Cast) WithChildren(kids []Expr) (Expr, error) {
	if err := checkArity("CAST", kids, 1); err != nil {
		return nil, err
	}
	var e Expr
	var err error
	if c.Try {
		e, err = NewTryCast(kids[0], c.T, c.Loc)
	} else {
		e, err = NewCastIn(kids[0], c.T, c.Loc)
	}
	if err == nil {
		e.(*Cast).Src = c.Src
	}
	return e, err
}

// Eval converts.
func (c *Cast) Eval(row []types.Value) (types.Value, error) {
	v, err := c.X.Eval(row)
	if err != nil || v.IsNull() {
		return types.Value{}, err
	}
	r, err := CastValueIn(v, c.T.Kind, c.Loc)
	if err != nil {
		if c.Try {
			return types.Value{}, nil
		}
		return types.Value{}, located(c.Src, err)
	}
	return r, nil
}

// CastValue converts a non-NULL value to kind to (see Cast), with
// TIMESTAMP_LTZ values as UTC times.
func CastValue(v types.Value, to types.Kind) (types.Value, error) {
	return CastValueIn(v, to, nil)
}

// CastValueIn converts a non-NULL value to kind to (see Cast), with
// TIMESTAMP_LTZ values as local times in loc (nil: UTC).
func CastValueIn(v types.Value, to types.Kind, loc *time.Location) (types.Value, error) {
	from := v.Kind()
	if from == to || from == types.KindNull {
		return v, nil
	}
	if loc == nil {
		loc = time.UTC
	}
	switch to {
	case types.KindVarchar:
		if from == types.KindTimestampLTZ {
			return types.StringValue(string(v.AppendTextIn(nil, loc))), nil
		}
		return types.StringValue(castToString(v)), nil
	case types.KindTimestampLTZ:
		switch from {
		case types.KindTimestamp:
			return fromWall(time.UnixMilli(v.Int()).UTC(), types.KindTimestampLTZ, loc), nil
		case types.KindVarchar:
			ms, err := ParseTimestamp(v.Str())
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to TIMESTAMP_LTZ(3): want 'yyyy-mm-dd hh:mm:ss.fff'", v.Str())
			}
			return fromWall(time.UnixMilli(ms).UTC(), types.KindTimestampLTZ, loc), nil
		}
	case types.KindInt, types.KindBigInt:
		var n int64
		switch {
		case from == types.KindDouble:
			f := math.Trunc(v.Float())
			// 2^63 is the first float64 above MaxInt64; -2^63 is exact.
			if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
				return types.Value{}, fmt.Errorf("%w: %s does not fit in %s", ErrOverflow, types.AppendDouble(nil, v.Float()), to)
			}
			n = int64(f)
		case from == types.KindVarchar:
			s := strings.TrimSpace(v.Str())
			p, err := strconv.ParseInt(s, 10, 64)
			if err != nil || (to == types.KindInt && (p < math.MinInt32 || p > math.MaxInt32)) {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to %s", v.Str(), to)
			}
			n = p
		default: // INT, BIGINT, BOOLEAN
			n = v.Int()
		}
		if to == types.KindInt {
			if n != int64(int32(n)) {
				return types.Value{}, fmt.Errorf("%w: %d does not fit in INT", ErrOverflow, n)
			}
			return types.IntValue(n), nil
		}
		return types.BigIntValue(n), nil
	case types.KindDouble:
		if from == types.KindVarchar {
			f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to DOUBLE", v.Str())
			}
			return types.DoubleValue(f), nil
		}
		return types.DoubleValue(v.Float()), nil
	case types.KindBoolean:
		if from == types.KindVarchar {
			switch strings.ToLower(strings.TrimSpace(v.Str())) {
			case "true":
				return types.BoolValue(true), nil
			case "false":
				return types.BoolValue(false), nil
			}
			return types.Value{}, fmt.Errorf("cannot cast '%s' to BOOLEAN", v.Str())
		}
		return types.BoolValue(v.Float() != 0), nil
	case types.KindTimestamp:
		if from == types.KindTimestampLTZ {
			return fromWall(time.UnixMilli(v.Int()).In(loc), types.KindTimestamp, loc), nil
		}
		if from == types.KindVarchar {
			ms, err := ParseTimestamp(v.Str())
			if err != nil {
				return types.Value{}, err
			}
			return types.TimestampValue(ms), nil
		}
	case types.KindInterval:
		if from == types.KindVarchar {
			ms, err := strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 64)
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to INTERVAL", v.Str())
			}
			return types.IntervalValue(ms), nil
		}
	}
	return types.Value{}, fmt.Errorf("cannot cast %s to %s", from, to)
}

func castToString(v types.Value) string {
	if v.Kind() == types.KindBoolean {
		if v.Bool() {
			return "TRUE"
		}
		return "FALSE"
	}
	return v.String()
}

// ParseTimestamp parses 'yyyy-mm-dd[ hh:mm[:ss[.f...]]]' (or with a 'T'
// separator) as UTC and returns milliseconds since the epoch.
func ParseTimestamp(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"} {
		if p, err := time.Parse(layout, t); err == nil {
			return p.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("cannot cast '%s' to TIMESTAMP(3): want 'yyyy-mm-dd hh:mm:ss.fff'", s)
}
