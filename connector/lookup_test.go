package connector

import (
	"strings"
	"testing"
	"time"
)

func TestLookupReload(t *testing.T) {
	cases := []struct {
		opts map[string]string
		want time.Duration
		err  string
	}{
		{map[string]string{}, time.Hour, ""},
		{map[string]string{"lookup.cache": "full"}, time.Hour, ""},
		{map[string]string{"lookup.join.cache.ttl": "10 min"}, 10 * time.Minute, ""},
		{map[string]string{"lookup.full-cache.periodic-reload.interval": "30s", "lookup.join.cache.ttl": "10 min"}, 30 * time.Second, ""},
		{map[string]string{"lookup.full-cache.periodic-reload.interval": "0", "lookup.full-cache.reload-strategy": "PERIODIC"}, 0, ""},
		{map[string]string{"lookup.cache": "PARTIAL"}, 0, "only 'FULL'"},
		{map[string]string{"lookup.full-cache.reload-strategy": "TIMED"}, 0, "only 'PERIODIC'"},
		{map[string]string{"lookup.join.cache.ttl": "soon"}, 0, "option 'lookup.join.cache.ttl'"},
	}
	for _, c := range cases {
		got, err := LookupReload(&Table{Name: "t", Options: c.opts})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want one containing %q", c.opts, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: %v, %v; want %v", c.opts, got, err, c.want)
		}
	}
}
