package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// notNullScript writes ids 1..n through CASE WHEN id % 3 = 2 THEN NULL
// ELSE id END into a print sink whose id column is NOT NULL.
func notNullScript(n int, set string) string {
	return set + fmt.Sprintf(`
SET 'parallelism.default' = '2';
CREATE TABLE src (id BIGINT, name STRING) WITH ('connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d',
  'fields.name.length' = '3');
CREATE TABLE fo (id BIGINT NOT NULL, tag STRING) WITH ('connector' = 'print');
INSERT INTO fo SELECT CASE WHEN id %% 3 = 2 THEN NULL ELSE id END, 'x' FROM src;
`, n)
}

func runNotNull(t *testing.T, src string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	err := s.RunScript(context.Background(), src, RunOptions{JobName: t.Name(), Exec: exec.Options{BatchSize: 64}})
	return stdout.String(), stderr.String(), err
}

func TestNotNullSinkColumnError(t *testing.T) {
	for _, set := range []string{"", "SET 'table.exec.sink.not-null-enforcer' = 'error';\n"} {
		_, stderr, err := runNotNull(t, notNullScript(1000, set))
		if err == nil {
			t.Fatalf("a NULL written into a NOT NULL column did not fail the job (%q)\nstderr: %s", set, stderr)
		}
		for _, want := range []string{"sink fo", "column 'id' is NOT NULL", "null value is being written", "'table.exec.sink.not-null-enforcer'='DROP'"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
}

func TestNotNullSinkColumnDrop(t *testing.T) {
	const n = 1000
	stdout, stderr, err := runNotNull(t, notNullScript(n, "SET 'table.exec.sink.not-null-enforcer' = 'Drop';\n"))
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr)
	}
	var want []string
	drops := 0
	for id := 1; id <= n; id++ {
		if id%3 == 2 {
			drops++
			continue
		}
		want = append(want, fmt.Sprintf("+I[%d, x]", id))
	}
	var got []string
	forPrintLines(t, stdout, func(kind, row string) { got = append(got, kind+row) })
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %d rows, want %d:\n%s", len(got), len(want), strings.Join(head(got), "\n"))
	}
	wantMsg := fmt.Sprintf("weir: dropped %d row(s) with NULL in a NOT NULL sink column ('table.exec.sink.not-null-enforcer' = 'DROP')", drops)
	if !strings.Contains(stderr, wantMsg) {
		t.Fatalf("stderr does not say %q:\n%s", wantMsg, stderr)
	}
}

// TestNotNullSinkColumnJSONFile is the reported case: a filesystem JSON sink
// must not receive {"id":null}.
func TestNotNullSinkColumnJSONFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	src := fmt.Sprintf(`
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3');
CREATE TABLE fo (id BIGINT NOT NULL) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO fo SELECT CASE WHEN id = 2 THEN NULL ELSE id END FROM src;
`, out)
	_, stderr, err := runNotNull(t, src)
	if err == nil || !strings.Contains(err.Error(), "column 'id' is NOT NULL") {
		t.Fatalf("got error %v, want the NOT NULL violation\nstderr: %s", err, stderr)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(out, e.Name()))
		if strings.Contains(string(data), "null") {
			t.Fatalf("%s holds a NULL id: %s", e.Name(), data)
		}
	}
}
