package session

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"500", 500 * time.Millisecond, false},
		{"500 ms", 500 * time.Millisecond, false},
		{"10s", 10 * time.Second, false},
		{"1 min", time.Minute, false},
		{"2h", 2 * time.Hour, false},
		{"1 d", 24 * time.Hour, false},
		{"", 0, true},
		{"fast", 0, true},
		{"3 weeks", 0, true},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"1024", 1024, false},
		{"64mb", 64 << 20, false},
		{"1 gb", 1 << 30, false},
		{"512k", 512 << 10, false},
		{"lots", 0, true},
		{"5 parsecs", 0, true},
	}
	for _, c := range cases {
		got, err := ParseBytes(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}
