// Package types holds the value types shared by every layer of Weir: SQL
// types, compact typed values, rows, row kinds (the changelog), schemas and
// row batches. It imports nothing from the rest of the module.
package types

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is a SQL type's kind.
type Kind uint8

// The SQL type kinds. KindNull is the type of the NULL literal only.
const (
	KindNull Kind = iota
	KindBoolean
	KindInt    // 32-bit INT, stored as int64
	KindBigInt // 64-bit BIGINT
	KindDouble
	KindVarchar
	KindTimestamp // TIMESTAMP(3): milliseconds since the Unix epoch, UTC
	KindInterval  // INTERVAL DAY TO SECOND: milliseconds
	// KindTimestampLTZ is TIMESTAMP_LTZ(3) (TIMESTAMP(3) WITH LOCAL TIME
	// ZONE): an instant, milliseconds since the Unix epoch, shown in the
	// session's time zone (table.local-time-zone).
	KindTimestampLTZ
	// KindDecimal is DECIMAL(p, s): exact, p ≤ 38 digits, s after the point
	// (Type.P, Type.S); see DecimalValue.
	KindDecimal
	KindTinyInt  // 8-bit TINYINT, stored as int64
	KindSmallInt // 16-bit SMALLINT, stored as int64
	KindFloat    // 32-bit FLOAT, stored as the float64 of the float32
	KindDate     // DATE: days since 1970-01-01
	KindTime     // TIME(0): milliseconds since midnight
	KindBytes    // BYTES (VARBINARY): the bytes in s
)

var kindNames = [...]string{
	KindNull:         "NULL",
	KindBoolean:      "BOOLEAN",
	KindInt:          "INT",
	KindBigInt:       "BIGINT",
	KindDouble:       "DOUBLE",
	KindVarchar:      "VARCHAR",
	KindTimestamp:    "TIMESTAMP(3)",
	KindInterval:     "INTERVAL",
	KindTimestampLTZ: "TIMESTAMP_LTZ(3)",
	KindDecimal:      "DECIMAL",
	KindTinyInt:      "TINYINT",
	KindSmallInt:     "SMALLINT",
	KindFloat:        "FLOAT",
	KindDate:         "DATE",
	KindTime:         "TIME(0)",
	KindBytes:        "BYTES",
	KindRow:          "ROW",
	KindArray:        "ARRAY",
	KindMap:          "MAP",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// SQL returns the kind's type as DDL writes it and Flink prints it: as
// String, but STRING for VARCHAR (a bare VARCHAR means VARCHAR(1) in Flink,
// so DESCRIBE and SHOW CREATE TABLE print STRING to be pasted back). String
// stays as it is: operator ids hash it.
func (k Kind) SQL() string {
	if k == KindVarchar {
		return "STRING"
	}
	return k.String()
}

// IsNumeric reports whether k is a number: TINYINT, SMALLINT, INT,
// BIGINT, DECIMAL, FLOAT or DOUBLE.
func (k Kind) IsNumeric() bool {
	return k.IsInteger() || k == KindDouble || k == KindFloat || k == KindDecimal
}

// IsInteger reports whether k is TINYINT, SMALLINT, INT or BIGINT.
func (k Kind) IsInteger() bool {
	return k == KindInt || k == KindBigInt || k == KindTinyInt || k == KindSmallInt
}

// IsFloat reports whether k is FLOAT or DOUBLE.
func (k Kind) IsFloat() bool { return k == KindDouble || k == KindFloat }

// IntegerBounds returns the smallest and largest value of an integer kind.
func (k Kind) IntegerBounds() (lo, hi int64) {
	switch k {
	case KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case KindInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// IsTimestamp reports whether k is TIMESTAMP(3) or TIMESTAMP_LTZ(3).
func (k Kind) IsTimestamp() bool { return k == KindTimestamp || k == KindTimestampLTZ }

// TimeAttr marks a column as a time attribute, as Flink's planner does: the
// rowtime column of a table's WATERMARK FOR, or a PROCTIME() column. It
// stays on a column passed on unchanged and is dropped by any computation
// on it.
type TimeAttr uint8

// The time attributes.
const (
	NoTimeAttr TimeAttr = iota
	Rowtime             // event time: the column a WATERMARK FOR is defined on
	Proctime            // processing time: PROCTIME()
)

// Type is a SQL type: a kind, whether NULL is allowed, and whether it is a
// time attribute; a DECIMAL's precision and scale in P and S.
type Type struct {
	Kind    Kind
	NotNull bool
	Attr    TimeAttr
	P, S    uint8 // DECIMAL(P, S); zero for other kinds
	// Comp describes a ROW's fields, an ARRAY's element or a MAP's key
	// and value; nil for the other kinds.
	Comp *Composite
}

// Decimal returns the type DECIMAL(p, s), nullable.
func Decimal(p, s int) Type { return Type{Kind: KindDecimal, P: uint8(p), S: uint8(s)} }

// Name renders the type without NOT NULL or time attribute, with a
// DECIMAL's precision and scale: "DECIMAL(10, 2)".
func (t Type) Name() string {
	if t.Comp != nil {
		return compositeName(t, false)
	}
	if t.Kind == KindDecimal {
		return "DECIMAL(" + strconv.Itoa(int(t.P)) + ", " + strconv.Itoa(int(t.S)) + ")"
	}
	return t.Kind.String()
}

// Common types, all nullable.
var (
	Null      = Type{Kind: KindNull}
	Boolean   = Type{Kind: KindBoolean}
	Int       = Type{Kind: KindInt}
	BigInt    = Type{Kind: KindBigInt}
	Double    = Type{Kind: KindDouble}
	Varchar   = Type{Kind: KindVarchar}
	Timestamp = Type{Kind: KindTimestamp}
	Interval  = Type{Kind: KindInterval}
)

// String renders the type as SQL, e.g. "BIGINT NOT NULL", with a time
// attribute as Flink prints it: "TIMESTAMP(3) *ROWTIME*".
func (t Type) String() string {
	s := t.Name()
	if t.NotNull {
		s += " NOT NULL"
	}
	return s + t.Attr.suffix()
}

// SQL renders the type as DDL, e.g. "STRING NOT NULL" (see Kind.SQL), with
// a time attribute as String does.
func (t Type) SQL() string {
	s := t.Kind.SQL()
	if t.Kind == KindDecimal {
		s = t.Name()
	}
	if t.Comp != nil {
		s = compositeName(t, true)
	}
	if t.NotNull {
		s += " NOT NULL"
	}
	return s + t.Attr.suffix()
}

func (a TimeAttr) suffix() string {
	switch a {
	case Rowtime:
		return " *ROWTIME*"
	case Proctime:
		return " *PROCTIME*"
	}
	return ""
}

// Nullable returns t with NULL allowed.
func (t Type) Nullable() Type { t.NotNull = false; return t }

// Plain returns t without its time attribute: the type of a value
// computed from a time attribute.
func (t Type) Plain() Type { t.Attr = NoTimeAttr; return t }

// Value is one SQL value. It is a small struct, not an interface, so rows of
// values need no allocation per value. The zero Value is SQL NULL.
//
// Storage by kind: BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, TIMESTAMP,
// TIMESTAMP_LTZ, INTERVAL, DATE, TIME in n as int64 bits; FLOAT and DOUBLE
// in n as float64 bits; VARCHAR and BYTES in s; DECIMAL as described at
// DecimalValue, with its scale in x.
type Value struct {
	s string
	n uint64
	k Kind
	x uint8
}

// NullValue returns SQL NULL.
func NullValue() Value { return Value{} }

// BoolValue returns a BOOLEAN value.
func BoolValue(b bool) Value {
	if b {
		return Value{k: KindBoolean, n: 1}
	}
	return Value{k: KindBoolean}
}

// IntValue returns an INT value.
func IntValue(i int64) Value { return Value{k: KindInt, n: uint64(i)} }

// BigIntValue returns a BIGINT value.
func BigIntValue(i int64) Value { return Value{k: KindBigInt, n: uint64(i)} }

// DoubleValue returns a DOUBLE value.
func DoubleValue(f float64) Value { return Value{k: KindDouble, n: math.Float64bits(f)} }

// StringValue returns a VARCHAR value.
func StringValue(s string) Value { return Value{k: KindVarchar, s: s} }

// TimestampValue returns a TIMESTAMP(3) value from milliseconds since the epoch.
func TimestampValue(millis int64) Value { return Value{k: KindTimestamp, n: uint64(millis)} }

// TimestampLTZValue returns a TIMESTAMP_LTZ(3) value from milliseconds since the epoch.
func TimestampLTZValue(millis int64) Value { return Value{k: KindTimestampLTZ, n: uint64(millis)} }

// TinyIntValue returns a TINYINT value.
func TinyIntValue(i int64) Value { return Value{k: KindTinyInt, n: uint64(i)} }

// SmallIntValue returns a SMALLINT value.
func SmallIntValue(i int64) Value { return Value{k: KindSmallInt, n: uint64(i)} }

// FloatValue returns a FLOAT value (f rounded to float32).
func FloatValue(f float64) Value {
	return Value{k: KindFloat, n: math.Float64bits(float64(float32(f)))}
}

// DateValue returns a DATE value from days since 1970-01-01.
func DateValue(days int64) Value { return Value{k: KindDate, n: uint64(days)} }

// TimeValue returns a TIME value from milliseconds since midnight.
func TimeValue(millis int64) Value { return Value{k: KindTime, n: uint64(millis)} }

// BytesValue returns a BYTES value holding b (not copied: b must not change).
func BytesValue(b string) Value { return Value{k: KindBytes, s: b} }

// IntervalValue returns an INTERVAL value of millis milliseconds.
func IntervalValue(millis int64) Value { return Value{k: KindInterval, n: uint64(millis)} }

// Kind returns the value's kind; KindNull for NULL.
func (v Value) Kind() Kind { return v.k }

// IsNull reports whether v is SQL NULL.
func (v Value) IsNull() bool { return v.k == KindNull }

// Bool returns a BOOLEAN value's truth.
func (v Value) Bool() bool { return v.n != 0 }

// Int returns the int64 of an integer, TIMESTAMP, DATE, TIME or INTERVAL value.
func (v Value) Int() int64 { return int64(v.n) }

// Float returns a DOUBLE as float64; integers are converted.
func (v Value) Float() float64 {
	switch v.k {
	case KindDouble, KindFloat:
		return math.Float64frombits(v.n)
	case KindDecimal:
		return v.decimalFloat()
	}
	return float64(int64(v.n))
}

// Str returns a VARCHAR value's string (a BYTES value's bytes).
func (v Value) Str() string { return v.s }

// IsPlainInt reports whether v is BigIntValue(v.Int()).WithKind(k): a
// value of kind k that its integer alone makes again (no string, no
// decimal scale), so that a store may keep only the integer. It is that
// comparison without comparing whole values.
func (v Value) IsPlainInt(k Kind) bool { return v.k == k && v.x == 0 && len(v.s) == 0 }

// WithKind reinterprets an integer value as another integer-stored kind
// (TINYINT, SMALLINT, INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ, INTERVAL,
// DATE, TIME), a DOUBLE as FLOAT, a VARCHAR as BYTES.
func (v Value) WithKind(k Kind) Value { v.k = k; return v }

// Equal reports whether a and b are the same value; NULL equals NULL here
// (this is identity for grouping, not SQL's = operator).
func Equal(a, b Value) bool {
	if a.k != b.k {
		if a.k.IsNumeric() && b.k.IsNumeric() {
			return Compare(a, b) == 0
		}
		return false
	}
	if a.x != b.x { // DECIMALs of different scales
		return Compare(a, b) == 0
	}
	return a.n == b.n && a.s == b.s
}

// Identical reports whether a and b are one value in every respect: kind,
// scale and representation (unlike Equal, an INT is not identical to the
// BIGINT of its number, nor 0.0 to -0.0). Identical values encode alike.
func Identical(a, b Value) bool {
	return a.k == b.k && a.x == b.x && a.n == b.n && a.s == b.s
}

// Compare orders two values of comparable kinds: -1, 0 or +1. NULL sorts
// first. Numbers of different kinds compare numerically.
func Compare(a, b Value) int {
	if a.k == KindNull || b.k == KindNull {
		switch {
		case a.k == b.k:
			return 0
		case a.k == KindNull:
			return -1
		default:
			return 1
		}
	}
	if a.k.IsFloat() || b.k.IsFloat() {
		x, y := a.Float(), b.Float()
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		case x == y:
			return 0
		}
		// NaN: order NaN after everything, equal to itself.
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		default:
			return -1
		}
	}
	if a.k == KindDecimal || b.k == KindDecimal {
		return compareDecimal(AsDecimal(a), AsDecimal(b))
	}
	switch a.k {
	case KindVarchar, KindBytes, KindRow, KindArray, KindMap:
		return strings.Compare(a.s, b.s)
	case KindBoolean:
		return int(a.n) - int(b.n)
	}
	x, y := int64(a.n), int64(b.n)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// String renders v the way Flink's print sink does: NULL as "<NULL>",
// timestamps as "2006-01-02 15:04:05.000" (TIMESTAMP_LTZ in UTC; see
// AppendTextIn).
func (v Value) String() string {
	return string(v.AppendText(nil))
}

// AppendText appends v's print form (see String) to dst.
func (v Value) AppendText(dst []byte) []byte { return v.AppendTextIn(dst, time.UTC) }

// AppendTextIn appends v's print form to dst, with a TIMESTAMP_LTZ shown
// as the local time in loc (the session's time zone), as Flink shows it.
func (v Value) AppendTextIn(dst []byte, loc *time.Location) []byte {
	switch v.k {
	case KindNull:
		return append(dst, "<NULL>"...)
	case KindBoolean:
		return strconv.AppendBool(dst, v.n != 0)
	case KindInt, KindBigInt, KindTinyInt, KindSmallInt:
		return strconv.AppendInt(dst, int64(v.n), 10)
	case KindDouble:
		return AppendDouble(dst, math.Float64frombits(v.n))
	case KindFloat:
		return appendFloat32(dst, math.Float64frombits(v.n))
	case KindDecimal:
		return appendDecimal(dst, v)
	case KindDate:
		return time.UnixMilli(int64(v.n)*86_400_000).UTC().AppendFormat(dst, DateLayout)
	case KindTime:
		return time.UnixMilli(int64(v.n)).UTC().AppendFormat(dst, TimeLayout)
	case KindBytes:
		return AppendBytesText(dst, v.s)
	case KindRow, KindArray, KindMap:
		return appendComposite(dst, v)
	case KindVarchar:
		return append(dst, v.s...)
	case KindTimestamp:
		return time.UnixMilli(int64(v.n)).UTC().AppendFormat(dst, TimestampLayout)
	case KindTimestampLTZ:
		if loc == nil {
			loc = time.UTC
		}
		return time.UnixMilli(int64(v.n)).In(loc).AppendFormat(dst, TimestampLayout)
	case KindInterval:
		return appendInterval(dst, int64(v.n))
	}
	return dst
}

// TimestampLayout is how TIMESTAMP(3) values are printed and parsed.
const TimestampLayout = "2006-01-02 15:04:05.000"

// DateLayout and TimeLayout are how DATE and TIME values are printed.
const (
	DateLayout = "2006-01-02"
	TimeLayout = "15:04:05"
)

// AppendBytesText appends BYTES b as the SQL binary literal x'0aff'.
func AppendBytesText(dst []byte, b string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, "x'"...)
	for i := 0; i < len(b); i++ {
		dst = append(dst, hexDigits[b[i]>>4], hexDigits[b[i]&15])
	}
	return append(dst, '\'')
}

// appendFloat32 appends a FLOAT as Java's Float.toString would print
// common values (the shortest float32 representation).
func appendFloat32(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return AppendDouble(dst, f)
	}
	s := strconv.FormatFloat(f, 'g', -1, 32)
	g, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return AppendDouble(dst, f)
	}
	return AppendDouble(dst, g)
}

// AppendDouble appends f as Java's Double.toString would print common values:
// integral values keep a ".0" (3.0), others use the shortest representation.
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-3 || abs >= 1e7) {
		// Java's computerized scientific notation: 1.0E7, 1.25E-4.
		var tmp [32]byte
		e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(string(e), "e")
		dst = append(dst, mant...)
		if !strings.Contains(mant, ".") {
			dst = append(dst, ".0"...)
		}
		dst = append(dst, 'E')
		if exp[0] == '-' {
			dst = append(dst, '-')
		}
		return append(dst, strings.TrimLeft(exp[1:], "0")...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

func appendInterval(dst []byte, ms int64) []byte {
	// Flink prints INTERVAL DAY TO SECOND as +D HH:MM:SS.mmm.
	if ms < 0 {
		dst = append(dst, '-')
		ms = -ms
	} else {
		dst = append(dst, '+')
	}
	days := ms / 86_400_000
	ms %= 86_400_000
	dst = strconv.AppendInt(dst, days, 10)
	dst = append(dst, ' ')
	h, m, s, milli := ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	dst = append2(dst, s)
	dst = append(dst, '.')
	if milli < 100 {
		dst = append(dst, '0')
	}
	if milli < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, milli, 10)
}

func append2(dst []byte, n int64) []byte {
	if n < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, n, 10)
}
