package builtin

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

func TestRegistry(t *testing.T) {
	r := Registry()
	if got, want := r.Names(), []string{"blackhole", "datagen", "filesystem", "kafka", "nexmark", "print", "upsert-kafka"}; !slices.Equal(got, want) {
		t.Errorf("Names %v, want %v", got, want)
	}
	cols := []types.Column{{Name: "x", Type: types.Int}}
	dir := t.TempDir()
	tests := []struct {
		opts   map[string]string
		source bool
		want   string // "" for success
	}{
		{map[string]string{"connector": "datagen", "number-of-rows": "1"}, true, ""},
		{map[string]string{"connector": "filesystem", "format": "csv", "path": dir}, true, ""},
		{map[string]string{"connector": "filesystem", "format": "csv", "path": dir}, false, ""},
		{map[string]string{"connector": "print"}, false, ""},
		{map[string]string{"connector": "blackhole"}, false, ""},
		{map[string]string{"connector": "print"}, true, "connector 'print' can only be written to"},
		{map[string]string{"connector": "datagen"}, false, "connector 'datagen' can only be read"},
		{map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "localhost:9092", "format": "json", "scan.startup.mode": "earliest-offset"}, true, ""},
		{map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "localhost:9092", "format": "json"}, false, ""},
		{map[string]string{"connector": "kafka", "topic": "t", "format": "json"}, false, "missing option 'properties.bootstrap.servers'"},
		{map[string]string{"connector": "kafak"}, true, "unknown connector 'kafak'"},
		{map[string]string{"connector": "datagen", "rows-per-second": "x"}, true, "table t: option 'rows-per-second'"},
	}
	for _, tc := range tests {
		tbl := connectortest.Table("t", cols, tc.opts)
		var err error
		if tc.source {
			_, err = r.Source(tbl, connector.Env{})
		} else {
			_, err = r.Sink(tbl, connector.Env{})
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.opts, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
	_, err := r.Source(connectortest.Table("t", cols, map[string]string{"connector": "nope"}), connector.Env{})
	if !errors.Is(err, connector.ErrUnknownConnector) {
		t.Errorf("got %v", err)
	}
}
