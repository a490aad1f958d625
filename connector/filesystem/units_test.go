package filesystem

import (
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
)

func TestRollingOptions(t *testing.T) {
	tests := []struct {
		opts     map[string]string
		size     int64
		rollover time.Duration
		err      string
	}{
		{map[string]string{}, 128 << 20, 30 * time.Minute, ""},
		{map[string]string{"sink.rolling-policy.file-size": "1 kb", "sink.rolling-policy.rollover-interval": "10s"}, 1 << 10, 10 * time.Second, ""},
		{map[string]string{"sink.rolling-policy.file-size": "0"}, 0, 0, "option 'sink.rolling-policy.file-size': must be positive"},
		{map[string]string{"sink.rolling-policy.file-size": "big"}, 0, 0, "option 'sink.rolling-policy.file-size': \"big\" does not start"},
		{map[string]string{"sink.rolling-policy.rollover-interval": "1 fortnight"}, 0, 0, "option 'sink.rolling-policy.rollover-interval': \"1 fortnight\": unknown unit"},
		{map[string]string{"sink.rolling-policy.rollover-interval": "0s"}, 0, 0, "must be positive"},
	}
	for _, tc := range tests {
		opts := map[string]string{"format": "csv", "path": t.TempDir()}
		for k, v := range tc.opts {
			opts[k] = v
		}
		s, err := NewSink(connectortest.Table("out", idCols, opts), connector.Env{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: got %v, want %q", tc.opts, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if fs := s.(*Sink); fs.fileSize != tc.size || fs.rollover != tc.rollover {
			t.Errorf("%v: size %d, rollover %v", tc.opts, fs.fileSize, fs.rollover)
		}
	}
}

func TestParsePartName(t *testing.T) {
	tests := []struct {
		name string
		want partName
		ok   bool
	}{
		{".part-0-12.inprogress", partName{0, 12, 0, true}, true},
		{"part-3-7-12.csv", partName{3, 12, 7, false}, true},
		{"part-3-12.json", partName{3, 12, 0, false}, true},
		{".part-3-7-12.inprogress", partName{}, false},
		{"part-3-12.inprogress", partName{}, false},
		{".part-3-12.csv", partName{}, false},
		{"part-a-1.csv", partName{}, false},
		{"part-1-01.csv", partName{}, false},
		{"part-1-1", partName{}, false},
		{"part-1-1.csv.bak", partName{}, false},
		{"notes.txt", partName{}, false},
	}
	for _, tc := range tests {
		got, ok := parsePartName(tc.name)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: got %+v, %v", tc.name, got, ok)
		}
	}
}
