package expr

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("time zone %s not available: %v", name, err)
	}
	return loc
}

// tsAt is the TIMESTAMP of a wall-clock time.
func tsAt(y int, mo time.Month, d, h, mi, s, ms int) types.Value {
	return types.TimestampValue(time.Date(y, mo, d, h, mi, s, ms*1e6, time.UTC).UnixMilli())
}

// ltzAt is the TIMESTAMP_LTZ of a wall-clock time in loc.
func ltzAt(loc *time.Location, y int, mo time.Month, d, h, mi, s, ms int) types.Value {
	return types.TimestampLTZValue(time.Date(y, mo, d, h, mi, s, ms*1e6, loc).UnixMilli())
}

func tsLit(v types.Value) Expr { return NewLiteral(v, types.Type{Kind: v.Kind()}) }

func TestTimeFunctions(t *testing.T) {
	kolkata := mustZone(t, "Asia/Kolkata") // +05:30, no DST
	ny := mustZone(t, "America/New_York")
	ts := tsAt(2024, 3, 5, 7, 8, 9, 12) // a Tuesday
	instant := ltzAt(time.UTC, 2024, 3, 5, 7, 8, 9, 12)
	nullTS := NewLiteral(vNull, types.Timestamp)
	cases := []struct {
		name string
		unit string
		args []Expr
		loc  *time.Location
		want types.Value
	}{
		{"TO_TIMESTAMP_LTZ", "", []Expr{iv(1500), iv(0)}, nil, types.TimestampLTZValue(1_500_000)},
		{"TO_TIMESTAMP_LTZ", "", []Expr{lit(types.BigIntValue(1500)), iv(3)}, nil, types.TimestampLTZValue(1500)},
		{"TO_TIMESTAMP_LTZ", "", []Expr{lit(types.DoubleValue(1.5)), iv(0)}, nil, types.TimestampLTZValue(1500)},
		{"TO_TIMESTAMP_LTZ", "", []Expr{lit(types.BigIntValue(-1)), iv(0)}, nil, types.TimestampLTZValue(-1000)},
		{"TO_TIMESTAMP_LTZ", "", []Expr{nullOf(types.KindBigInt), iv(3)}, nil, vNull},
		{"TO_TIMESTAMP", "", []Expr{sv("2024-02-29 13:45:10")}, kolkata, tsAt(2024, 2, 29, 13, 45, 10, 0)},
		{"TO_TIMESTAMP", "", []Expr{sv("29/02/2024 13:45"), sv("dd/MM/yyyy HH:mm")}, nil, tsAt(2024, 2, 29, 13, 45, 0, 0)},
		{"TO_TIMESTAMP", "", []Expr{sv("20240305070809"), sv("yyyyMMddHHmmss")}, nil, tsAt(2024, 3, 5, 7, 8, 9, 0)},
		{"TO_TIMESTAMP", "", []Expr{sv("Mar 5, 2024 7:08:09.012 PM"), sv("MMM d, yyyy h:mm:ss.SSS a")}, nil, tsAt(2024, 3, 5, 19, 8, 9, 12)},
		{"TO_TIMESTAMP", "", []Expr{sv("2023-02-29 00:00:00")}, nil, vNull}, // no such day
		{"TO_TIMESTAMP", "", []Expr{sv("yesterday")}, nil, vNull},
		{"TO_TIMESTAMP", "", []Expr{sv("2024-02-29 13:45:10 extra")}, nil, vNull},
		{"TO_TIMESTAMP", "", []Expr{nullOf(types.KindVarchar)}, nil, vNull},
		{"DATE_FORMAT", "", []Expr{tsLit(ts), sv("yyyy-MM-dd HH:mm")}, nil, types.StringValue("2024-03-05 07:08")},
		{"DATE_FORMAT", "", []Expr{tsLit(ts), sv("EEE, d MMM yy h:mm a")}, nil, types.StringValue("Tue, 5 Mar 24 7:08 AM")},
		{"DATE_FORMAT", "", []Expr{tsLit(ts), sv("EEEE MMMM D 'day''s' SSS k K")}, nil, types.StringValue("Tuesday March 65 day's 012 7 7")},
		{"DATE_FORMAT", "", []Expr{tsLit(instant), sv("yyyy-MM-dd HH:mm")}, kolkata, types.StringValue("2024-03-05 12:38")},
		{"DATE_FORMAT", "", []Expr{tsLit(instant), sv("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")}, kolkata, types.StringValue("2024-03-05T12:38:09.012+05:30")},
		{"DATE_FORMAT", "", []Expr{tsLit(instant), sv("HH:mm X Z")}, nil, types.StringValue("07:08 Z +0000")},
		{"DATE_FORMAT", "", []Expr{sv("2024-03-05 07:08:09"), sv("dd.MM.yyyy")}, nil, types.StringValue("05.03.2024")},
		{"DATE_FORMAT", "", []Expr{nullTS, sv("yyyy")}, nil, vNull},
		{"EXTRACT", "YEAR", []Expr{tsLit(ts)}, nil, types.BigIntValue(2024)},
		{"EXTRACT", "QUARTER", []Expr{tsLit(ts)}, nil, types.BigIntValue(1)},
		{"EXTRACT", "MONTH", []Expr{tsLit(ts)}, nil, types.BigIntValue(3)},
		{"EXTRACT", "WEEK", []Expr{tsLit(ts)}, nil, types.BigIntValue(10)},
		{"EXTRACT", "DAY", []Expr{tsLit(ts)}, nil, types.BigIntValue(5)},
		{"EXTRACT", "DOY", []Expr{tsLit(ts)}, nil, types.BigIntValue(65)},
		{"EXTRACT", "DOW", []Expr{tsLit(ts)}, nil, types.BigIntValue(3)},
		{"EXTRACT", "HOUR", []Expr{tsLit(ts)}, nil, types.BigIntValue(7)},
		{"EXTRACT", "MINUTE", []Expr{tsLit(ts)}, nil, types.BigIntValue(8)},
		{"EXTRACT", "SECOND", []Expr{tsLit(ts)}, nil, types.BigIntValue(9)},
		{"EXTRACT", "MILLISECOND", []Expr{tsLit(ts)}, nil, types.BigIntValue(9012)},
		{"EXTRACT", "EPOCH", []Expr{tsLit(types.TimestampValue(-1))}, nil, types.BigIntValue(-1)},
		{"EXTRACT", "HOUR", []Expr{nullTS}, nil, vNull},
		{"HOUR", "", []Expr{tsLit(instant)}, ny, types.BigIntValue(2)}, // 07:08 UTC is 02:08 EST
		{"HOUR", "", []Expr{tsLit(instant)}, kolkata, types.BigIntValue(12)},
		{"MINUTE", "", []Expr{tsLit(instant)}, kolkata, types.BigIntValue(38)},
		{"SECOND", "", []Expr{tsLit(ts)}, nil, types.BigIntValue(9)},
		{"YEAR", "", []Expr{tsLit(tsAt(1969, 12, 31, 23, 59, 59, 999))}, nil, types.BigIntValue(1969)},
		{"MONTH", "", []Expr{tsLit(ts)}, nil, types.BigIntValue(3)},
		{"DAYOFMONTH", "", []Expr{tsLit(ts)}, nil, types.BigIntValue(5)},
		{"DAYOFWEEK", "", []Expr{tsLit(tsAt(2024, 3, 3, 0, 0, 0, 0))}, nil, types.BigIntValue(1)}, // a Sunday
		{"DAYOFYEAR", "", []Expr{tsLit(tsAt(2024, 12, 31, 0, 0, 0, 0))}, nil, types.BigIntValue(366)},
		{"QUARTER", "", []Expr{tsLit(tsAt(2024, 10, 1, 0, 0, 0, 0))}, nil, types.BigIntValue(4)},
		{"WEEK", "", []Expr{tsLit(tsAt(2021, 1, 1, 0, 0, 0, 0))}, nil, types.BigIntValue(53)}, // ISO week of 2020
		{"HOUR", "", []Expr{nullTS}, nil, vNull},
		{"FLOOR", "DAY", []Expr{tsLit(ts)}, nil, tsAt(2024, 3, 5, 0, 0, 0, 0)},
		{"FLOOR", "HOUR", []Expr{tsLit(ts)}, nil, tsAt(2024, 3, 5, 7, 0, 0, 0)},
		{"FLOOR", "MINUTE", []Expr{tsLit(ts)}, nil, tsAt(2024, 3, 5, 7, 8, 0, 0)},
		{"FLOOR", "SECOND", []Expr{tsLit(ts)}, nil, tsAt(2024, 3, 5, 7, 8, 9, 0)},
		{"FLOOR", "MONTH", []Expr{tsLit(ts)}, nil, tsAt(2024, 3, 1, 0, 0, 0, 0)},
		{"FLOOR", "QUARTER", []Expr{tsLit(tsAt(2024, 6, 30, 1, 0, 0, 0))}, nil, tsAt(2024, 4, 1, 0, 0, 0, 0)},
		{"FLOOR", "YEAR", []Expr{tsLit(ts)}, nil, tsAt(2024, 1, 1, 0, 0, 0, 0)},
		{"FLOOR", "DAY", []Expr{tsLit(tsAt(1969, 12, 31, 23, 0, 0, 0))}, nil, tsAt(1969, 12, 31, 0, 0, 0, 0)},
		{"FLOOR", "DAY", []Expr{tsLit(instant)}, kolkata, ltzAt(kolkata, 2024, 3, 5, 0, 0, 0, 0)},
		{"CEIL", "HOUR", []Expr{tsLit(ts)}, nil, tsAt(2024, 3, 5, 8, 0, 0, 0)},
		{"CEIL", "HOUR", []Expr{tsLit(tsAt(2024, 3, 5, 8, 0, 0, 0))}, nil, tsAt(2024, 3, 5, 8, 0, 0, 0)},
		{"CEIL", "MONTH", []Expr{tsLit(tsAt(2024, 12, 5, 0, 0, 0, 0))}, nil, tsAt(2025, 1, 1, 0, 0, 0, 0)},
		{"CEIL", "DAY", []Expr{tsLit(instant)}, kolkata, ltzAt(kolkata, 2024, 3, 6, 0, 0, 0, 0)},
		{"FLOOR", "DAY", []Expr{nullTS}, nil, vNull},
		{"TIMESTAMPADD", "MONTH", []Expr{iv(1), tsLit(tsAt(2024, 1, 31, 10, 0, 0, 0))}, nil, tsAt(2024, 2, 29, 10, 0, 0, 0)},
		{"TIMESTAMPADD", "YEAR", []Expr{iv(1), tsLit(tsAt(2024, 2, 29, 0, 0, 0, 0))}, nil, tsAt(2025, 2, 28, 0, 0, 0, 0)},
		{"TIMESTAMPADD", "QUARTER", []Expr{iv(-1), tsLit(tsAt(2024, 1, 15, 0, 0, 0, 0))}, nil, tsAt(2023, 10, 15, 0, 0, 0, 0)},
		{"TIMESTAMPADD", "MONTH", []Expr{iv(-13), tsLit(tsAt(2024, 3, 31, 0, 0, 0, 0))}, nil, tsAt(2023, 2, 28, 0, 0, 0, 0)},
		{"TIMESTAMPADD", "WEEK", []Expr{iv(2), tsLit(ts)}, nil, tsAt(2024, 3, 19, 7, 8, 9, 12)},
		{"TIMESTAMPADD", "DAY", []Expr{iv(-5), tsLit(ts)}, nil, tsAt(2024, 2, 29, 7, 8, 9, 12)},
		{"TIMESTAMPADD", "HOUR", []Expr{iv(25), tsLit(ts)}, nil, tsAt(2024, 3, 6, 8, 8, 9, 12)},
		{"TIMESTAMPADD", "SECOND", []Expr{lit(types.BigIntValue(-9)), tsLit(ts)}, nil, tsAt(2024, 3, 5, 7, 8, 0, 12)},
		// A day in New York across the DST change is 23 hours.
		{"TIMESTAMPADD", "DAY", []Expr{iv(1), tsLit(ltzAt(ny, 2024, 3, 9, 12, 0, 0, 0))}, ny, ltzAt(ny, 2024, 3, 10, 12, 0, 0, 0)},
		{"TIMESTAMPADD", "DAY", []Expr{nullOf(types.KindInt), tsLit(ts)}, nil, vNull},
		{"TIMESTAMPDIFF", "MONTH", []Expr{tsLit(tsAt(2024, 1, 31, 0, 0, 0, 0)), tsLit(tsAt(2024, 2, 29, 0, 0, 0, 0))}, nil, types.IntValue(0)},
		{"TIMESTAMPDIFF", "MONTH", []Expr{tsLit(tsAt(2024, 1, 15, 0, 0, 0, 0)), tsLit(tsAt(2024, 2, 15, 0, 0, 0, 0))}, nil, types.IntValue(1)},
		{"TIMESTAMPDIFF", "MONTH", []Expr{tsLit(tsAt(2024, 2, 15, 0, 0, 0, 0)), tsLit(tsAt(2024, 1, 15, 0, 0, 1, 0))}, nil, types.IntValue(0)},
		{"TIMESTAMPDIFF", "YEAR", []Expr{tsLit(tsAt(2020, 5, 1, 0, 0, 0, 0)), tsLit(tsAt(2024, 4, 30, 0, 0, 0, 0))}, nil, types.IntValue(3)},
		{"TIMESTAMPDIFF", "QUARTER", []Expr{tsLit(tsAt(2024, 1, 1, 0, 0, 0, 0)), tsLit(tsAt(2024, 7, 1, 0, 0, 0, 0))}, nil, types.IntValue(2)},
		{"TIMESTAMPDIFF", "DAY", []Expr{tsLit(tsAt(2024, 3, 1, 0, 0, 0, 0)), tsLit(tsAt(2024, 2, 28, 1, 0, 0, 0))}, nil, types.IntValue(-1)},
		{"TIMESTAMPDIFF", "HOUR", []Expr{tsLit(tsAt(2024, 3, 1, 10, 30, 0, 0)), tsLit(tsAt(2024, 3, 1, 9, 0, 0, 0))}, nil, types.IntValue(-1)},
		{"TIMESTAMPDIFF", "SECOND", []Expr{tsLit(ts), nullTS}, nil, vNull},
		{"UNIX_TIMESTAMP", "", []Expr{sv("1970-01-01 01:00:00")}, nil, types.BigIntValue(3600)},
		{"UNIX_TIMESTAMP", "", []Expr{sv("1970-01-01 01:00:00")}, kolkata, types.BigIntValue(3600 - 19800)},
		{"UNIX_TIMESTAMP", "", []Expr{sv("1970-01-02"), sv("yyyy-MM-dd")}, nil, types.BigIntValue(86400)},
		{"UNIX_TIMESTAMP", "", []Expr{sv("not a time")}, nil, vNull},
		{"FROM_UNIXTIME", "", []Expr{iv(0)}, kolkata, types.StringValue("1970-01-01 05:30:00")},
		{"FROM_UNIXTIME", "", []Expr{iv(86400), sv("yyyyMMdd")}, nil, types.StringValue("19700102")},
		{"FROM_UNIXTIME", "", []Expr{nullOf(types.KindBigInt)}, nil, vNull},
	}
	for _, c := range cases {
		e, err := NewTimeCall(c.name, c.unit, c.args, c.loc)
		if err != nil {
			t.Errorf("%s %s %v: %v", c.name, c.unit, c.args, err)
			continue
		}
		got, err := e.Eval(nil)
		if err != nil {
			t.Errorf("%s: eval: %v", e, err)
			continue
		}
		if got.Kind() != c.want.Kind() || !types.Equal(got, c.want) {
			t.Errorf("%s (zone %v) = %v (%v), want %v (%v)", e, c.loc, got, got.Kind(), c.want, c.want.Kind())
		}
	}
}

func TestTimeFunctionErrors(t *testing.T) {
	ts := tsLit(tsAt(2024, 3, 5, 0, 0, 0, 0))
	cases := []struct {
		name, unit string
		args       []Expr
		arg        int // -1: not an argument's error
		msg        string
	}{
		{"TO_TIMESTAMP_LTZ", "", []Expr{iv(1), iv(2)}, 1, "precision must be 0 (seconds) or 3"},
		{"TO_TIMESTAMP_LTZ", "", []Expr{sv("1"), iv(3)}, 0, "want a number"},
		{"DATE_FORMAT", "", []Expr{ts, sv("yyyy-QQ")}, 1, "unknown pattern letter 'Q' at position 6"},
		{"DATE_FORMAT", "", []Expr{ts, sv("yyyy 'at")}, 1, "unclosed quote"},
		{"DATE_FORMAT", "", []Expr{ts, cS}, 1, "must be a string literal"},
		{"DATE_FORMAT", "", []Expr{iv(1), sv("yyyy")}, 0, "want a TIMESTAMP or a VARCHAR"},
		{"TO_TIMESTAMP", "", []Expr{sv("x"), sv("yyyy-mm-dd HH:MM:ss q")}, 1, "unknown pattern letter 'q'"},
		{"EXTRACT", "FORTNIGHT", []Expr{ts}, -1, "unknown time unit FORTNIGHT"},
		{"EXTRACT", "DAY", []Expr{iv(1)}, 0, "want TIMESTAMP(3) or TIMESTAMP_LTZ(3)"},
		{"FLOOR", "WEEK", []Expr{ts}, -1, "unknown time unit WEEK"},
		{"TIMESTAMPADD", "DAY", []Expr{cD, ts}, 0, "want an integer"},
		{"TIMESTAMPDIFF", "DAY", []Expr{ts, tsLit(types.TimestampLTZValue(0))}, -1, "CAST one to the other's type"},
		{"CURRENT_WATERMARK", "", []Expr{cTs}, 0, "takes a rowtime attribute"},
		{"PROCTIME", "", []Expr{iv(1)}, -1, "takes 0 argument(s)"},
	}
	for _, c := range cases {
		_, err := NewTimeCall(c.name, c.unit, c.args, nil)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s %v: error %v, want one containing %q", c.name, c.args, err, c.msg)
			continue
		}
		var ae *ArgError
		if got := errors.As(err, &ae); got != (c.arg >= 0) || got && ae.Arg != c.arg {
			t.Errorf("%s %v: error %v: ArgError %v (%+v), want argument %d", c.name, c.args, err, got, ae, c.arg)
		}
	}
}

func TestClockFunctions(t *testing.T) {
	kolkata := mustZone(t, "Asia/Kolkata")
	before := time.Now().UnixMilli()
	vals := map[string]types.Value{}
	for _, name := range []string{"NOW", "CURRENT_TIMESTAMP", "PROCTIME", "LOCALTIMESTAMP", "UNIX_TIMESTAMP", "CURRENT_DATE"} {
		e, err := NewTimeCall(name, "", nil, kolkata)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Type().NotNull {
			t.Errorf("%s: type %s, want NOT NULL", name, e.Type())
		}
		v, err := e.Eval(nil)
		if err != nil {
			t.Fatal(err)
		}
		vals[name] = v
	}
	after := time.Now().UnixMilli()
	for _, name := range []string{"NOW", "CURRENT_TIMESTAMP", "PROCTIME"} {
		if v := vals[name]; v.Kind() != types.KindTimestampLTZ || v.Int() < before || v.Int() > after {
			t.Errorf("%s = %v (%v), want a TIMESTAMP_LTZ in [%d, %d]", name, v, v.Kind(), before, after)
		}
	}
	// LOCALTIMESTAMP is the wall clock of Kolkata: 5:30 ahead of UTC.
	off := int64(5*3600+30*60) * 1000
	if v := vals["LOCALTIMESTAMP"]; v.Kind() != types.KindTimestamp || v.Int() < before+off || v.Int() > after+off {
		t.Errorf("LOCALTIMESTAMP = %v, want within [%d, %d]", v, before+off, after+off)
	}
	// CURRENT_DATE is the date of Kolkata's wall clock.
	if v := vals["CURRENT_DATE"]; v.Kind() != types.KindDate ||
		(v.Int() != (before+off)/86_400_000 && v.Int() != (after+off)/86_400_000) {
		t.Errorf("CURRENT_DATE = %v (%v), want the day of %d", v, v.Kind(), before+off)
	}
	if v := vals["UNIX_TIMESTAMP"]; v.Int() < before/1000 || v.Int() > after/1000 {
		t.Errorf("UNIX_TIMESTAMP() = %v, want within [%d, %d]", v, before/1000, after/1000)
	}
	p, _ := NewTimeCall("PROCTIME", "", nil, nil)
	if got := p.Type().String(); got != "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*" {
		t.Errorf("PROCTIME() type %s", got)
	}
}

func TestCurrentWatermark(t *testing.T) {
	rt := NewColumn(0, types.Type{Kind: types.KindTimestamp, Attr: types.Rowtime}, "ts")
	e, err := NewTimeCall("CURRENT_WATERMARK", "", []Expr{rt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Type(); got != types.Timestamp {
		t.Errorf("type %v, want a plain nullable TIMESTAMP(3)", got)
	}
	cmp, err := NewCompare(">", rt, e)
	if err != nil {
		t.Fatal(err)
	}
	row := []types.Value{types.TimestampValue(500)}
	// Unbound (no task): NULL.
	if v, _ := e.Eval(row); !v.IsNull() {
		t.Errorf("unbound CURRENT_WATERMARK = %v, want NULL", v)
	}
	var wm atomic.Int64
	wm.Store(math.MinInt64)
	bound, ok := BindWatermark(cmp, &wm)
	if !ok {
		t.Fatal("BindWatermark found no CURRENT_WATERMARK")
	}
	if v, _ := bound.Eval(row); !v.IsNull() {
		t.Errorf("before the first watermark: ts > CURRENT_WATERMARK(ts) = %v, want NULL", v)
	}
	for _, c := range []struct {
		wm   int64
		want bool
	}{{100, true}, {499, true}, {500, false}, {900, false}} {
		wm.Store(c.wm)
		v, err := bound.Eval(row)
		if err != nil || v.IsNull() || v.Bool() != c.want {
			t.Errorf("watermark %d: ts > CURRENT_WATERMARK(ts) = %v, %v; want %v", c.wm, v, err, c.want)
		}
	}
	// The original stays unbound: each subtask binds its own copy.
	if v, _ := e.Eval(row); !v.IsNull() {
		t.Errorf("the unbound original reads %v", v)
	}
	if _, ok := BindWatermark(cmp.(*Compare).L, &wm); ok {
		t.Error("BindWatermark found CURRENT_WATERMARK in a plain column")
	}
}

func TestCastTimestampLTZ(t *testing.T) {
	kolkata := mustZone(t, "Asia/Kolkata")
	ny := mustZone(t, "America/New_York")
	ltz := types.Type{Kind: types.KindTimestampLTZ}
	cases := []struct {
		x    types.Value
		to   types.Type
		loc  *time.Location
		want types.Value
	}{
		{tsAt(2024, 3, 5, 12, 0, 0, 0), ltz, kolkata, ltzAt(time.UTC, 2024, 3, 5, 6, 30, 0, 0)},
		{ltzAt(time.UTC, 2024, 3, 5, 6, 30, 0, 0), types.Timestamp, kolkata, tsAt(2024, 3, 5, 12, 0, 0, 0)},
		{ltzAt(time.UTC, 2024, 7, 1, 12, 0, 0, 5), types.Varchar, ny, types.StringValue("2024-07-01 08:00:00.005")}, // EDT
		{ltzAt(time.UTC, 2024, 1, 1, 12, 0, 0, 0), types.Varchar, ny, types.StringValue("2024-01-01 07:00:00.000")}, // EST
		{types.StringValue("2024-01-01 07:00:00"), ltz, ny, ltzAt(time.UTC, 2024, 1, 1, 12, 0, 0, 0)},
		{tsAt(2024, 3, 5, 12, 0, 0, 0), ltz, nil, ltzAt(time.UTC, 2024, 3, 5, 12, 0, 0, 0)},
	}
	for _, c := range cases {
		e, err := NewCastIn(tsLit(c.x), c.to, c.loc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Eval(nil)
		if err != nil || got.Kind() != c.want.Kind() || !types.Equal(got, c.want) {
			t.Errorf("%s in %v = %v (%v), %v; want %v", e, c.loc, got, got.Kind(), err, c.want)
		}
	}
	if _, err := NewCast(tsLit(types.TimestampLTZValue(0)), types.Int); err == nil {
		t.Error("CAST(TIMESTAMP_LTZ AS INT) was accepted")
	}
	// A cast of a time attribute is a plain value.
	rt := NewColumn(0, types.Type{Kind: types.KindTimestamp, Attr: types.Rowtime}, "ts")
	if c, _ := NewCast(rt, types.Timestamp); c.Type().Attr != types.NoTimeAttr {
		t.Errorf("CAST keeps the time attribute: %v", c.Type())
	}
	// LTZ ± INTERVAL stays an LTZ.
	a, err := NewArith("+", tsLit(types.TimestampLTZValue(1000)), lit(types.IntervalValue(500)))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := a.Eval(nil); a.Type().Kind != types.KindTimestampLTZ || v.Kind() != types.KindTimestampLTZ || v.Int() != 1500 {
		t.Errorf("LTZ + INTERVAL = %v of %v", v, a.Type())
	}
}

func TestDateFormatRoundTrip(t *testing.T) {
	kolkata := mustZone(t, "Asia/Kolkata")
	for _, p := range []string{"yyyy-MM-dd HH:mm:ss.SSS", "yyyyMMddHHmmssSSS", "dd MMMM yyyy hh:mm:ss.SSS a", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "D yyyy HH:mm:ss.SSS Z"} {
		df, err := CompileDateFormat(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []time.Time{
			time.Date(2024, 2, 29, 23, 59, 58, 7e6, kolkata),
			time.Date(1999, 12, 31, 0, 0, 0, 0, kolkata),
			time.Date(2024, 7, 1, 12, 30, 0, 999e6, kolkata),
		} {
			text := string(df.Append(nil, want))
			got, err := df.Parse(text, kolkata)
			if err != nil || !got.Equal(want) {
				t.Errorf("pattern %q: %s parsed as %v, %v; want %v", p, text, got, err, want)
			}
		}
	}
}

// TestDateFormatMemo evaluates DATE_FORMAT calls on runs of random
// timestamps in time order (the memo's hits and misses, before and after
// 1970), TIMESTAMP and TIMESTAMP_LTZ in UTC and in a zone, against Go's
// time.Format with the same layout.
func TestDateFormatMemo(t *testing.T) {
	kolkata := mustZone(t, "Asia/Kolkata")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	layouts := map[string]string{
		"yyyy-MM-dd": "2006-01-02", "HH:mm": "15:04", "HH:mm:ss": "15:04:05",
		"yyyy-MM-dd HH": "2006-01-02 15", "mm:ss.SSS": "04:05.000", "EEE h a": "Mon 3 PM",
	}
	for pattern, layout := range layouts {
		for _, loc := range []*time.Location{time.UTC, kolkata} {
			for _, kind := range []types.Kind{types.KindTimestamp, types.KindTimestampLTZ} {
				col := &Column{Index: 0, T: types.Type{Kind: kind}}
				e, err := NewTimeCall("DATE_FORMAT", "", []Expr{col, sv(pattern)}, loc)
				if err != nil {
					t.Fatal(err)
				}
				check := func(ms int64) {
					t.Helper()
					v := types.TimestampValue(ms).WithKind(kind)
					got, err := e.Eval([]types.Value{v})
					if err != nil {
						t.Fatal(err)
					}
					w := time.UnixMilli(ms).UTC()
					if kind == types.KindTimestampLTZ {
						w = w.In(loc)
					}
					if want := w.Format(layout); got.Str() != want {
						t.Fatalf("seed %d: DATE_FORMAT(%v %d, '%s') in %v = %q, want %q", seed, kind, ms, pattern, loc, got.Str(), want)
					}
				}
				ms := r.Int64N(4e12) - 2e12
				for range 2000 {
					ms += r.Int64N(5000) * int64(1+r.IntN(3)*r.IntN(3)*1000)
					switch r.IntN(20) {
					case 0:
						ms -= r.Int64N(200_000) // late: back into an earlier unit
					case 1:
						// The last millisecond of an hour (of every unit),
						// then the first of the next.
						b := (ms/3_600_000 + 1) * 3_600_000
						check(b - 1)
						ms = b
					}
					check(ms)
				}
			}
		}
	}
}

// TestDateFormatMemoAllocs checks that DATE_FORMAT of timestamps in the
// same unit of its pattern (the same minute for 'HH:mm') reuses the text.
func TestDateFormatMemoAllocs(t *testing.T) {
	e, err := NewTimeCall("DATE_FORMAT", "", []Expr{&Column{Index: 0, T: types.Type{Kind: types.KindTimestamp}}, sv("HH:mm")}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	row := []types.Value{tsAt(2024, 3, 5, 7, 8, 0, 0)}
	n := testing.AllocsPerRun(100, func() {
		row[0] = types.TimestampValue(row[0].Int() + 1)
		if v, err := e.Eval(row); err != nil || v.Str() != "07:08" {
			t.Fatalf("%v %v", v, err)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per row, want 0", n)
	}
}

// TestToTimestampLTZColumn evaluates TO_TIMESTAMP_LTZ over a BIGINT and a
// DOUBLE column, at both precisions, for random rows (NULLs among them),
// against the instant computed here: seconds times 1000 (doubles rounded
// to the millisecond), or milliseconds as they are.
func TestToTimestampLTZColumn(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 3))
	cols := []Expr{NewColumn(0, types.BigInt, "n"), NewColumn(1, types.Double, "d")}
	for _, prec := range []int64{0, 3} {
		for c, col := range cols {
			call, err := NewTimeCall("TO_TIMESTAMP_LTZ", "", []Expr{col, iv(prec)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 1000 {
				n := r.Int64N(1<<40) - 1<<39
				d := float64(r.Int64N(1<<30)-1<<29) + r.Float64()
				row := []types.Value{types.BigIntValue(n), types.DoubleValue(d)}
				if r.IntN(10) == 0 {
					row[c] = types.Value{}
				}
				got, err := call.Eval(row)
				if err != nil {
					t.Fatal(err)
				}
				var want types.Value
				switch {
				case row[c].IsNull():
				case c == 0 && prec == 0:
					want = types.TimestampLTZValue(n * 1000)
				case c == 0:
					want = types.TimestampLTZValue(n)
				case prec == 0:
					want = types.TimestampLTZValue(int64(math.Round(d * 1000)))
				default:
					want = types.TimestampLTZValue(int64(math.Round(d)))
				}
				if got != want {
					t.Fatalf("seed %d: TO_TIMESTAMP_LTZ(%v, %d) = %v, want %v", seed, row[c], prec, got, want)
				}
			}
		}
	}
}

// TestToTimestampLTZKindsAndRange evaluates TO_TIMESTAMP_LTZ of a FLOAT, a
// DECIMAL and numbers whose instant does not fit in an int64 of
// milliseconds, with the precision as the literal it must be (the path
// that evaluates only the number) and, the same call with its precision
// read from a column, the general path: a FLOAT or DECIMAL is its number
// (not its bits or unscaled integer), rounded half away from zero to the
// millisecond as a DOUBLE is; an instant out of range (a NaN or infinite
// double too) is an error wrapping ErrOverflow, never a wrapped-around
// time. And the precision must be a literal 0 or 3 (not 9, NULL or a
// column).
func TestToTimestampLTZKindsAndRange(t *testing.T) {
	dec := func(unscaled int64, scale int) types.Value { return types.DecimalValue(unscaled, scale) }
	cases := []struct {
		v    types.Value
		t    types.Type
		prec int64
		want int64 // milliseconds; with bad, an ErrOverflow
		bad  bool
	}{
		{v: types.FloatValue(1.5), t: types.Type{Kind: types.KindFloat}, prec: 0, want: 1500},
		{v: types.FloatValue(-2.25), t: types.Type{Kind: types.KindFloat}, prec: 3, want: -2},
		{v: types.FloatValue(1024), t: types.Type{Kind: types.KindFloat}, prec: 3, want: 1024},
		{v: dec(15, 1), t: types.Decimal(3, 1), prec: 0, want: 1500},
		{v: dec(12345, 4), t: types.Decimal(10, 4), prec: 0, want: 1235}, // 1.2345 s, half up
		{v: dec(-12345, 4), t: types.Decimal(10, 4), prec: 0, want: -1235},
		{v: dec(1700000000123, 3), t: types.Decimal(16, 3), prec: 0, want: 1700000000123},
		{v: dec(25, 1), t: types.Decimal(3, 1), prec: 3, want: 3}, // 2.5 ms
		{v: dec(7, 0), t: types.Decimal(3, 0), prec: 3, want: 7},
		{v: types.BigIntValue(math.MaxInt64 / 1000), t: types.BigInt, prec: 0, want: math.MaxInt64 / 1000 * 1000},
		{v: types.BigIntValue(math.MinInt64 / 1000), t: types.BigInt, prec: 0, want: math.MinInt64 / 1000 * 1000},
		{v: types.BigIntValue(math.MaxInt64/1000 + 1), t: types.BigInt, prec: 0, bad: true},
		{v: types.BigIntValue(math.MinInt64/1000 - 1), t: types.BigInt, prec: 0, bad: true},
		{v: types.BigIntValue(math.MaxInt64), t: types.BigInt, prec: 3, want: math.MaxInt64},
		{v: types.DoubleValue(1e16), t: types.Double, prec: 0, bad: true},
		{v: types.DoubleValue(-1e16), t: types.Double, prec: 0, bad: true},
		{v: types.DoubleValue(1e19), t: types.Double, prec: 3, bad: true},
		{v: types.DoubleValue(math.NaN()), t: types.Double, prec: 3, bad: true},
		{v: types.DoubleValue(math.Inf(1)), t: types.Double, prec: 0, bad: true},
		{v: types.DoubleValue(math.Inf(-1)), t: types.Double, prec: 3, bad: true},
		{v: dec(9223372036854775, 0), t: types.Decimal(19, 0), prec: 0, want: 9223372036854775000},
		{v: dec(9223372036854776, 0), t: types.Decimal(19, 0), prec: 0, bad: true},
	}
	for _, c := range cases {
		call, err := NewTimeCall("TO_TIMESTAMP_LTZ", "", []Expr{NewColumn(0, c.t, "n"), iv(c.prec)}, nil)
		if err != nil {
			t.Fatalf("TO_TIMESTAMP_LTZ(%s, %d): %v", c.t.Kind, c.prec, err)
		}
		general := *call.(*TimeFunc)
		general.Args = []Expr{general.Args[0], NewColumn(1, types.Int, "p")}
		row := []types.Value{c.v, types.IntValue(c.prec)}
		for _, e := range []Expr{call, &general} {
			got, err := e.Eval(row)
			switch {
			case c.bad && (err == nil || !errors.Is(err, ErrOverflow)):
				t.Errorf("TO_TIMESTAMP_LTZ(%v %s, %d) = %v, %v; want an ErrOverflow", c.v, c.t.Kind, c.prec, got, err)
			case !c.bad && err != nil:
				t.Errorf("TO_TIMESTAMP_LTZ(%v %s, %d): %v", c.v, c.t.Kind, c.prec, err)
			case !c.bad && got != types.TimestampLTZValue(c.want):
				t.Errorf("TO_TIMESTAMP_LTZ(%v %s, %d) = %d ms, want %d", c.v, c.t.Kind, c.prec, got.Int(), c.want)
			}
		}
	}
	for _, p := range []Expr{iv(9), iv(6), lit(types.Value{}), NewColumn(1, types.Int, "p")} {
		if _, err := NewTimeCall("TO_TIMESTAMP_LTZ", "", []Expr{NewColumn(0, types.BigInt, "n"), p}, nil); err == nil {
			t.Errorf("TO_TIMESTAMP_LTZ(n, %s) accepted, want an error", Format(p))
		}
	}
}
