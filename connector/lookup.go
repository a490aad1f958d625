package connector

import (
	"fmt"
	"strings"
	"time"

	"github.com/weir-sql/weir/confval"
)

// LookupOptionKeys are the table options of a table read by a lookup join
// (FOR SYSTEM_TIME AS OF a processing-time attribute), as Flink names them.
var LookupOptionKeys = []string{"lookup.cache", "lookup.full-cache.reload-strategy",
	"lookup.full-cache.periodic-reload.interval", "lookup.join.cache.ttl"}

// DefaultLookupReload is how often a lookup table is loaded again when no
// option says (Flink's filesystem default for lookup.join.cache.ttl).
const DefaultLookupReload = time.Hour

// LookupReload reads the lookup options of t: the table is cached whole
// ('lookup.cache' = 'FULL', the only mode) and loaded again periodically
// ('lookup.full-cache.reload-strategy' = 'PERIODIC', the only strategy),
// every 'lookup.full-cache.periodic-reload.interval', or else every
// 'lookup.join.cache.ttl' (default 1 h); '0' never reloads.
func LookupReload(t *Table) (time.Duration, error) {
	if v, ok := t.Options["lookup.cache"]; ok && !strings.EqualFold(v, "FULL") {
		return 0, fmt.Errorf("option 'lookup.cache' = '%s': only 'FULL' is supported (the whole table is loaded into memory)", v)
	}
	if v, ok := t.Options["lookup.full-cache.reload-strategy"]; ok && !strings.EqualFold(v, "PERIODIC") {
		return 0, fmt.Errorf("option 'lookup.full-cache.reload-strategy' = '%s': only 'PERIODIC' is supported", v)
	}
	for _, k := range []string{"lookup.full-cache.periodic-reload.interval", "lookup.join.cache.ttl"} {
		if v, ok := t.Options[k]; ok {
			d, err := confval.Duration(v)
			if err != nil {
				return 0, fmt.Errorf("option '%s': %w", k, err)
			}
			if d < 0 {
				return 0, fmt.Errorf("option '%s' = '%s': must not be negative", k, v)
			}
			return d, nil
		}
	}
	return DefaultLookupReload, nil
}
