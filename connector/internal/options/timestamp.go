package options

import "errors"

var errTimestamp = errors.New("expected yyyy-mm-dd hh:mm:ss[.fff]")

// ParseTimestamp parses "yyyy-mm-dd hh:mm:ss[.f...]" (or with 'T' between
// date and time, and an optional trailing 'Z') into milliseconds since the
// Unix epoch, UTC. Fractions beyond milliseconds are truncated. It does not
// allocate.
func ParseTimestamp(b []byte) (int64, error) {
	if len(b) > 0 && b[len(b)-1] == 'Z' {
		b = b[:len(b)-1]
	}
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' || b[16] != ':' {
		return 0, errTimestamp
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	minute, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, errTimestamp
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return 0, errors.New("timestamp field out of range")
	}
	var millis int64
	if rest := b[19:]; len(rest) > 0 {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return 0, errTimestamp
		}
		frac := rest[1:]
		for i, c := range frac {
			if c < '0' || c > '9' {
				return 0, errTimestamp
			}
			if i < 3 {
				millis = millis*10 + int64(c-'0')
			}
		}
		for i := len(frac); i < 3; i++ {
			millis *= 10
		}
	}
	days := daysFromCivil(year, month, day)
	return ((days*24+hour)*60+minute)*60_000 + sec*1000 + millis, nil
}

func digits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func daysIn(year, month int64) int64 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
