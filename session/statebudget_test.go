package session

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestStateBudgetLine: a checkpointed job with stateful operators says at
// its start how much state each of them keeps in memory before it spills
// and where the figure comes from (auto from the process's memory, or
// 'state.cache.size'); a stateless job, or one without checkpointing
// (whose state stays in memory), says nothing of it.
func TestStateBudgetLine(t *testing.T) {
	const table = "CREATE TABLE t (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000', " +
		"'fields.k.min' = '1', 'fields.k.max' = '9');\n" +
		"CREATE TABLE o (k BIGINT, s BIGINT) WITH ('connector' = 'blackhole');\n"
	for _, c := range []struct {
		name, script string
		memory       int64
		want         string // "" for no line
	}{
		{"auto", "SET 'parallelism.default' = '2';\n" + table + "INSERT INTO o SELECT k, SUM(v) FROM t GROUP BY k;", 8 << 30,
			"state in memory up to 1.0 GiB per stateful operator subtask (2 of them; 'state.cache.size' auto: a quarter of 8.0 GiB)"},
		{"set", "SET 'parallelism.default' = '1';\nSET 'state.cache.size' = '100mb';\n" + table + "INSERT INTO o SELECT k, SUM(v) FROM t GROUP BY k;", 8 << 30,
			"state in memory up to 100.0 MiB per stateful operator subtask (1 of them; set by 'state.cache.size')"},
		{"stateless", "SET 'parallelism.default' = '2';\n" + table + "INSERT INTO o SELECT k, v + 1 FROM t;", 8 << 30, ""},
		// Without checkpointing state stays in memory, unbounded: no line.
		{"no checkpointing", "SET 'parallelism.default' = '2';\n" + table + "INSERT INTO o SELECT k, SUM(v) FROM t GROUP BY k;", 8 << 30, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			script := "SET 'execution.checkpointing.interval' = '1 s';\nSET 'state.checkpoints.dir' = '" + t.TempDir() + "';\n" + c.script
			if c.name == "no checkpointing" {
				script = c.script
			}
			if err := s.RunScript(context.Background(), script, RunOptions{JobName: "b", Exec: exec.Options{MemoryBytes: c.memory}}); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			line := ""
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(l, "state in memory") {
					line = l
				}
			}
			switch {
			case c.want == "" && line != "":
				t.Errorf("the job printed %q", line)
			case c.want != "" && !strings.Contains(line, c.want):
				t.Errorf("stderr line %q, want it to say %q\n%s", line, c.want, stderr.String())
			}
		})
	}
}
