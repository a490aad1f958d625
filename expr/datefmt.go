package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DateFormat is a compiled date-time pattern in the syntax of Java's
// SimpleDateFormat, which Flink's DATE_FORMAT, TO_TIMESTAMP,
// UNIX_TIMESTAMP and FROM_UNIXTIME take ('yyyy-MM-dd HH:mm:ss'). Supported
// letters: y (year), M (month: M, MM numeric, MMM Jan, MMMM January), d
// (day of month), D (day of year), E (day name: E/EE/EEE Mon, EEEE Monday),
// u (day of week, 1 = Monday), a (AM/PM), H (hour 0-23), k (1-24), K
// (0-11), h (1-12), m, s, S (milliseconds), Z (-0800), X (-08, -0800,
// -08:00; Z for UTC); 'text' is literal text, two single quotes are one; other ASCII
// letters are errors, everything else is literal.
type DateFormat struct {
	pattern string
	fields  []dfField
}

type dfField struct {
	letter byte   // 0 for literal text
	count  int    // repetitions of the letter
	text   string // literal text
}

// dfLetters are the pattern letters DateFormat knows.
const dfLetters = "yMdDEuaHkKhmsSZX"

// CompileDateFormat compiles a SimpleDateFormat pattern; an unknown
// pattern letter or an unclosed quote is an error naming it.
func CompileDateFormat(pattern string) (*DateFormat, error) {
	f := &DateFormat{pattern: pattern}
	lit := func(s string) {
		if n := len(f.fields); n > 0 && f.fields[n-1].letter == 0 {
			f.fields[n-1].text += s
			return
		}
		f.fields = append(f.fields, dfField{text: s})
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			end := i + 1
			var b strings.Builder
			for {
				if end >= len(pattern) {
					return nil, fmt.Errorf("bad date format '%s': unclosed quote at position %d", pattern, i+1)
				}
				if pattern[end] == '\'' {
					if end+1 < len(pattern) && pattern[end+1] == '\'' {
						b.WriteByte('\'')
						end += 2
						continue
					}
					break
				}
				b.WriteByte(pattern[end])
				end++
			}
			lit(b.String())
			i = end + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune(dfLetters, rune(c)) {
				return nil, fmt.Errorf("bad date format '%s': unknown pattern letter '%c' at position %d (letters: y M d D E u a H k K h m s S Z X; quote text with '...')", pattern, c, i+1)
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			f.fields = append(f.fields, dfField{letter: c, count: n})
			i += n
		default:
			lit(string(c))
			i++
		}
	}
	return f, nil
}

// String returns the pattern.
func (f *DateFormat) String() string { return f.pattern }

// unit returns the finest unit, in milliseconds, that the pattern shows of
// a time in UTC: two times in the same unit (floored from the epoch)
// format alike.
func (f *DateFormat) unit() int64 {
	u := int64(86_400_000) // dates, weekdays and the (UTC) offset change by day
	for _, fd := range f.fields {
		switch fd.letter {
		case 'S':
			u = 1
		case 's':
			u = min(u, 1000)
		case 'm':
			u = min(u, 60_000)
		case 'H', 'k', 'K', 'h', 'a':
			u = min(u, 3_600_000)
		}
	}
	return u
}

func appendPadded(dst []byte, n, width int) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// Append appends t formatted by the pattern to dst.
func (f *DateFormat) Append(dst []byte, t time.Time) []byte {
	for _, fd := range f.fields {
		n := fd.count
		switch fd.letter {
		case 0:
			dst = append(dst, fd.text...)
		case 'y':
			if n == 2 {
				dst = appendPadded(dst, t.Year()%100, 2)
			} else {
				dst = appendPadded(dst, t.Year(), n)
			}
		case 'M':
			switch {
			case n >= 4:
				dst = append(dst, t.Month().String()...)
			case n == 3:
				dst = append(dst, t.Month().String()[:3]...)
			default:
				dst = appendPadded(dst, int(t.Month()), n)
			}
		case 'd':
			dst = appendPadded(dst, t.Day(), n)
		case 'D':
			dst = appendPadded(dst, t.YearDay(), n)
		case 'E':
			if n >= 4 {
				dst = append(dst, t.Weekday().String()...)
			} else {
				dst = append(dst, t.Weekday().String()[:3]...)
			}
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			dst = appendPadded(dst, wd, n)
		case 'a':
			if t.Hour() < 12 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case 'H':
			dst = appendPadded(dst, t.Hour(), n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			dst = appendPadded(dst, h, n)
		case 'K':
			dst = appendPadded(dst, t.Hour()%12, n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			dst = appendPadded(dst, h, n)
		case 'm':
			dst = appendPadded(dst, t.Minute(), n)
		case 's':
			dst = appendPadded(dst, t.Second(), n)
		case 'S':
			dst = appendPadded(dst, t.Nanosecond()/1e6, n)
		case 'Z':
			dst = appendOffset(dst, t, false, false)
		case 'X':
			_, off := t.Zone()
			if off == 0 {
				dst = append(dst, 'Z')
				break
			}
			dst = appendOffset(dst, t, n >= 3, n == 1)
		}
	}
	return dst
}

func appendOffset(dst []byte, t time.Time, colon, hoursOnly bool) []byte {
	_, off := t.Zone()
	if off < 0 {
		dst = append(dst, '-')
		off = -off
	} else {
		dst = append(dst, '+')
	}
	dst = appendPadded(dst, off/3600, 2)
	if hoursOnly {
		return dst
	}
	if colon {
		dst = append(dst, ':')
	}
	return appendPadded(dst, off/60%60, 2)
}

var monthNames = func() []string {
	out := make([]string, 12)
	for i := range out {
		out[i] = time.Month(i + 1).String()
	}
	return out
}()

// numericLetter reports whether a pattern letter is read as a number.
func numericLetter(c byte) bool {
	return strings.IndexByte("ydDuHkKhmsS", c) >= 0
}

// Parse reads s by the pattern as a local time in loc (unless the text
// has an offset: Z or X). Fields not in the pattern default to 1970-01-01
// 00:00:00.000. It fails unless the whole of s matches.
func (f *DateFormat) Parse(s string, loc *time.Location) (time.Time, error) {
	year, month, day, hour, minute, sec, milli := 1970, 1, 1, 0, 0, 0, 0
	yday, pm, hasPM, hour12 := 0, false, false, false
	var offset *int
	p := 0
	bad := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("'%s' does not match the date format '%s'", s, f.pattern)
	}
	for i, fd := range f.fields {
		if fd.letter == 0 {
			if !strings.HasPrefix(s[p:], fd.text) {
				return bad()
			}
			p += len(fd.text)
			continue
		}
		if numericLetter(fd.letter) || fd.letter == 'M' && fd.count <= 2 {
			// Adjacent numeric fields take exactly their width; otherwise
			// read as many digits as there are.
			maxw := 10
			if i+1 < len(f.fields) && f.fields[i+1].letter != 0 && (numericLetter(f.fields[i+1].letter) || f.fields[i+1].letter == 'M' && f.fields[i+1].count <= 2) {
				maxw = fd.count
			}
			neg := false
			if fd.letter == 'y' && p < len(s) && s[p] == '-' {
				neg = true
				p++
			}
			start := p
			for p < len(s) && p-start < maxw && s[p] >= '0' && s[p] <= '9' {
				p++
			}
			if p == start {
				return bad()
			}
			n, _ := strconv.Atoi(s[start:p])
			if neg {
				n = -n
			}
			switch fd.letter {
			case 'y':
				if fd.count == 2 && p-start == 2 {
					n += 2000
				}
				year = n
			case 'M':
				month = n
			case 'd':
				day = n
			case 'D':
				yday = n
			case 'H', 'k':
				hour = n % 24
			case 'K', 'h':
				hour, hour12 = n%12, true
			case 'm':
				minute = n
			case 's':
				sec = n
			case 'S':
				milli = n
			}
			continue
		}
		switch fd.letter {
		case 'M':
			found := false
			for mi, name := range monthNames {
				for _, cand := range []string{name, name[:3]} {
					if len(s)-p >= len(cand) && strings.EqualFold(s[p:p+len(cand)], cand) {
						month, p, found = mi+1, p+len(cand), true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				return bad()
			}
		case 'E':
			found := false
			for d := time.Sunday; d <= time.Saturday && !found; d++ {
				for _, cand := range []string{d.String(), d.String()[:3]} {
					if len(s)-p >= len(cand) && strings.EqualFold(s[p:p+len(cand)], cand) {
						p, found = p+len(cand), true
						break
					}
				}
			}
			if !found {
				return bad()
			}
		case 'a':
			if len(s)-p < 2 {
				return bad()
			}
			switch strings.ToUpper(s[p : p+2]) {
			case "AM":
			case "PM":
				pm = true
			default:
				return bad()
			}
			hasPM = true
			p += 2
		case 'Z', 'X':
			if p < len(s) && s[p] == 'Z' {
				z := 0
				offset = &z
				p++
				break
			}
			if p >= len(s) || s[p] != '+' && s[p] != '-' {
				return bad()
			}
			sign := 1
			if s[p] == '-' {
				sign = -1
			}
			p++
			digits := func(w int) (int, bool) {
				if len(s)-p < w {
					return 0, false
				}
				n, err := strconv.Atoi(s[p : p+w])
				if err != nil {
					return 0, false
				}
				p += w
				return n, true
			}
			h, ok := digits(2)
			if !ok {
				return bad()
			}
			m := 0
			if p < len(s) && s[p] == ':' {
				p++
			}
			if p < len(s) && s[p] >= '0' && s[p] <= '9' {
				if m, ok = digits(2); !ok {
					return bad()
				}
			}
			z := sign * (h*3600 + m*60)
			offset = &z
		}
	}
	if p != len(s) {
		return bad()
	}
	if hasPM && pm && (hour12 || hour < 12) {
		hour = hour%12 + 12
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 || milli > 999 {
		return bad()
	}
	if offset != nil {
		loc = time.FixedZone("", *offset)
	}
	var t time.Time
	if yday > 0 {
		t = time.Date(year, 1, yday, hour, minute, sec, milli*1e6, loc)
	} else {
		t = time.Date(year, time.Month(month), day, hour, minute, sec, milli*1e6, loc)
		if t.Day() != day {
			return bad() // 31 February
		}
	}
	return t, nil
}
