package filesystem

import (
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// TestChangelogModes checks what the source emits and the sink accepts
// per format: 'debezium-json' is a changelog with every row kind, 'csv'
// and 'json' are insert-only.
func TestChangelogModes(t *testing.T) {
	cols := []types.Column{{Name: "x", Type: types.Int}}
	path := writeFile(t, t.TempDir(), "in", "")
	for _, c := range []struct {
		format string
		want   connector.ChangelogMode
	}{
		{"csv", connector.ModeInsertOnly},
		{"json", connector.ModeInsertOnly},
		{"debezium-json", connector.ModeRetract},
	} {
		s, err := openSource(t, cols, map[string]string{"format": c.format, "path": path})
		if err != nil {
			t.Fatal(err)
		}
		if got := connector.SourceChangelogMode(s); got != c.want {
			t.Errorf("source, format %s: mode %s, want %s", c.format, got, c.want)
		}
		w, sink := newSinkWriter(t, map[string]string{"format": c.format, "path": t.TempDir()}, 0, 1)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := connector.SinkChangelogMode(sink); got != c.want {
			t.Errorf("sink, format %s: mode %s, want %s", c.format, got, c.want)
		}
		what, fix := sink.ChangelogHint()
		if what != "format '"+c.format+"'" || (fix == "") != (c.format == "debezium-json") {
			t.Errorf("sink, format %s: hint %q, %q", c.format, what, fix)
		}
	}
}
