package expr

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weir-sql/weir/types"
)

// This file holds Flink's time functions. Calendar arithmetic on a
// TIMESTAMP works on its wall-clock fields (a TIMESTAMP is a local date
// and time stored as if in UTC); on a TIMESTAMP_LTZ it works on the local
// time of the session's time zone, bound at planning (table.local-time-zone).

type tfn uint8

const (
	tfProctime tfn = iota
	tfNow
	tfLocalTimestamp
	tfCurrentWatermark
	tfToTimestampLTZ
	tfToTimestamp
	tfDateFormat
	tfExtract
	tfFloor
	tfCeil
	tfTimestampAdd
	tfTimestampDiff
	tfUnixTimestamp
	tfFromUnixtime
	tfCurrentDate
)

// timeFuncs maps the names of the time functions to their kind; the
// field-extracting ones (HOUR(ts), ...) are EXTRACT with a unit.
var timeFuncs = map[string]tfn{
	"PROCTIME": tfProctime, "NOW": tfNow, "CURRENT_TIMESTAMP": tfNow,
	"LOCALTIMESTAMP": tfLocalTimestamp, "CURRENT_WATERMARK": tfCurrentWatermark,
	"CURRENT_DATE":     tfCurrentDate,
	"TO_TIMESTAMP_LTZ": tfToTimestampLTZ, "TO_TIMESTAMP": tfToTimestamp,
	"DATE_FORMAT": tfDateFormat, "EXTRACT": tfExtract,
	"TIMESTAMPADD": tfTimestampAdd, "TIMESTAMPDIFF": tfTimestampDiff,
	"UNIX_TIMESTAMP": tfUnixTimestamp, "FROM_UNIXTIME": tfFromUnixtime,
	"YEAR": tfExtract, "QUARTER": tfExtract, "MONTH": tfExtract, "WEEK": tfExtract,
	"DAYOFYEAR": tfExtract, "DAYOFMONTH": tfExtract, "DAYOFWEEK": tfExtract,
	"HOUR": tfExtract, "MINUTE": tfExtract, "SECOND": tfExtract,
}

// fieldFuncUnits are the units of the field functions: HOUR(ts) is
// EXTRACT(HOUR FROM ts).
var fieldFuncUnits = map[string]string{
	"YEAR": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "WEEK": "WEEK",
	"DAYOFYEAR": "DOY", "DAYOFMONTH": "DAY", "DAYOFWEEK": "DOW",
	"HOUR": "HOUR", "MINUTE": "MINUTE", "SECOND": "SECOND",
}

// BareTimeFunctions are the functions Flink calls without parentheses.
var bareTimeFunctions = map[string]bool{"CURRENT_TIMESTAMP": true, "LOCALTIMESTAMP": true, "CURRENT_DATE": true}

// IsTimeFunction reports whether name (upper case) is a time function
// NewTimeCall knows.
func IsTimeFunction(name string) bool { _, ok := timeFuncs[name]; return ok }

// IsBareTimeFunction reports whether name (upper case) is a time function
// written without parentheses (CURRENT_TIMESTAMP, LOCALTIMESTAMP).
func IsBareTimeFunction(name string) bool { return bareTimeFunctions[name] }

// TimeFunctionNames returns the names of the time functions, sorted.
func TimeFunctionNames() []string {
	out := make([]string, 0, len(timeFuncs))
	for n := range timeFuncs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// UnitArg reports whether argument i of time function name is a time unit
// (a word such as DAY, not an expression).
func UnitArg(name string, i int) bool {
	switch name {
	case "EXTRACT", "TIMESTAMPADD", "TIMESTAMPDIFF":
		return i == 0
	case "FLOOR", "CEIL", "CEILING":
		return i == 1
	}
	return false
}

// ArgError is an error about one argument of a call (Arg, from 0), so
// that the planner can point at it.
type ArgError struct {
	Arg int
	Err error
}

func (e *ArgError) Error() string { return e.Err.Error() }
func (e *ArgError) Unwrap() error { return e.Err }

// Units per function.
var (
	extractUnits = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "DOY", "DOW", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "EPOCH"}
	floorUnits   = []string{"YEAR", "QUARTER", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"}
	addUnits     = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"}
)

// DefaultDateFormat is the format of TO_TIMESTAMP, UNIX_TIMESTAMP and
// FROM_UNIXTIME without one.
const DefaultDateFormat = "yyyy-MM-dd HH:mm:ss"

// TimeFunc is a call of a time function (see NewTimeCall).
type TimeFunc struct {
	Name string
	Unit string // EXTRACT, FLOOR, CEIL, TIMESTAMPADD, TIMESTAMPDIFF; upper case
	Args []Expr
	Loc  *time.Location
	f    tfn
	t    types.Type
	df   *DateFormat   // TO_TIMESTAMP, DATE_FORMAT, UNIX_TIMESTAMP, FROM_UNIXTIME
	memo *dfMemo       // DATE_FORMAT: the last result, by the pattern's finest unit
	wm   *atomic.Int64 // CURRENT_WATERMARK: the evaluating task's watermark; nil: NULL
	proc *int64        // PROCTIME: the evaluating operator's processing time (ms); nil: the clock
	// Src names the call in run-time errors (TO_TIMESTAMP_LTZ's overflow;
	// see Arith.Src).
	Src Source
}

var _ Node = (*TimeFunc)(nil)

// DateFormatOf reports whether e is DATE_FORMAT(c, f) of a column c and a
// literal format f, and returns c, the format's unit (milliseconds) and
// whether the unit holds for TIMESTAMP_LTZ values too: e gives the same
// text for the instants of one range [k*unit, (k+1)*unit) of a TIMESTAMP
// value in c, and of a TIMESTAMP_LTZ value when ltz (the session's time
// zone is UTC, so that its local time is the instant's). An operator may
// then keep e's last result with its range and take it for the next rows
// of c in that range instead of calling Eval (Eval's own memo, shared by
// the subtasks, costs calls and an atomic load a row); for other values
// (NULL, VARCHAR, a TIMESTAMP_LTZ without ltz) Eval must be called.
func DateFormatOf(e Expr) (col int, unit int64, ltz bool, ok bool) {
	c, ok := e.(*TimeFunc)
	if !ok || c.f != tfDateFormat || c.memo == nil || len(c.Args) != 2 {
		return 0, 0, false, false
	}
	arg, ok := c.Args[0].(*Column)
	if !ok || arg.Index < 0 || c.memo.unit <= 0 {
		return 0, 0, false, false
	}
	return arg.Index, c.memo.unit, c.Loc == time.UTC, true
}

// LTZMillisOf reports whether e is TO_TIMESTAMP_LTZ(c, p) of a column c and
// a literal precision p other than 0 and NULL, and returns c: for a value
// of an integer kind in column c, e's value is then
// types.TimestampLTZValue of it (milliseconds), as Eval gives it; for any
// other value (NULL, DOUBLE, DECIMAL) Eval must be called. A Calc copies
// such a source's rowtime so without an Eval call a row.
func LTZMillisOf(e Expr) (int, bool) {
	c, ok := e.(*TimeFunc)
	if !ok || c.f != tfToTimestampLTZ || c.memo != nil || len(c.Args) != 2 {
		return 0, false
	}
	col, ok := c.Args[0].(*Column)
	if !ok {
		return 0, false
	}
	p, ok := c.Args[1].(*Literal)
	if !ok || p.V.IsNull() || !p.V.Kind().IsInteger() || p.V.Int() == 0 {
		return 0, false
	}
	return col.Index, true
}

// NewTimeCall type-checks a call of time function name (upper case; FLOOR
// and CEIL with a unit too) with unit (for the functions that take one)
// and args, in the session's time zone loc. A format string must be a
// literal; a bad one is an *ArgError.
func NewTimeCall(name, unit string, args []Expr, loc *time.Location) (Expr, error) {
	if loc == nil {
		loc = time.UTC
	}
	f, ok := timeFuncs[name]
	switch name {
	case "FLOOR":
		f, ok = tfFloor, true
	case "CEIL", "CEILING":
		f, ok, name = tfCeil, true, "CEIL"
	}
	if !ok {
		return nil, fmt.Errorf("unknown function %s", name)
	}
	if u, field := fieldFuncUnits[name]; field {
		unit = u
	}
	c := &TimeFunc{Name: name, Unit: strings.ToUpper(unit), Args: args, Loc: loc, f: f}
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			if lo == hi {
				return fmt.Errorf("%s takes %d argument(s), got %d", name, lo, len(args))
			}
			return fmt.Errorf("%s takes %d to %d arguments, got %d", name, lo, hi, len(args))
		}
		return nil
	}
	kind := func(i int) types.Kind { return args[i].Type().Kind }
	wantTS := func(i int) error {
		if k := kind(i); !k.IsTimestamp() && k != types.KindNull {
			return &ArgError{i, fmt.Errorf("%s: argument %d has type %s, want TIMESTAMP(3) or TIMESTAMP_LTZ(3)", name, i+1, k)}
		}
		return nil
	}
	wantKinds := func(i int, what string, ok func(types.Kind) bool) error {
		if k := kind(i); !ok(k) && k != types.KindNull {
			return &ArgError{i, fmt.Errorf("%s: argument %d has type %s, want %s", name, i+1, k, what)}
		}
		return nil
	}
	wantUnit := func(units []string) error {
		for _, u := range units {
			if u == c.Unit {
				return nil
			}
		}
		return fmt.Errorf("%s: unknown time unit %s (units: %s)", name, c.Unit, strings.Join(units, ", "))
	}
	nn := !nullable(argTypes(args)...)
	tsKind := func(i int) types.Kind {
		if k := kind(i); k.IsTimestamp() {
			return k
		}
		return types.KindTimestamp
	}
	var err error
	switch f {
	case tfProctime:
		err = nargs(0, 0)
		c.t = types.Type{Kind: types.KindTimestampLTZ, NotNull: true, Attr: types.Proctime}
	case tfNow:
		err = nargs(0, 0)
		c.t = types.Type{Kind: types.KindTimestampLTZ, NotNull: true}
	case tfLocalTimestamp:
		err = nargs(0, 0)
		c.t = types.Type{Kind: types.KindTimestamp, NotNull: true}
	case tfCurrentDate:
		err = nargs(0, 0)
		c.t = types.Type{Kind: types.KindDate, NotNull: true}
	case tfCurrentWatermark:
		if err = nargs(1, 1); err == nil {
			if err = wantTS(0); err == nil && args[0].Type().Attr != types.Rowtime {
				err = &ArgError{0, fmt.Errorf("CURRENT_WATERMARK takes a rowtime attribute (the column of a WATERMARK FOR), not %s", Format(args[0]))}
			}
			c.t = types.Type{Kind: tsKind(0)}
		}
	case tfToTimestampLTZ:
		if err = nargs(2, 2); err == nil {
			if err = wantKinds(0, "a number", types.Kind.IsNumeric); err == nil {
				err = c.precisionArg()
			}
		}
		c.t = types.Type{Kind: types.KindTimestampLTZ, NotNull: args != nil && len(args) == 2 && args[0].Type().NotNull}
	case tfToTimestamp, tfUnixTimestamp:
		lo := 1
		if f == tfUnixTimestamp {
			lo = 0
		}
		if err = nargs(lo, 2); err == nil && len(args) > 0 {
			if err = wantKinds(0, "VARCHAR", func(k types.Kind) bool { return k == types.KindVarchar }); err == nil {
				c.df, err = c.formatArg(1)
			}
		}
		c.t = types.Type{Kind: types.KindTimestamp}
		if f == tfUnixTimestamp {
			c.t = types.Type{Kind: types.KindBigInt, NotNull: len(args) == 0}
		}
	case tfFromUnixtime:
		if err = nargs(1, 2); err == nil {
			if err = wantKinds(0, "an integer", types.Kind.IsInteger); err == nil {
				c.df, err = c.formatArg(1)
			}
		}
		c.t = types.Type{Kind: types.KindVarchar, NotNull: nn}
	case tfDateFormat:
		if err = nargs(2, 2); err == nil {
			if err = wantKinds(0, "a TIMESTAMP or a VARCHAR", func(k types.Kind) bool { return k.IsTimestamp() || k == types.KindVarchar }); err == nil {
				c.df, err = c.formatArg(1)
			}
		}
		if err == nil {
			c.memo = &dfMemo{unit: c.df.unit()}
		}
		c.t = types.Type{Kind: types.KindVarchar, NotNull: nn}
	case tfExtract:
		if err = nargs(1, 1); err == nil {
			if err = wantUnit(extractUnits); err == nil {
				err = wantTS(0)
			}
		}
		c.t = types.Type{Kind: types.KindBigInt, NotNull: nn}
	case tfFloor, tfCeil:
		if err = nargs(1, 1); err == nil {
			if err = wantUnit(floorUnits); err == nil {
				err = wantTS(0)
			}
			c.t = types.Type{Kind: tsKind(0), NotNull: nn}
		}
	case tfTimestampAdd:
		if err = nargs(2, 2); err == nil {
			if err = wantUnit(addUnits); err == nil {
				if err = wantKinds(0, "an integer", types.Kind.IsInteger); err == nil {
					err = wantTS(1)
				}
			}
			c.t = types.Type{Kind: tsKind(1), NotNull: nn}
		}
	case tfTimestampDiff:
		if err = nargs(2, 2); err == nil {
			if err = wantUnit(addUnits); err == nil {
				if err = wantTS(0); err == nil {
					err = wantTS(1)
				}
				if err == nil && kind(0) != kind(1) && kind(0) != types.KindNull && kind(1) != types.KindNull {
					err = fmt.Errorf("TIMESTAMPDIFF: arguments of types %s and %s; CAST one to the other's type", kind(0), kind(1))
				}
			}
		}
		c.t = types.Type{Kind: types.KindInt, NotNull: nn}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// precisionArg checks TO_TIMESTAMP_LTZ's precision: a literal 0 or 3.
func (c *TimeFunc) precisionArg() error {
	l, ok := c.Args[1].(*Literal)
	if !ok || !l.V.Kind().IsInteger() || (l.V.Int() != 0 && l.V.Int() != 3) {
		return &ArgError{1, errors.New("TO_TIMESTAMP_LTZ: the precision must be 0 (seconds) or 3 (milliseconds)")}
	}
	return nil
}

// formatArg compiles the format argument i (a string literal), or the
// default format when there is none.
func (c *TimeFunc) formatArg(i int) (*DateFormat, error) {
	if i >= len(c.Args) {
		if c.f == tfDateFormat {
			return nil, errors.New("DATE_FORMAT needs a format")
		}
		return CompileDateFormat(DefaultDateFormat)
	}
	l, ok := c.Args[i].(*Literal)
	if !ok || l.V.Kind() != types.KindVarchar {
		return nil, &ArgError{i, fmt.Errorf("%s: the format must be a string literal such as '%s'", c.Name, DefaultDateFormat)}
	}
	df, err := CompileDateFormat(l.V.Str())
	if err != nil {
		return nil, &ArgError{i, fmt.Errorf("%s: %w", c.Name, err)}
	}
	return df, nil
}

// Type returns the result type.
func (c *TimeFunc) Type() types.Type { return c.t }

// Children returns the arguments.
func (c *TimeFunc) Children() []Expr { return c.Args }

// WithChildren rebuilds the call (unbound: see BindWatermark and
// BindProctime).
func (c *TimeFunc) WithChildren(kids []Expr) (Expr, error) {
	e, err := NewTimeCall(c.Name, c.Unit, kids, c.Loc)
	if tf, ok := e.(*TimeFunc); ok {
		tf.Src = c.Src
	}
	return e, err
}

// String renders the call as SQL writes it.
func (c *TimeFunc) String() string {
	var b strings.Builder
	switch c.f {
	case tfExtract:
		b.WriteString("EXTRACT(" + c.Unit + " FROM ")
		writeExpr(&b, c.Args[0])
		b.WriteByte(')')
	case tfFloor, tfCeil:
		b.WriteString(c.Name + "(")
		writeExpr(&b, c.Args[0])
		b.WriteString(" TO " + c.Unit + ")")
	case tfTimestampAdd, tfTimestampDiff:
		b.WriteString(c.Name + "(" + c.Unit + ", ")
		writeArgs(&b, c.Args, false)
	default:
		if bareTimeFunctions[c.Name] {
			return c.Name
		}
		writeCall(&b, c.Name, c.Args...)
	}
	return b.String()
}

// BindWatermark returns e with every CURRENT_WATERMARK reading wm (the
// watermark of the task evaluating it; math.MinInt64 before the first),
// and whether e had one; e itself is not changed, so that the subtasks of
// an operator each bind their own copy.
func BindWatermark(e Expr, wm *atomic.Int64) (Expr, bool) {
	return bindTimeFunc(e, tfCurrentWatermark, func(c *TimeFunc) { c.wm = wm })
}

// BindProctime returns e with every PROCTIME() reading *ms (epoch
// milliseconds) instead of the clock, and whether e had one; e itself is
// not changed. The operator evaluating the copy sets *ms from its task's
// clock once per batch: processing time is the operator's time, the same
// for the rows of a batch and never going back (as Flink's, whose
// PROCTIME() is the timer service's current time).
func BindProctime(e Expr, ms *int64) (Expr, bool) {
	return bindTimeFunc(e, tfProctime, func(c *TimeFunc) { c.proc = ms })
}

// bindTimeFunc returns e with every call of time function f replaced by a
// copy that bind changed, and whether e had one; e itself is not changed.
func bindTimeFunc(e Expr, f tfn, bind func(*TimeFunc)) (Expr, bool) {
	found := false
	out, err := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*TimeFunc); ok && c.f == f {
			cp := *c
			bind(&cp)
			found = true
			return &cp, nil
		}
		return x, nil
	})
	if err != nil || !found {
		return e, false
	}
	return out, true
}

// wall returns the local date and time of timestamp value v: a TIMESTAMP's
// own fields, a TIMESTAMP_LTZ's in loc.
func wall(v types.Value, loc *time.Location) time.Time {
	if v.Kind() == types.KindTimestampLTZ {
		return time.UnixMilli(v.Int()).In(loc)
	}
	return time.UnixMilli(v.Int()).UTC()
}

// fromWall turns a local date and time back into a value of kind k.
func fromWall(t time.Time, k types.Kind, loc *time.Location) types.Value {
	if k == types.KindTimestampLTZ {
		t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
		return types.TimestampLTZValue(t.UnixMilli())
	}
	t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	return types.TimestampValue(t.UnixMilli())
}

// Eval computes the function.
func (c *TimeFunc) Eval(row []types.Value) (types.Value, error) {
	if c.memo != nil {
		// DATE_FORMAT (its format a string literal, compiled into
		// c.df): per row, only the value to format is evaluated.
		v, err := c.Args[0].Eval(row)
		if err != nil || v.IsNull() {
			return types.Value{}, err
		}
		if v.Kind() == types.KindVarchar {
			return c.dateFormatText(v), nil
		}
		return c.dateFormat(v)
	}
	switch c.f {
	case tfProctime:
		if c.proc != nil {
			return types.TimestampLTZValue(*c.proc), nil
		}
		return types.TimestampLTZValue(time.Now().UnixMilli()), nil
	case tfNow:
		return types.TimestampLTZValue(time.Now().UnixMilli()), nil
	case tfLocalTimestamp:
		return fromWall(time.Now().In(c.Loc), types.KindTimestamp, c.Loc), nil
	case tfCurrentDate:
		// The date of the session's time zone, as Flink.
		w := fromWall(time.Now().In(c.Loc), types.KindTimestamp, c.Loc)
		return types.DateValue(floorDiv(w.Int(), 86_400_000)), nil
	case tfCurrentWatermark:
		if c.wm == nil {
			return types.Value{}, nil
		}
		w := c.wm.Load()
		if w == math.MinInt64 {
			return types.Value{}, nil
		}
		return types.TimestampValue(w).WithKind(c.t.Kind), nil
	case tfUnixTimestamp:
		if len(c.Args) == 0 {
			return types.BigIntValue(time.Now().Unix()), nil
		}
	case tfToTimestampLTZ:
		// The precision is a literal (precisionArg): per row only the
		// number is evaluated (a source's rowtime column, for every row
		// it reads).
		if p, ok := c.Args[1].(*Literal); ok && !p.V.IsNull() {
			v, err := c.Args[0].Eval(row)
			if err != nil || v.IsNull() {
				return types.Value{}, err
			}
			v, err = toTimestampLTZ(v, p.V.Int())
			return v, located(c.Src, err)
		}
	}
	var args [3]types.Value
	for i, a := range c.Args {
		v, err := a.Eval(row)
		if err != nil || v.IsNull() {
			return types.Value{}, err
		}
		args[i] = v
	}
	v := args[0]
	switch c.f {
	case tfToTimestampLTZ:
		v, err := toTimestampLTZ(v, args[1].Int())
		return v, located(c.Src, err)
	case tfToTimestamp:
		t, err := c.df.Parse(v.Str(), time.UTC)
		if err != nil {
			return types.Value{}, nil // as Flink: NULL for text that does not parse
		}
		return fromWall(t, types.KindTimestamp, nil), nil
	case tfUnixTimestamp:
		t, err := c.df.Parse(v.Str(), c.Loc)
		if err != nil {
			return types.Value{}, nil
		}
		return types.BigIntValue(t.Unix()), nil
	case tfFromUnixtime:
		return types.StringValue(string(c.df.Append(nil, time.Unix(v.Int(), 0).In(c.Loc)))), nil
	case tfDateFormat:
		if v.Kind() == types.KindVarchar {
			return c.dateFormatText(v), nil
		}
		return c.dateFormat(v)
	case tfExtract:
		return types.BigIntValue(extract(c.Unit, wall(v, c.Loc), v)), nil
	case tfFloor, tfCeil:
		return floorCeil(c.Unit, v, c.f == tfCeil, c.Loc), nil
	case tfTimestampAdd:
		return timestampAdd(c.Unit, v.Int(), args[1], c.Loc), nil
	case tfTimestampDiff:
		return types.IntValue(int64(int32(timestampDiff(c.Unit, v, args[1], c.Loc)))), nil
	}
	return types.Value{}, fmt.Errorf("%s: not implemented", c.Name)
}

// toTimestampLTZ is TO_TIMESTAMP_LTZ of the number v (not NULL) at
// precision 0 (seconds) or 3 (milliseconds). A FLOAT, DOUBLE or DECIMAL is
// rounded half away from zero to the millisecond (ltzOfFraction). An
// instant beyond an int64 of milliseconds (a NaN or infinite number too)
// is an error wrapping ErrOverflow, not a time wrapped around. The
// integers, a source's usual rowtime, take the short way.
func toTimestampLTZ(v types.Value, precision int64) (types.Value, error) {
	if !v.Kind().IsInteger() {
		return ltzOfFraction(v, precision)
	}
	n := v.Int()
	if precision != 0 {
		return types.TimestampLTZValue(n), nil
	}
	if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
		return types.Value{}, ltzOverflow(v, precision)
	}
	return types.TimestampLTZValue(n * 1000), nil
}

// ltzOfFraction is toTimestampLTZ of a FLOAT, DOUBLE or DECIMAL.
func ltzOfFraction(v types.Value, precision int64) (types.Value, error) {
	switch k := v.Kind(); {
	case k.IsFloat():
		ms := v.Float()
		if precision == 0 {
			ms *= 1000
		}
		// 2^63 is the first float64 above MaxInt64; -2^63 is exact.
		if ms = math.Round(ms); ms < 9223372036854775808.0 && ms >= -9223372036854775808.0 {
			return types.TimestampLTZValue(int64(ms)), nil
		}
	case k == types.KindDecimal:
		to := 0
		if precision == 0 {
			to = 3
		}
		if d, err := types.Rescale(v, to); err == nil {
			if ms, ok := d.Unscaled(); ok {
				return types.TimestampLTZValue(ms), nil
			}
		}
	default:
		return types.Value{}, fmt.Errorf("TO_TIMESTAMP_LTZ of a %s", k)
	}
	return types.Value{}, ltzOverflow(v, precision)
}

// ltzOverflow is the error of TO_TIMESTAMP_LTZ(v, precision) past the
// range of TIMESTAMP_LTZ.
func ltzOverflow(v types.Value, precision int64) error {
	return fmt.Errorf("%w: TO_TIMESTAMP_LTZ(%s, %d) is past the range of TIMESTAMP_LTZ", ErrOverflow, v, precision)
}

// dfMemo keeps DATE_FORMAT's last result with the timestamp it is for,
// floored to the pattern's finest unit: rows in time order mostly format
// the same text (the day, the minute), which then costs neither the
// formatting nor an allocation. It is shared by the tasks that evaluate
// the call, hence atomic.
type dfMemo struct {
	unit int64 // milliseconds
	last atomic.Pointer[dfEntry]
}

// dfEntry is a DATE_FORMAT text and the timestamps that format as it:
// from (a multiple of the unit) to to, excluded.
type dfEntry struct {
	from, to int64
	s        string
}

// dateFormatText formats a timestamp given as text by c.df; NULL if the
// text is not a timestamp.
func (c *TimeFunc) dateFormatText(v types.Value) types.Value {
	ms, err := ParseTimestamp(v.Str())
	if err != nil {
		return types.Value{}
	}
	return types.StringValue(string(c.df.Append(nil, time.UnixMilli(ms).UTC())))
}

// dateFormat formats a timestamp (not text) by c.df, through the memo when
// the wall time is the value itself (TIMESTAMP, or TIMESTAMP_LTZ in UTC),
// so that units align with the epoch.
func (c *TimeFunc) dateFormat(v types.Value) (types.Value, error) {
	var buf [64]byte
	if c.memo == nil || v.Kind() == types.KindTimestampLTZ && c.Loc != time.UTC {
		return types.StringValue(string(c.df.Append(buf[:0], wall(v, c.Loc)))), nil
	}
	// A range check, not the unit's number: no division per row.
	ms := v.Int()
	if e := c.memo.last.Load(); e != nil && e.from <= ms && ms < e.to {
		return types.StringValue(e.s), nil
	}
	s := string(c.df.Append(buf[:0], wall(v, c.Loc)))
	if u := c.memo.unit; ms >= math.MinInt64+u && ms <= math.MaxInt64-u { // from and to do not overflow
		from := floorDiv(ms, u) * u
		c.memo.last.Store(&dfEntry{from: from, to: from + u, s: s})
	}
	return types.StringValue(s), nil
}

func extract(unit string, t time.Time, v types.Value) int64 {
	switch unit {
	case "YEAR":
		return int64(t.Year())
	case "QUARTER":
		return int64(t.Month()-1)/3 + 1
	case "MONTH":
		return int64(t.Month())
	case "WEEK":
		_, w := t.ISOWeek()
		return int64(w)
	case "DAY":
		return int64(t.Day())
	case "DOY":
		return int64(t.YearDay())
	case "DOW":
		return int64(t.Weekday()) + 1 // 1 = Sunday, as in Flink
	case "HOUR":
		return int64(t.Hour())
	case "MINUTE":
		return int64(t.Minute())
	case "SECOND":
		return int64(t.Second())
	case "MILLISECOND":
		return int64(t.Second())*1000 + int64(t.Nanosecond()/1e6)
	case "EPOCH":
		return floorDiv(v.Int(), 1000)
	}
	return 0
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// floorCeil rounds timestamp v down (or up) to a whole unit of its local time.
func floorCeil(unit string, v types.Value, ceil bool, loc *time.Location) types.Value {
	t := wall(v, loc)
	var f time.Time
	switch unit {
	case "YEAR":
		f = time.Date(t.Year(), 1, 1, 0, 0, 0, 0, t.Location())
	case "QUARTER":
		f = time.Date(t.Year(), (t.Month()-1)/3*3+1, 1, 0, 0, 0, 0, t.Location())
	case "MONTH":
		f = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
	case "DAY":
		f = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	case "HOUR":
		f = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, t.Location())
	case "MINUTE":
		f = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, t.Location())
	case "SECOND":
		f = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, t.Location())
	default: // MILLISECOND: already whole
		return v
	}
	out := fromWall(f, v.Kind(), loc)
	if ceil && out.Int() != v.Int() {
		var up time.Time
		switch unit {
		case "YEAR":
			up = f.AddDate(1, 0, 0)
		case "QUARTER":
			up = f.AddDate(0, 3, 0)
		case "MONTH":
			up = f.AddDate(0, 1, 0)
		case "DAY":
			up = f.AddDate(0, 0, 1)
		case "HOUR":
			up = time.Date(f.Year(), f.Month(), f.Day(), f.Hour()+1, 0, 0, 0, f.Location())
		case "MINUTE":
			up = time.Date(f.Year(), f.Month(), f.Day(), f.Hour(), f.Minute()+1, 0, 0, f.Location())
		case "SECOND":
			up = time.Date(f.Year(), f.Month(), f.Day(), f.Hour(), f.Minute(), f.Second()+1, 0, f.Location())
		}
		out = fromWall(up, v.Kind(), loc)
	}
	return out
}

// addMonths adds n months to t, keeping the day of month where it exists
// and taking the month's last day where not (Jan 31 + 1 month = Feb 28/29).
func addMonths(t time.Time, n int) time.Time {
	y, m := t.Year(), int(t.Month())-1+n
	y += m / 12
	m %= 12
	if m < 0 {
		m += 12
		y--
	}
	d := t.Day()
	if last := time.Date(y, time.Month(m+2), 0, 0, 0, 0, 0, time.UTC).Day(); d > last {
		d = last
	}
	return time.Date(y, time.Month(m+1), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

var unitMillis = map[string]int64{"WEEK": 7 * 86_400_000, "DAY": 86_400_000, "HOUR": 3_600_000, "MINUTE": 60_000, "SECOND": 1000, "MILLISECOND": 1}

func timestampAdd(unit string, n int64, v types.Value, loc *time.Location) types.Value {
	switch unit {
	case "YEAR", "QUARTER", "MONTH":
		months := n
		switch unit {
		case "YEAR":
			months *= 12
		case "QUARTER":
			months *= 3
		}
		return fromWall(addMonths(wall(v, loc), int(months)), v.Kind(), loc)
	case "WEEK", "DAY":
		t := wall(v, loc)
		days := int(n)
		if unit == "WEEK" {
			days *= 7
		}
		return fromWall(t.AddDate(0, 0, days), v.Kind(), loc)
	}
	return types.TimestampValue(v.Int() + n*unitMillis[unit]).WithKind(v.Kind())
}

// timestampDiff is (b - a) in whole units, truncated toward zero: months
// and years count a month only when b's day and time of month reach a's.
func timestampDiff(unit string, a, b types.Value, loc *time.Location) int64 {
	switch unit {
	case "YEAR", "QUARTER", "MONTH":
		ta, tb := wall(a, loc), wall(b, loc)
		months := int64(tb.Year()-ta.Year())*12 + int64(tb.Month()-ta.Month())
		// The rest within the month, to compare: day, then time of day.
		rest := func(t time.Time) int64 {
			return int64(t.Day())*86_400_000 + int64(t.Hour())*3_600_000 + int64(t.Minute())*60_000 + int64(t.Second())*1000 + int64(t.Nanosecond()/1e6)
		}
		if months > 0 && rest(tb) < rest(ta) {
			months--
		} else if months < 0 && rest(tb) > rest(ta) {
			months++
		}
		switch unit {
		case "YEAR":
			return months / 12
		case "QUARTER":
			return months / 3
		}
		return months
	}
	return (b.Int() - a.Int()) / unitMillis[unit]
}
