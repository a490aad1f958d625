package options

import (
	"strings"
	"testing"
	"time"
)

func TestCheckKnown(t *testing.T) {
	tests := []struct {
		opts map[string]string
		want string // substring of the error; "" for none
	}{
		{map[string]string{"connector": "x", "path": "p"}, ""},
		{map[string]string{"connector": "x", "pth": "p"}, "unsupported option 'pth' (did you mean 'path'?); supported options: connector, format, path"},
		{map[string]string{"zzzzzzzz": "p", "b": "1"}, "unsupported option 'b', 'zzzzzzzz'"},
	}
	for _, tc := range tests {
		err := CheckKnown("x", tc.opts, []string{"path", "format"})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: unexpected error %v", tc.opts, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %q", tc.opts, err, tc.want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 with millis; "" for an error
	}{
		{"2024-01-01 12:00:00", "2024-01-01T12:00:00.000Z"},
		{"2024-02-29 23:59:59.5", "2024-02-29T23:59:59.500Z"},
		{"2024-01-01T12:00:00.123Z", "2024-01-01T12:00:00.123Z"},
		{"1969-12-31 23:59:59.999999", "1969-12-31T23:59:59.999Z"},
		{"1900-03-01 00:00:00", "1900-03-01T00:00:00.000Z"},
		{"2023-02-29 00:00:00", ""},
		{"2024-01-01", ""},
		{"2024-01-01 12:00:00.", ""},
		{"2024-01-01 12:0x:00", ""},
	}
	for _, tc := range tests {
		ms, err := ParseTimestamp([]byte(tc.in))
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: want an error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.in, got, tc.want)
		}
	}
}
