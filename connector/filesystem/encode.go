package filesystem

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
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
	// hasComp: a column is of a ROW, ARRAY or MAP type (appendRow then
	// takes column's way for every field).
	hasComp bool
	// all is 0, 1, 2, …: the columns encode writes (every one).
	all []int
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
	for _, c := range cols {
		e.hasComp = e.hasComp || c.Type.Comp != nil
	}
	return e
}

func (e *csvEncoder) encode(dst []byte, b *types.Batch) ([]byte, error) {
	// Every column, in order: appendRow's fields (picked columns) serve
	// whole rows too.
	for len(e.all) < b.Width {
		e.all = append(e.all, len(e.all))
	}
	all := e.all[:b.Width]
	for i, kind := range b.Kinds {
		if kind != types.Insert {
			return dst, appendOnly(e.f, kind)
		}
		dst = e.appendRow(dst, b.Row(i), all)
	}
	return dst, nil
}

func (e *csvEncoder) appendRow(dst []byte, row []types.Value, cols []int) []byte {
	if e.hasComp {
		for k, c := range cols {
			if k > 0 {
				dst = append(dst, e.f.delim)
			}
			dst = e.column(dst, k, row[c])
		}
		return append(dst, '\n')
	}
	for k, c := range cols {
		if k > 0 {
			dst = append(dst, e.f.delim)
		}
		// field's cases, inline for the common kinds: a Value is not
		// copied, and no call is made but the one that writes it.
		switch v := &row[c]; v.Kind() {
		case types.KindBigInt, types.KindInt, types.KindSmallInt, types.KindTinyInt:
			dst = appendInt(dst, v.Int())
		case types.KindVarchar:
			dst = e.text(dst, v.Str())
		case types.KindTimestamp, types.KindTimestampLTZ:
			dst = e.timestamp(dst, v.Kind(), v.Int())
		default:
			dst = e.field(dst, *v)
		}
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

// appendInt appends n in decimal, as strconv.AppendInt(dst, n, 10) does.
// Up to 16 digits it computes eight digits at a time in one word
// (eightDigits) and stores the word whole.
func appendInt(dst []byte, n int64) []byte {
	u := uint64(n)
	if n < 0 {
		dst = append(dst, '-')
		u = -u
	}
	if u < 1e8 {
		return appendUpTo8(dst, u)
	}
	if u < 1e16 {
		hi := u / 1e8
		dst = appendUpTo8(dst, hi)
		return append8(dst, u-hi*1e8)
	}
	return appendIntLoop(dst, u)
}

// eightDigits returns the eight decimal digits of u < 10^8, zero-padded,
// as a little-endian word of digit values 0-9: its lowest byte is the
// most significant digit. The divisions work on all lanes of the word at
// once: two of four digits (32-bit lanes), then four of two (16-bit
// lanes); x*10486>>20 is x/100 for x < 10^4 and x*103>>10 is x/10 for
// x < 100, and no lane's product reaches the lane above it.
func eightDigits(u uint64) uint64 {
	hi := u / 10000
	v := hi | (u-hi*10000)<<32
	top := (v * 10486 >> 20) & 0x0000007f_0000007f
	v = top | (v-top*100)<<16
	top = (v * 103 >> 10) & 0x000f000f_000f000f
	return top | (v-top*10)<<8
}

// appendUpTo8 appends u < 10^8 in decimal.
func appendUpTo8(dst []byte, u uint64) []byte {
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	d := eightDigits(u)
	// The leading zeros are the lowest bytes that are 0; u > 0 has at
	// most seven.
	z := uint(bits.TrailingZeros64(d)) &^ 7
	dst = binary.LittleEndian.AppendUint64(dst, (d+0x30303030_30303030)>>z)
	return dst[:len(dst)-int(z>>3)]
}

// append8 appends u < 10^8 as eight decimal digits, zero-padded.
func append8(dst []byte, u uint64) []byte {
	return binary.LittleEndian.AppendUint64(dst, eightDigits(u)+0x30303030_30303030)
}

// appendIntLoop appends u (17 digits or more) in decimal, two digits at a
// time.
func appendIntLoop(dst []byte, u uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		buf[i], buf[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		i--
		buf[i] = byte('0' + u)
	}
	return append(dst, buf[i:]...)
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
	if e.below == 0 || len(b) < 8 {
		return e.plainBytes(b)
	}
	// Bytes 8 at a time: a word with no byte below e.below holds none of
	// the quoted bytes (hasLess of Bit Twiddling Hacks, exact for a bound
	// up to 128). The words' tests are or'ed, two words a step, the last
	// word overlapping the one before; only text with a byte below the
	// bound (a space, a digit, a comma) is then read byte by byte.
	lo := uint64(e.below) * 0x01010101_01010101
	w := binary.LittleEndian.Uint64(b[len(b)-8:])
	acc := (w - lo) &^ w
	rest := b
	for len(rest) >= 16 {
		w, x := binary.LittleEndian.Uint64(rest), binary.LittleEndian.Uint64(rest[8:])
		acc |= (w-lo)&^w | (x-lo)&^x
		rest = rest[16:]
	}
	if len(rest) >= 8 {
		w := binary.LittleEndian.Uint64(rest)
		acc |= (w - lo) &^ w
	}
	return acc&0x80808080_80808080 == 0 || e.plainBytes(b)
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
		return e.timestamp(dst, v.Kind(), v.Int())
	}
	return v.AppendTextIn(dst, e.f.loc)
}

// timestamp appends a TIMESTAMP or TIMESTAMP_LTZ (kind k, ms milliseconds
// since the epoch) as types.Value.AppendTextIn does
// (types.TimestampLayout: milliseconds last), formatting the text up to
// the second once per second (a zone's offset is whole seconds).
func (e *csvEncoder) timestamp(dst []byte, k types.Kind, ms int64) []byte {
	sec := ms / 1000
	if ms%1000 < 0 {
		sec--
	}
	if e.tsText == nil || e.tsSec != sec || e.tsKind != k {
		var v types.Value
		if k == types.KindTimestampLTZ {
			v = types.TimestampLTZValue(ms)
		} else {
			v = types.TimestampValue(ms)
		}
		t := v.AppendTextIn(e.tsText[:0], e.f.loc)
		e.tsText, e.tsSec, e.tsKind = t[:len(t)-3], sec, k
	}
	dst = append(dst, e.tsText...)
	// The three digits of the milliseconds f: f*41>>12 is f/100 and
	// r*103>>10 is r/10 for these ranges (tested for all f).
	f := uint32(ms - sec*1000)
	h := f * 41 >> 12
	r := f - h*100
	t := r * 103 >> 10
	return append(dst, byte('0'+h), byte('0'+t), byte('0'+r-t*10))
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
