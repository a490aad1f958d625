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

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/state"
)

// keyLayout1Script is the query of the savepoint in testdata/keylayout1,
// written by Weir before state key layout 2 (state keyed by types.HashKey,
// GroupAggregate's own table layout) at parallelism 2, about 7,000 rows into
// the sequence: a sum per (INT, VARCHAR) key. Its statement must stay as it
// is, since the operator ids come from it.
func keyLayout1Script(dir string, par int) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '200ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.savepoints.dir' = '%s';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '29999', 'rows-per-second' = '500000');
CREATE TABLE sums (k INT, t VARCHAR, s BIGINT, c BIGINT) WITH ('connector' = 'print');
INSERT INTO sums SELECT CAST(id %% 50 AS INT), CAST(id %% 3 AS VARCHAR), SUM(id), COUNT(*) FROM ev GROUP BY CAST(id %% 50 AS INT), CAST(id %% 3 AS VARCHAR);
`, par, filepath.Join(dir, "ck"), filepath.Join(dir, "sp"))
}

// TestRestoreKeyLayout1Savepoint restores a savepoint of key layout 1 (a
// fixture written by the previous version) at the same and at another
// parallelism: every new subtask migrates the old state into layout 2 and
// keeps its own key groups, and the final sums are the batch answer (every
// key gets rows after the savepoint, so every final row depends on the
// migrated state).
func TestRestoreKeyLayout1Savepoint(t *testing.T) {
	fixture := filepath.Join("testdata", "keylayout1", "savepoint")
	c, err := checkpoint.Load(checkpoint.OSFS{}, fixture)
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta.KeyLayoutOf() != 1 || c.Meta.FormatVersion != 3 {
		t.Fatalf("fixture has key layout %d, format %d: want a layout 1 savepoint", c.Meta.KeyLayoutOf(), c.Meta.FormatVersion)
	}
	want := map[string]string{}
	sums, counts := map[string]int64{}, map[string]int64{}
	for id := range int64(30000) {
		k := fmt.Sprintf("%d, %d", id%50, id%3)
		sums[k] += id
		counts[k]++
	}
	for k := range sums {
		want[k] = fmt.Sprintf("[%s, %d, %d]", k, sums[k], counts[k])
	}
	for _, par := range []int{2, 3} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			dir := t.TempDir()
			sp := filepath.Join(dir, "savepoint")
			if err := os.CopyFS(sp, os.DirFS(fixture)); err != nil {
				t.Fatal(err)
			}
			var out, stderr bytes.Buffer
			s := New(connector.Env{Stdout: &out, Stderr: &stderr})
			err := s.RunScript(context.Background(), keyLayout1Script(dir, par), RunOptions{JobName: "q", Restore: sp})
			if err != nil {
				t.Fatalf("restore: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "restoring savepoint") {
				t.Fatalf("the savepoint was not restored:\n%s", stderr.String())
			}
			got := map[string]string{}
			forPrintLines(t, out.String(), func(kind, row string) {
				parts := strings.SplitN(strings.Trim(row, "[]"), ", ", 3)
				key := parts[0] + ", " + parts[1]
				switch kind {
				case "+I", "+U":
					got[key] = row
				case "-D":
					delete(got, key)
				}
			})
			if len(got) != len(want) {
				t.Fatalf("%d keys in the output, want %d", len(got), len(want))
			}
			var bad []string
			for k, w := range want {
				if got[k] != w {
					bad = append(bad, fmt.Sprintf("%s: got %s, want %s", k, got[k], w))
				}
			}
			sort.Strings(bad)
			if len(bad) > 0 {
				t.Fatalf("%d of %d keys differ from the batch answer, e.g.\n%s", len(bad), len(want), strings.Join(bad[:min(5, len(bad))], "\n"))
			}
		})
	}
}

// TestRestoreRefusesNewerKeyLayout restores the layout 1 savepoint with its
// _metadata rewritten to say a key layout newer than this build's (as a
// checkpoint of a later Weir, with records this build does not know, would
// be): the restore fails with an error naming the layout, instead of
// starting from state read without those records.
func TestRestoreRefusesNewerKeyLayout(t *testing.T) {
	dir := t.TempDir()
	sp := filepath.Join(dir, "savepoint")
	if err := os.CopyFS(sp, os.DirFS(filepath.Join("testdata", "keylayout1", "savepoint"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sp, checkpoint.MetadataFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := checkpoint.DecodeMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	m.FormatVersion = checkpoint.FormatVersion
	m.KeyLayout = state.KeyLayout + 1
	if data, err = checkpoint.EncodeMetadata(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &out, Stderr: &stderr})
	err = s.RunScript(context.Background(), keyLayout1Script(dir, 2), RunOptions{JobName: "q", Restore: sp})
	want := fmt.Sprintf("key layout %d, which this build cannot read", state.KeyLayout+1)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), want) {
		t.Fatalf("restore of a newer key layout: %v\n%s\nwant an error with %q", err, stderr.String(), want)
	}
}
