package confval

import (
	"strings"
	"testing"
	"time"
)

func TestTimeZone(t *testing.T) {
	at := time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in     string
		offset int // seconds east of UTC on 2024-01-15
	}{
		{"UTC", 0}, {"GMT+08:00", 8 * 3600}, {"UTC-5", -5 * 3600}, {"+05:30", 5*3600 + 1800},
		{"-0930", -(9*3600 + 1800)}, {"Asia/Kolkata", 5*3600 + 1800}, {"America/New_York", -5 * 3600},
	} {
		loc, err := TimeZone(c.in)
		if err != nil {
			if strings.Contains(c.in, "/") {
				t.Logf("%s: %v (no zone database?)", c.in, err)
				continue
			}
			t.Fatalf("%s: %v", c.in, err)
		}
		if _, off := at.In(loc).Zone(); off != c.offset {
			t.Errorf("%s: offset %d, want %d", c.in, off, c.offset)
		}
	}
	if loc, err := TimeZone("default"); err != nil || loc != time.Local {
		t.Errorf("default: %v, %v; want the machine's zone", loc, err)
	}
	for _, bad := range []string{"", "Mars/Olympus", "GMT+25:00", "+5:3", "local", "08:00"} {
		if _, err := TimeZone(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
