// Package options holds the helpers the built-in connectors share to
// validate and parse their WITH options, so that every connector reports a
// bad option the same way: the key, what was wrong, and the valid choices.
package options

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/confval"
)

// CheckKnown returns an error naming every key of opts that is not in valid,
// listing the valid keys (and the closest one, when a key looks misspelled).
// The key 'connector' is always valid.
func CheckKnown(connector string, opts map[string]string, valid []string) error {
	known := make(map[string]bool, len(valid)+1)
	known["connector"] = true
	for _, k := range valid {
		known[k] = true
	}
	var bad []string
	for k := range opts {
		if !known[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	all := make([]string, 0, len(known))
	for k := range known {
		all = append(all, k)
	}
	sort.Strings(all)
	quoted := make([]string, len(bad))
	for i, k := range bad {
		quoted[i] = "'" + k + "'"
	}
	hint := ""
	if s := confval.Closest(bad[0], all); s != "" {
		hint = fmt.Sprintf(" (did you mean '%s'?)", s)
	}
	return fmt.Errorf("%s: unsupported option %s%s; supported options: %s",
		connector, strings.Join(quoted, ", "), hint, strings.Join(all, ", "))
}

// Bool parses option key as 'true' or 'false' (case-insensitive), or
// returns def when it is unset.
func Bool(opts map[string]string, key string, def bool) (bool, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("option '%s': invalid value '%s': expected 'true' or 'false'", key, v)
}

// Int parses option key as a base-10 integer, or returns def when unset.
func Int(opts map[string]string, key string, def int64) (int64, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("option '%s': invalid value '%s': expected an integer", key, v)
	}
	return n, nil
}

// Float parses option key as a number, or returns def when unset.
func Float(opts map[string]string, key string, def float64) (float64, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, fmt.Errorf("option '%s': invalid value '%s': expected a number", key, v)
	}
	return f, nil
}

// Char parses option key as a single ASCII character, or returns def when
// unset. The escape "\t" is accepted for a tab.
func Char(opts map[string]string, key string, def byte) (byte, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	if v == `\t` {
		return '\t', nil
	}
	if len(v) != 1 || v[0] >= 0x80 || v[0] == '\n' || v[0] == '\r' {
		return 0, fmt.Errorf("option '%s': invalid value '%s': expected a single ASCII character", key, v)
	}
	return v[0], nil
}

// OneOf returns option key, which must be one of choices (case-insensitive;
// the choice's spelling is returned), or def when unset.
func OneOf(opts map[string]string, key, def string, choices ...string) (string, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	for _, c := range choices {
		if strings.EqualFold(strings.TrimSpace(v), c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("option '%s': invalid value '%s': expected one of '%s'", key, v, strings.Join(choices, "', '"))
}

// Parallelism parses the 'sink.parallelism' option: 0 when unset, otherwise
// a positive integer.
func Parallelism(opts map[string]string) (int, error) {
	n, err := Int(opts, "sink.parallelism", 0)
	if err != nil {
		return 0, err
	}
	if _, set := opts["sink.parallelism"]; set && (n < 1 || n > 1<<15) {
		return 0, fmt.Errorf("option 'sink.parallelism': invalid value '%d': expected a positive integer", n)
	}
	return int(n), nil
}
