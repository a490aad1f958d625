package filesystem

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

// encoder appends the records of a batch to a buffer.
type encoder interface {
	encode(dst []byte, b *types.Batch) ([]byte, error)
}

// rowEncoder appends one inserted row's record to a buffer: of the
// values row[cols[0]], row[cols[1]], ..., the encoder's columns.
type rowEncoder interface {
	appendRow(dst []byte, row []types.Value, cols []int) []byte
}

func newEncoder(f format, cols []types.Column) encoder {
	switch f.name {
	case formatCSV:
		e := newCSVEncoder(f, cols)
		return &e
	case formatJSON:
		return &jsonEncoder{enc: newJSONObjectEncoder(f, cols)}
	}
	return &debeziumEncoder{enc: newJSONObjectEncoder(f, cols)}
}

// appendOnly reports the error for a row an append-only format cannot write.
func appendOnly(f format, kind types.RowKind) error {
	return fmt.Errorf("filesystem sink: format '%s' accepts only inserts, got a %s row (use format '%s' for a changelog)", f.name, kind, formatDebezium)
}

// csvEncoder writes RFC 4180 CSV: a field is quoted when it holds the
// delimiter, the quote or a line break; NULL is the null literal (empty
// by default).
type csvEncoder struct {
	f    format
	cols []types.Column // their ROW and ARRAY columns are written by appendComposite
	comp []byte         // a composite column's text before quoting
	// quoted marks the bytes that make a field quoted: the delimiter, the
	// quote and the line breaks.
	quoted [256]bool
	// below is one more than the highest of those bytes, if at most 128
	// (else 0): plainText then skips 8 bytes at a time that are all at or
	// above it.
	below byte
	// The text of the last second a timestamp was written in, up to its
	// '.': rows in time order format only their milliseconds.
	tsSec  int64
	tsKind types.Kind
	tsText []byte
}

func newCSVEncoder(f format, cols []types.Column) csvEncoder {
	e := csvEncoder{f: f, cols: cols}
	var top byte
	for _, c := range []byte{f.delim, f.quote, '\n', '\r'} {
		e.quoted[c] = true
		top = max(top, c)
	}
	if top < 128 {
		e.below = top + 1
	}
	return e
}

func (e *csvEncoder) encode(dst []byte, b *types.Batch) ([]byte, error) {
	for i, kind := range b.Kinds {
		if kind != types.Insert {
			return dst, appendOnly(e.f, kind)
		}
		for c, v := range b.Row(i) {
			if c > 0 {
				dst = append(dst, e.f.delim)
			}
			dst = e.column(dst, c, v)
		}
		dst = append(dst, '\n')
	}
	return dst, nil
}

func (e *csvEncoder) appendRow(dst []byte, row []types.Value, cols []int) []byte {
	for k, c := range cols {
		if k > 0 {
			dst = append(dst, e.f.delim)
		}
		dst = e.column(dst, k, row[c])
	}
	return append(dst, '\n')
}

// column appends value v of column c as a CSV field.
func (e *csvEncoder) column(dst []byte, c int, v types.Value) []byte {
	if c < len(e.cols) && e.cols[c].Type.Comp != nil && !v.IsNull() {
		e.comp = e.appendComposite(e.comp[:0], v)
		return quotedField(e, dst, e.comp)
	}
	return e.field(dst, v)
}

func (e *csvEncoder) field(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindNull:
		return append(dst, e.f.nullLiteral...)
	case types.KindVarchar:
		return e.text(dst, v.Str())
	case types.KindBigInt, types.KindInt, types.KindSmallInt, types.KindTinyInt:
		return appendInt(dst, v.Int())
	}
	return e.scalarText(dst, v)
}

// digitPairs holds the two digits of 00 to 99.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// pow10 holds 10^0 to 10^19.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// appendInt appends n in decimal, as strconv.AppendInt(dst, n, 10) does,
// writing the digits in place (two at a time) rather than through a
// buffer and a copy.
func appendInt(dst []byte, n int64) []byte {
	u := uint64(n)
	if n < 0 {
		dst = append(dst, '-')
		u = -u
	}
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	// The digits: log10(2) ~ 1233/4096 gives t, the number of digits
	// of the smallest value of u's bit length less one; u has t or t+1.
	t := bits.Len64(u) * 1233 >> 12
	k := t + 1
	if u < pow10[t] {
		k = t
	}
	l := len(dst)
	if cap(dst)-l < k {
		dst = slices.Grow(dst, k)
	}
	dst = dst[:l+k]
	i := l + k - 1
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		dst[i], dst[i-1] = digitPairs[r+1], digitPairs[r]
		i -= 2
		u = q
	}
	if u >= 10 {
		dst[i], dst[i-1] = digitPairs[u*2+1], digitPairs[u*2]
	} else {
		dst[i] = byte('0' + u)
	}
	return dst
}

// text appends string s as a CSV field, quoted if it must be: it copies s
// and then checks the copy, which is in the cache by then (the common
// case, text that needs no quotes, reads s once).
func (e *csvEncoder) text(dst []byte, s string) []byte {
	n := len(dst)
	dst = append(dst, s...)
	if e.plainText(dst[n:]) {
		return dst
	}
	return quotedField(e, dst[:n], s)
}

// plainText reports whether text b can be written unquoted.
func (e *csvEncoder) plainText(b []byte) bool {
	if e.f.hasNullLiteral && string(b) == e.f.nullLiteral {
		return false
	}
	if e.below != 0 {
		// Bytes 8 at a time: a word with no byte below e.below holds
		// none of the quoted bytes (hasLess of Bit Twiddling Hacks,
		// exact for a bound up to 128).
		lo := uint64(e.below) * 0x0101010101010101
		for len(b) >= 8 {
			w := binary.LittleEndian.Uint64(b)
			if (w-lo)&^w&0x8080808080808080 != 0 && !e.plainBytes(b[:8]) {
				return false
			}
			b = b[8:]
		}
	}
	return e.plainBytes(b)
}

// plainBytes reports whether b holds none of the bytes that make a field
// quoted.
func (e *csvEncoder) plainBytes(b []byte) bool {
	for _, c := range b {
		if e.quoted[c] {
			return false
		}
	}
	return true
}

// quotedField appends text s as a CSV field, quoted if it must be.
func quotedField[T string | []byte](e *csvEncoder, dst []byte, s T) []byte {
	if !needsQuotes(e, s) {
		return append(dst, s...)
	}
	dst = append(dst, e.f.quote)
	for i := 0; i < len(s); i++ {
		if s[i] == e.f.quote {
			dst = append(dst, e.f.quote)
		}
		dst = append(dst, s[i])
	}
	return append(dst, e.f.quote)
}

// scalarText appends a non-NULL scalar's text, unquoted.
func (e *csvEncoder) scalarText(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindVarchar:
		return append(dst, v.Str()...)
	case types.KindInterval:
		return strconv.AppendInt(dst, v.Int(), 10)
	case types.KindBytes:
		return base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
	case types.KindTimestamp, types.KindTimestampLTZ:
		return e.timestamp(dst, v)
	}
	return v.AppendTextIn(dst, e.f.loc)
}

// timestamp appends a TIMESTAMP or TIMESTAMP_LTZ as v.AppendTextIn does
// (types.TimestampLayout: milliseconds last), formatting the text up to
// the second once per second (a zone's offset is whole seconds).
func (e *csvEncoder) timestamp(dst []byte, v types.Value) []byte {
	ms := v.Int()
	sec := ms / 1000
	if ms%1000 < 0 {
		sec--
	}
	if e.tsText == nil || e.tsSec != sec || e.tsKind != v.Kind() {
		t := v.AppendTextIn(e.tsText[:0], e.f.loc)
		e.tsText, e.tsSec, e.tsKind = t[:len(t)-3], sec, v.Kind()
	}
	f := ms - sec*1000
	dst = append(dst, e.tsText...)
	return append(dst, byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

func needsQuotes[T string | []byte](e *csvEncoder, s T) bool {
	if e.f.hasNullLiteral && string(s) == e.f.nullLiteral {
		return true
	}
	for i := 0; i < len(s); i++ {
		if e.quoted[s[i]] {
			return true
		}
	}
	return false
}

// jsonObjectEncoder writes a row as a JSON object of typed values:
// numbers as numbers, timestamps as strings, NULL as null.
type jsonObjectEncoder struct {
	keys [][]byte // `"name":` per column, with '{' or ',' before it
	cols []types.Column
	iso  bool
	loc  *time.Location // TIMESTAMP_LTZ values are written as local times in it
}

func newJSONObjectEncoder(f format, cols []types.Column) *jsonObjectEncoder {
	e := &jsonObjectEncoder{iso: f.isoTimestamps, loc: f.loc, cols: cols}
	for i, c := range cols {
		k := []byte{','}
		if i == 0 {
			k[0] = '{'
		}
		k = appendJSONString(k, c.Name)
		e.keys = append(e.keys, append(k, ':'))
	}
	return e
}

func (e *jsonObjectEncoder) object(dst []byte, row []types.Value) []byte {
	if len(row) == 0 {
		return append(dst, "{}"...)
	}
	for c, v := range row {
		dst = e.member(dst, c, v)
	}
	return append(dst, '}')
}

// member appends column c's key and its value v.
func (e *jsonObjectEncoder) member(dst []byte, c int, v types.Value) []byte {
	dst = append(dst, e.keys[c]...)
	if t := e.cols[c].Type; t.Comp != nil {
		return e.compositeJSON(dst, v, t)
	}
	return e.value(dst, v)
}

func (e *jsonObjectEncoder) value(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindNull:
		return append(dst, "null"...)
	case types.KindVarchar:
		return appendJSONString(dst, v.Str())
	case types.KindDouble:
		f := v.Float()
		if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
			// NaN and infinities are not JSON numbers.
			dst = append(dst, '"')
			dst = types.AppendDouble(dst, f)
			return append(dst, '"')
		}
		return types.AppendDouble(dst, f)
	case types.KindTimestamp:
		dst = append(dst, '"')
		if e.iso {
			dst = time.UnixMilli(v.Int()).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
		} else {
			dst = v.AppendText(dst)
		}
		return append(dst, '"')
	case types.KindTimestampLTZ:
		dst = append(dst, '"')
		loc := e.loc
		if loc == nil {
			loc = time.UTC
		}
		layout := types.TimestampLayout
		if e.iso {
			layout = "2006-01-02T15:04:05.000"
		}
		dst = time.UnixMilli(v.Int()).In(loc).AppendFormat(dst, layout)
		return append(dst, '"')
	case types.KindInterval:
		return strconv.AppendInt(dst, v.Int(), 10)
	case types.KindDate, types.KindTime:
		dst = append(dst, '"')
		dst = v.AppendText(dst)
		return append(dst, '"')
	case types.KindBytes:
		// Base64 in a string, as Flink's json format writes BYTES.
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
		return append(dst, '"')
	case types.KindFloat:
		if f := v.Float(); f != f || f > math.MaxFloat32 || f < -math.MaxFloat32 {
			dst = append(dst, '"')
			dst = v.AppendText(dst)
			return append(dst, '"')
		}
	}
	return v.AppendText(dst)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonEncoder writes one JSON object per line.
type jsonEncoder struct{ enc *jsonObjectEncoder }

func (e *jsonEncoder) encode(dst []byte, b *types.Batch) ([]byte, error) {
	for i, kind := range b.Kinds {
		if kind != types.Insert {
			return dst, appendOnly(format{name: formatJSON}, kind)
		}
		dst = e.enc.object(dst, b.Row(i))
		dst = append(dst, '\n')
	}
	return dst, nil
}

func (e *jsonEncoder) appendRow(dst []byte, row []types.Value, cols []int) []byte {
	if len(cols) == 0 {
		return append(dst, "{}\n"...)
	}
	for k, c := range cols {
		dst = e.enc.member(dst, k, row[c])
	}
	return append(dst, '}', '\n')
}

// debeziumEncoder writes one Debezium change event per line: +I and +U as
// "c", -D and -U as "d", and a -U directly followed by +U in the same
// batch as one "u" event.
type debeziumEncoder struct{ enc *jsonObjectEncoder }

func (e *debeziumEncoder) encode(dst []byte, b *types.Batch) ([]byte, error) {
	for i := 0; i < b.Len(); i++ {
		switch kind := b.Kinds[i]; {
		case kind == types.UpdateBefore && i+1 < b.Len() && b.Kinds[i+1] == types.UpdateAfter:
			dst = append(dst, `{"before":`...)
			dst = e.enc.object(dst, b.Row(i))
			dst = append(dst, `,"after":`...)
			dst = e.enc.object(dst, b.Row(i+1))
			dst = append(dst, `,"op":"u"}`+"\n"...)
			i++
		case kind.IsRetraction():
			dst = append(dst, `{"before":`...)
			dst = e.enc.object(dst, b.Row(i))
			dst = append(dst, `,"after":null,"op":"d"}`+"\n"...)
		default:
			dst = append(dst, `{"before":null,"after":`...)
			dst = e.enc.object(dst, b.Row(i))
			dst = append(dst, `,"op":"c"}`+"\n"...)
		}
	}
	return dst, nil
}
