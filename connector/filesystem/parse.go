package filesystem

import (
	"bytes"
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

// parseScalar parses the text b as a value of kind k (any kind but
// VARCHAR, which the decoders handle to share one string per record).
// sep selects the accepted timestamp form. It does not allocate unless it
// fails.
func parseScalar(b []byte, k types.Kind, sep byte) (types.Value, error) {
	t := bytes.TrimSpace(b)
	switch k {
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
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	if i >= len(text) {
		return fmt.Errorf("invalid UTF-8")
	}
	return fmt.Errorf("invalid UTF-8 (byte 0x%02x at byte %d of the value)", text[i], i+1)
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
