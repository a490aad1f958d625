package filesystem

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// Timestamp separators accepted between date and time.
const (
	tsAny byte = 0 // ' ' or 'T'
	tsSQL byte = ' '
	tsISO byte = 'T'
)

// parseScalar parses the text b as a value of type typ (any kind but
// VARCHAR, which the decoders handle to share one string per record).
// sep selects the accepted timestamp form. BYTES are base64, as Flink's
// formats write them. It does not allocate unless it fails (or for BYTES
// and wide DECIMALs).
func parseScalar(b []byte, typ types.Type, sep byte) (types.Value, error) {
	t := bytes.TrimSpace(b)
	k := typ.Kind
	switch k {
	case types.KindTinyInt, types.KindSmallInt:
		if n, ok := parseInt(t); ok {
			if lo, hi := k.IntegerBounds(); n >= lo && n <= hi {
				return types.BigIntValue(n).WithKind(k), nil
			}
		}
	case types.KindFloat:
		if f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(t), len(t)), 32); err == nil {
			return types.FloatValue(f), nil
		}
	case types.KindDecimal:
		if v, err := types.ParseDecimalBytes(t, int(typ.P), int(typ.S)); err == nil {
			return v, nil
		}
		return types.Value{}, fmt.Errorf("%w as %s", parseError(b, k), typ.Name())
	case types.KindDate:
		if d, ok := parseDate(t); ok {
			return types.DateValue(d), nil
		}
	case types.KindTime:
		if ms, err := parseTimeOfDay(t); err == nil {
			return types.TimeValue(ms), nil
		}
	case types.KindBytes:
		out := make([]byte, base64.StdEncoding.DecodedLen(len(t)))
		if n, err := base64.StdEncoding.Decode(out, t); err == nil {
			return types.BytesValue(string(out[:n])), nil
		}
		return types.Value{}, fmt.Errorf("%w: want base64", parseError(b, k))
	case types.KindBoolean:
		switch {
		case bytes.EqualFold(t, []byte("true")):
			return types.BoolValue(true), nil
		case bytes.EqualFold(t, []byte("false")):
			return types.BoolValue(false), nil
		}
	case types.KindInt, types.KindBigInt, types.KindInterval:
		if n, ok := parseInt(t); ok && (k != types.KindInt || (n >= math.MinInt32 && n <= math.MaxInt32)) {
			return types.BigIntValue(n).WithKind(k), nil
		}
	case types.KindDouble:
		// The string does not outlive the call: the error, which would
		// hold it, is dropped.
		if f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(t), len(t)), 64); err == nil {
			return types.DoubleValue(f), nil
		}
	case types.KindTimestamp, types.KindTimestampLTZ:
		// A TIMESTAMP_LTZ comes back as its local time (see localToInstant).
		if len(t) > 10 && (sep == tsAny || t[10] == sep) {
			if ms, err := options.ParseTimestamp(t); err == nil {
				return types.TimestampValue(ms).WithKind(k), nil
			}
		}
	}
	return types.Value{}, parseError(b, k)
}

// parseDate parses yyyy-mm-dd as days since 1970-01-01, without allocating.
func parseDate(t []byte) (int64, bool) {
	if len(t) != 10 || t[4] != '-' || t[7] != '-' {
		return 0, false
	}
	num := func(b []byte) (int, bool) {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(t[:4])
	m, ok2 := num(t[5:7])
	d, ok3 := num(t[8:])
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	tm := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if tm.Month() != time.Month(m) || tm.Day() != d || tm.Year() != y {
		return 0, false
	}
	return tm.Unix() / 86_400, true
}

// parseTimeOfDay parses hh:mm[:ss[.fff]] as milliseconds since midnight,
// dropping fractions (TIME(0)).
func parseTimeOfDay(t []byte) (int64, error) {
	two := func(i int) (int64, bool) {
		if i+2 > len(t) || t[i] < '0' || t[i] > '9' || t[i+1] < '0' || t[i+1] > '9' {
			return 0, false
		}
		return int64(t[i]-'0')*10 + int64(t[i+1]-'0'), true
	}
	h, ok1 := two(0)
	m, ok2 := two(3)
	var s int64
	ok3 := true
	if len(t) > 5 {
		s, ok3 = two(6)
		ok3 = ok3 && t[5] == ':' && (len(t) == 8 || t[8] == '.')
	}
	if !ok1 || !ok2 || !ok3 || len(t) < 5 || t[2] != ':' || h > 23 || m > 59 || s > 59 {
		return 0, errors.New("bad time")
	}
	return h*3_600_000 + m*60_000 + s*1000, nil
}

func parseError(b []byte, k types.Kind) error {
	const maxShown = 64
	if len(b) > maxShown {
		return fmt.Errorf("cannot parse %q... as %s", b[:maxShown], k)
	}
	return fmt.Errorf("cannot parse %q as %s", b, k)
}

// parseInt parses an optionally signed decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (math.MaxUint64-9)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return int64(-n), true
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// pendingString is a VARCHAR value whose text sits at buf[start:end] of a
// decoder's scratch buffer; it is set once per record from one string.
type pendingString struct {
	dst        *types.Value
	start, end int
}

// strings is the VARCHAR text of one record, turned into values with one
// allocation for the whole record.
type recordStrings struct {
	buf     []byte
	pending []pendingString
}

func (s *recordStrings) reset() {
	s.buf = s.buf[:0]
	s.pending = s.pending[:0]
}

// add appends text as the pending value of *dst, or fails if text is not
// valid UTF-8.
func (s *recordStrings) add(dst *types.Value, text []byte) error {
	if !utf8.Valid(text) {
		return invalidUTF8(text)
	}
	start := len(s.buf)
	s.buf = append(s.buf, text...)
	s.pending = append(s.pending, pendingString{dst: dst, start: start, end: len(s.buf)})
	return nil
}

// invalidUTF8 describes the first byte of text that is not valid UTF-8.
func invalidUTF8(text []byte) error {
	i := firstInvalidUTF8(text)
	if i >= len(text) {
		return fmt.Errorf("invalid UTF-8")
	}
	return fmt.Errorf("invalid UTF-8 (byte 0x%02x at byte %d of the value)", text[i], i+1)
}

// firstInvalidUTF8 returns the index of the first byte of text that does
// not start a valid UTF-8 sequence, or len(text).
func firstInvalidUTF8(text []byte) int {
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return i
}

// finish sets every pending value from one string holding all the text.
func (s *recordStrings) finish() {
	if len(s.pending) == 0 {
		return
	}
	all := string(s.buf)
	for _, p := range s.pending {
		*p.dst = types.StringValue(all[p.start:p.end])
	}
}

// localToInstant turns the local time ms (milliseconds of a wall clock,
// as parseScalar reads a TIMESTAMP_LTZ) in loc into the instant's
// milliseconds since the epoch.
func localToInstant(ms int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return ms
	}
	w := time.UnixMilli(ms).UTC()
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc).UnixMilli()
}
