package confval

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeZone parses a time zone as Flink's table.local-time-zone takes it:
// 'default' (the machine's zone), a region id ('Europe/Berlin',
// 'America/New_York'), 'UTC', or a fixed offset ('GMT+08:00', 'UTC-5',
// '+05:30').
func TimeZone(s string) (*time.Location, error) {
	t := strings.TrimSpace(s)
	switch {
	case strings.EqualFold(t, "default"):
		return time.Local, nil
	case t == "":
		return nil, fmt.Errorf("empty time zone: want 'default', a zone id such as 'Europe/Berlin', or an offset such as 'GMT+08:00'")
	}
	if off, ok := zoneOffset(t); ok {
		return time.FixedZone(t, off), nil
	}
	loc, err := time.LoadLocation(t)
	if err != nil || strings.EqualFold(t, "local") {
		return nil, fmt.Errorf("unknown time zone '%s': want 'default', a zone id such as 'Europe/Berlin' or 'UTC', or an offset such as 'GMT+08:00'", s)
	}
	return loc, nil
}

// zoneOffset reads [GMT|UTC]±h[h][:mm] as seconds east of UTC.
func zoneOffset(s string) (int, bool) {
	for _, p := range []string{"GMT", "UTC", "UT"} {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			s = s[len(p):]
			break
		}
	}
	if len(s) < 2 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	hs, ms, hasMin := strings.Cut(s[1:], ":")
	if len(hs) == 4 && !hasMin {
		hs, ms, hasMin = hs[:2], hs[2:], true
	}
	h, err := strconv.Atoi(hs)
	if err != nil || len(hs) > 2 || h > 18 {
		return 0, false
	}
	m := 0
	if hasMin {
		if m, err = strconv.Atoi(ms); err != nil || len(ms) != 2 || m > 59 {
			return 0, false
		}
	}
	return sign * (h*3600 + m*60), true
}
