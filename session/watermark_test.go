package session

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestWatermarkErrorsAtCreateTable checks that a WATERMARK FOR whose
// expression is not a TIMESTAMP over a TIMESTAMP column of the table is
// refused at CREATE TABLE, with its line and column, and that the table is
// not created.
func TestWatermarkErrorsAtCreateTable(t *testing.T) {
	for _, c := range []struct{ wm, want string }{
		{"ts AS id", "line 3:23: WATERMARK expression id is of type BIGINT; it must be TIMESTAMP(3)"},
		{"ts AS id - 5", "line 3:23: WATERMARK expression id - 5 is of type BIGINT"},
		{"ts AS TIMESTAMP '2024-01-01 00:00:00'", "line 3:23: WATERMARK expression TIMESTAMP '2024-01-01 00:00:00' does not use a TIMESTAMP column of table t"},
		{"ts AS nope - INTERVAL '1' SECOND", "line 3:23: unknown column 'nope'"},
		{"id AS ts", "line 3:3: watermark column 'id' must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), not BIGINT"},
	} {
		t.Run(c.wm, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			src := "CREATE TABLE t (\n  id BIGINT, ts TIMESTAMP(3),\n  WATERMARK FOR " + c.wm + "\n) WITH ('connector' = 'datagen');\n"
			err := s.RunScript(context.Background(), src, RunOptions{Quiet: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if _, ok := s.Catalog.Table("t"); ok {
				t.Fatal("the table was created")
			}
		})
	}
	s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	ok := "CREATE TABLE t (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen');"
	if err := s.RunScript(context.Background(), ok, RunOptions{Quiet: true}); err != nil {
		t.Fatalf("a valid WATERMARK was refused: %v", err)
	}
}

// TestEventTimeOptions checks that the SET keys reach the runtime options.
func TestEventTimeOptions(t *testing.T) {
	s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	var o exec.Options
	s.EventTimeOptions(&o)
	if o.AutoWatermarkInterval != 0 || o.SourceIdleTimeout != 0 || o.StateTTL != 0 {
		t.Fatalf("defaults: %v, %v, %v; want the runtime's (0)", o.AutoWatermarkInterval, o.SourceIdleTimeout, o.StateTTL)
	}
	src := "SET 'pipeline.auto-watermark-interval' = '50 ms';\nSET 'table.exec.source.idle-timeout' = '3 s';\nSET 'table.exec.state.ttl' = '1 h';"
	if err := s.RunScript(context.Background(), src, RunOptions{Quiet: true}); err != nil {
		t.Fatal(err)
	}
	s.EventTimeOptions(&o)
	if o.AutoWatermarkInterval != 50*time.Millisecond || o.SourceIdleTimeout != 3*time.Second || o.StateTTL != time.Hour {
		t.Fatalf("got %v, %v, %v; want 50ms, 3s, 1h", o.AutoWatermarkInterval, o.SourceIdleTimeout, o.StateTTL)
	}
}
