package confval

import (
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"128mb", 128 << 20, ""},
		{"1 gb", 1 << 30, ""},
		{"128MB", 128 << 20, ""},
		{"4096", 4096, ""},
		{"10 b", 10, ""},
		{"64k", 64 << 10, ""},
		{" 2 tb ", 2 << 40, ""},
		{"mb", 0, "does not start with a number"},
		{"1.5mb", 0, "unknown unit \".5mb\""},
		{"3 parsecs", 0, "unknown unit"},
		{"99999999999 tb", 0, "too large"},
		{"1024", 1024, ""},
		{"64mb", 64 << 20, ""},
		{"512k", 512 << 10, ""},
		{"16 MiB", 16 << 20, ""},
		{"lots", 0, "does not start with a number"},
		{"5 parsecs", 0, "unknown unit"},
	}
	for _, tc := range tests {
		got, err := MemorySize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"30 min", 30 * time.Minute, ""},
		{"10s", 10 * time.Second, ""},
		{"500", 500 * time.Millisecond, ""},
		{"250 ms", 250 * time.Millisecond, ""},
		{"2 h", 2 * time.Hour, ""},
		{"1d", 24 * time.Hour, ""},
		{"3 Minutes", 3 * time.Minute, ""},
		{"", 0, "does not start with a number"},
		{"5 weeks", 0, "unknown unit"},
		{"9999999999999 d", 0, "too large"},
		{"500 ms", 500 * time.Millisecond, ""},
		{"1 min", time.Minute, ""},
		{"1 d", 24 * time.Hour, ""},
		{"fast", 0, "does not start with a number"},
		{"3 weeks", 0, "unknown unit"},
	}
	for _, tc := range tests {
		got, err := Duration(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	cases := []struct {
		a, b string
		dist int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"interval", "intervall", 1}, {"defualt", "default", 2},
	}
	for _, c := range cases {
		if d := EditDistance(c.a, c.b); d != c.dist {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.dist)
		}
		if d := EditDistance(c.b, c.a); d != c.dist {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.b, c.a, d, c.dist)
		}
	}
	keys := []string{"path", "format", "sink.parallelism"}
	for key, want := range map[string]string{"pth": "path", "fromat": "format", "sink.paralelism": "sink.parallelism", "compression": ""} {
		if got := Closest(key, keys); got != want {
			t.Errorf("Closest(%q) = %q, want %q", key, got, want)
		}
	}
}
