// Package confval parses configuration values the way Flink writes them:
// durations ("10s", "500 ms", "1 min"; a bare number is milliseconds) and
// memory sizes ("64mb", "1 gb"; a bare number is bytes). SET keys and
// connector options share it.
package confval

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeUnits maps the units of a memory size, as Flink's MemorySize
// accepts them, to their factor.
var sizeUnits = map[string]int64{
	"": 1, "b": 1, "bytes": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "kibibytes": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "mebibytes": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "gibibytes": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40, "tebibytes": 1 << 40,
}

// durationUnits maps the units of a duration, as Flink's TimeUtils
// accepts them, to their length; a number without a unit is milliseconds.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond, "nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond, "microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"": time.Millisecond, "ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// splitAmount splits "128 mb" into 128 and "mb" (lower case).
func splitAmount(s string) (int64, string, error) {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q: %w", s, err)
	}
	return n, strings.ToLower(strings.TrimSpace(s[end:])), nil
}

// MemorySize parses a memory size such as "128mb", "1 gb" or "4096" (bytes).
func MemorySize(s string) (int64, error) {
	n, unit, err := splitAmount(s)
	if err != nil {
		return 0, err
	}
	f, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (use b, kb, mb, gb or tb)", s, unit)
	}
	if n > math.MaxInt64/f {
		return 0, fmt.Errorf("%q: too large", s)
	}
	return n * f, nil
}

// Duration parses a duration such as "30 min", "10s" or "500"
// (milliseconds).
func Duration(s string) (time.Duration, error) {
	n, unit, err := splitAmount(s)
	if err != nil {
		return 0, err
	}
	d, ok := durationUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (use ms, s, min, h or d)", s, unit)
	}
	if n > math.MaxInt64/int64(d) {
		return 0, fmt.Errorf("%q: too large", s)
	}
	return time.Duration(n) * d, nil
}

// Closest returns the candidate within edit distance 2 of key (the nearest
// one), or "" when none is that close: the "did you mean" of a misspelled
// option or SET key.
func Closest(key string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := EditDistance(key, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b (in bytes).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
