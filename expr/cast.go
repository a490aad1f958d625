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
	if isComposite(from) && isComposite(to) {
		if err := castableComposite(x.Type(), t); err != nil {
			return nil, err
		}
		t.NotNull = x.Type().NotNull
		return &Cast{X: x, T: t, Loc: loc}, nil
	}
	if isComposite(to) && from != types.KindNull {
		if from == types.KindVarchar {
			// Flink's casting rules have none from a string to a
			// constructed type either.
			return nil, fmt.Errorf("cannot cast %s to %s: a string does not convert to a ROW, ARRAY or MAP (as in Flink); build one with ROW(…), ARRAY[…] or MAP[…], or read it from json", x.Type().Name(), t.Name())
		}
		return nil, fmt.Errorf("cannot cast %s to %s", x.Type().Name(), t.Name())
	}
	ok := from == to || from == types.KindNull || to == types.KindVarchar || from == types.KindVarchar ||
		(from.IsTimestamp() && to.IsTimestamp()) ||
		(from.IsTimestamp() && (to == types.KindDate || to == types.KindTime)) ||
		(from == types.KindDate && to.IsTimestamp()) ||
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
	var r types.Value
	if c.T.Comp != nil {
		r, err = castComposite(v, c.X.Type(), c.T)
	} else {
		r, err = CastTo(v, c.T, c.Loc)
	}
	if err != nil {
		if c.Try {
			return types.Value{}, nil
		}
		return types.Value{}, located(c.Src, err)
	}
	return r, nil
}

// CastTo converts a non-NULL value to type t (see Cast): as CastValueIn,
// with a DECIMAL target rounded HALF_UP to t's scale and checked against
// its precision.
func CastTo(v types.Value, t types.Type, loc *time.Location) (types.Value, error) {
	from := v.Kind()
	switch {
	case t.Kind == types.KindDecimal:
		p, s := int(t.P), int(t.S)
		switch {
		case from == types.KindDecimal:
			r, err := types.Rescale(v, s)
			if err != nil {
				return types.Value{}, err
			}
			return types.CheckDecimal(r, p)
		case from.IsInteger():
			r, err := types.Rescale(types.DecimalValue(v.Int(), 0), s)
			if err != nil {
				return types.Value{}, err
			}
			return types.CheckDecimal(r, p)
		case from.IsFloat():
			return types.DecimalFromFloat(v.Float(), p, s)
		case from == types.KindVarchar:
			return types.ParseDecimal(v.Str(), p, s)
		case from == types.KindBoolean:
			return types.CheckDecimal(types.DecimalValue(int64(v.Int())*types.Pow10(min(s, 18)), s), p)
		}
		return types.Value{}, fmt.Errorf("cannot cast %s to %s", from, t.Name())
	case from == types.KindDecimal && t.Kind.IsInteger():
		// Truncates toward zero, as Flink.
		if n, ok := v.Unscaled(); ok {
			q := int64(0)
			if sc := v.Scale(); sc <= 18 {
				q = n / types.Pow10(sc)
			}
			lo, hi := t.Kind.IntegerBounds()
			if q < lo || q > hi {
				return types.Value{}, fmt.Errorf("%w: %s does not fit in %s", ErrOverflow, v, t.Kind)
			}
			return types.BigIntValue(q).WithKind(t.Kind), nil
		}
		u := v.BigUnscaled()
		u.Quo(u, pow10Big(v.Scale()))
		lo, hi := t.Kind.IntegerBounds()
		if !u.IsInt64() || u.Int64() < lo || u.Int64() > hi {
			return types.Value{}, fmt.Errorf("%w: %s does not fit in %s", ErrOverflow, v, t.Kind)
		}
		return types.BigIntValue(u.Int64()).WithKind(t.Kind), nil
	case from == types.KindDecimal && t.Kind == types.KindBoolean:
		return types.BoolValue(v.Float() != 0), nil
	}
	return CastValueIn(v, t.Kind, loc)
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
		case types.KindDate:
			return fromWall(time.UnixMilli(v.Int()*86_400_000).UTC(), types.KindTimestampLTZ, loc), nil
		case types.KindTimestamp:
			return fromWall(time.UnixMilli(v.Int()).UTC(), types.KindTimestampLTZ, loc), nil
		case types.KindVarchar:
			ms, err := ParseTimestamp(v.Str())
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to TIMESTAMP_LTZ(3): want 'yyyy-mm-dd hh:mm:ss.fff'", v.Str())
			}
			return fromWall(time.UnixMilli(ms).UTC(), types.KindTimestampLTZ, loc), nil
		}
	case types.KindInt, types.KindBigInt, types.KindTinyInt, types.KindSmallInt:
		var n int64
		switch {
		case from.IsFloat():
			f := math.Trunc(v.Float())
			// 2^63 is the first float64 above MaxInt64; -2^63 is exact.
			if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
				return types.Value{}, fmt.Errorf("%w: %s does not fit in %s", ErrOverflow, types.AppendDouble(nil, v.Float()), to)
			}
			n = int64(f)
		case from == types.KindVarchar:
			s := strings.TrimSpace(v.Str())
			p, err := strconv.ParseInt(s, 10, 64)
			if lo, hi := to.IntegerBounds(); err != nil || p < lo || p > hi {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to %s", v.Str(), to)
			}
			n = p
		case from.IsInteger() || from == types.KindBoolean:
			n = v.Int()
		default:
			return types.Value{}, fmt.Errorf("cannot cast %s to %s", from, to)
		}
		if lo, hi := to.IntegerBounds(); n < lo || n > hi {
			return types.Value{}, fmt.Errorf("%w: %d does not fit in %s", ErrOverflow, n, to)
		}
		return types.BigIntValue(n).WithKind(to), nil
	case types.KindFloat:
		if from == types.KindVarchar {
			f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 32)
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to FLOAT", v.Str())
			}
			return types.FloatValue(f), nil
		}
		if from.IsNumeric() || from == types.KindBoolean {
			return types.FloatValue(v.Float()), nil
		}
	case types.KindDate:
		switch {
		case from == types.KindVarchar:
			d, err := ParseDate(v.Str())
			if err != nil {
				return types.Value{}, err
			}
			return types.DateValue(d), nil
		case from == types.KindTimestamp:
			return types.DateValue(floorDiv(v.Int(), 86_400_000)), nil
		case from == types.KindTimestampLTZ:
			w := fromWall(time.UnixMilli(v.Int()).In(loc), types.KindTimestamp, loc)
			return types.DateValue(floorDiv(w.Int(), 86_400_000)), nil
		}
	case types.KindTime:
		switch {
		case from == types.KindVarchar:
			ms, err := ParseTime(v.Str())
			if err != nil {
				return types.Value{}, err
			}
			return types.TimeValue(ms), nil
		case from == types.KindTimestamp:
			return types.TimeValue(floorMod(v.Int(), 86_400_000) / 1000 * 1000), nil
		case from == types.KindTimestampLTZ:
			w := fromWall(time.UnixMilli(v.Int()).In(loc), types.KindTimestamp, loc)
			return types.TimeValue(floorMod(w.Int(), 86_400_000) / 1000 * 1000), nil
		}
	case types.KindBytes:
		if from == types.KindVarchar {
			return types.BytesValue(v.Str()), nil // the UTF-8 bytes, as Flink
		}
	case types.KindDouble:
		if from == types.KindVarchar {
			f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot cast '%s' to DOUBLE", v.Str())
			}
			return types.DoubleValue(f), nil
		}
		if from.IsNumeric() || from == types.KindBoolean {
			return types.DoubleValue(v.Float()), nil
		}
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
		if from.IsNumeric() {
			return types.BoolValue(v.Float() != 0), nil
		}
	case types.KindTimestamp:
		if from == types.KindDate {
			return types.TimestampValue(v.Int() * 86_400_000), nil
		}
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
	if v.Kind() == types.KindBytes {
		return v.Str() // the bytes as UTF-8 text, as Flink
	}
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

// ParseDate parses 'yyyy-mm-dd' and returns days since 1970-01-01.
func ParseDate(s string) (int64, error) {
	t, err := time.Parse("2006-1-2", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("cannot cast '%s' to DATE: want 'yyyy-mm-dd'", s)
	}
	return floorDiv(t.Unix(), 86_400), nil
}

// ParseTime parses 'hh:mm[:ss[.fff]]' and returns milliseconds since
// midnight (TIME(0): fractions are dropped).
func ParseTime(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, layout := range []string{"15:04:05.999999999", "15:04"} {
		if p, err := time.Parse(layout, t); err == nil {
			return int64(p.Hour()*3_600_000 + p.Minute()*60_000 + p.Second()*1000), nil
		}
	}
	return 0, fmt.Errorf("cannot cast '%s' to TIME: want 'hh:mm:ss'", s)
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
