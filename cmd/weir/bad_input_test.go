package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// runBinary runs the weir binary in dir and returns its exit code, stdout
// and stderr.
func runBinary(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	needBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit) && ctx.Err() == nil:
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("weir %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	return 0, "", ""
}

// committedLines returns the lines of the final part files of a filesystem
// sink folder (names not starting with '.'), sorted.
func committedLines(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	return lines
}

// TestNotNullSinkColumnBinary is the reported case through `weir run`: a
// NULL for a NOT NULL column of a JSON file sink fails the job, naming the
// table and the column, and writes no {"id":null}; with the DROP enforcer
// the row is dropped, counted, and the others are written.
func TestNotNullSinkColumnBinary(t *testing.T) {
	dir := t.TempDir()
	script := func(set string) string {
		return set + `
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3');
CREATE TABLE fo (id BIGINT NOT NULL) WITH ('connector' = 'filesystem', 'path' = 'out', 'format' = 'json');
INSERT INTO fo SELECT CASE WHEN id = 2 THEN NULL ELSE id END FROM src;
`
	}
	if err := os.WriteFile(filepath.Join(dir, "error.sql"), []byte(script("")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runBinary(t, dir, "run", "error.sql")
	if code == 0 {
		t.Fatalf("exit code 0 for a NULL into a NOT NULL column\nstderr:\n%s", stderr)
	}
	for _, want := range []string{"sink fo: column 'id' is NOT NULL, however, a null value is being written into it", "'table.exec.sink.not-null-enforcer'='DROP'"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, l := range committedLines(t, filepath.Join(dir, "out")) {
		if strings.Contains(l, "null") {
			t.Fatalf("the sink committed %s", l)
		}
	}

	drop := filepath.Join(dir, "drop")
	if err := os.Mkdir(drop, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drop, "drop.sql"), []byte(script("SET 'table.exec.sink.not-null-enforcer' = 'drop';")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runBinary(t, drop, "run", "drop.sql")
	if code != 0 {
		t.Fatalf("exit code %d with the DROP enforcer\nstderr:\n%s", code, stderr)
	}
	if want := "weir: dropped 1 row(s) with NULL in a NOT NULL sink column"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	got := strings.Join(committedLines(t, filepath.Join(drop, "out")), "\n")
	if want := "{\"id\":1}\n{\"id\":3}"; got != want {
		t.Fatalf("committed rows:\n%s\nwant:\n%s", got, want)
	}
}

// TestBadSetBinary: `weir run` stops at a misspelled SET key or a bad value,
// with the line and column of the SET, before anything runs.
func TestBadSetBinary(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, sql string
		want      []string
	}{
		{"misspelled.sql", "SET 'parallelism.default' = '1';\nSET 'execution.checkpointing.intervall' = '1 s';\n",
			[]string{"line 2:1: SET: unknown key 'execution.checkpointing.intervall' (did you mean 'execution.checkpointing.interval'?)", "SET 'execution.checkpointing.intervall' = '1 s';\n  ^"}},
		{"parsecs.sql", "\n  SET 'execution.checkpointing.interval' = '5 parsecs';\n",
			[]string{"line 2:3: SET 'execution.checkpointing.interval' = '5 parsecs': expected a duration", `unknown unit "parsecs"`}},
		{"two.sql", "SET 'parallelism.default' = 'two';\n",
			[]string{"line 1:1: SET 'parallelism.default' = 'two': expected a whole number from 1 to 128"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, c.name), []byte(c.sql+`
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE o (id BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT id FROM src;
`), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runBinary(t, dir, "run", c.name)
			if code != 1 {
				t.Fatalf("exit code %d, want 1\nstderr:\n%s", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if stdout != "" {
				t.Errorf("the job ran: stdout %q", stdout)
			}
		})
	}
}
