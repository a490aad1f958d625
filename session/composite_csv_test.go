package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCSVCompositeColumns writes ROW and ARRAY columns to a csv file
// through a filesystem sink, reads the file back with another table and
// queries fields and elements; the rows equal those computed in Go from
// the generated values (tags hold the element delimiter and backslashes).
func TestCSVCompositeColumns(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	dir := t.TempDir()
	in, mid := filepath.Join(dir, "in"), filepath.Join(dir, "mid")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	words := []string{"a", "b;c", `d\e`, "f,g", `h"i`}
	var lines, want []string
	for id := range 200 {
		n := 1 + r.IntN(3)
		var tags []string
		for range n {
			tags = append(tags, words[r.IntN(len(words))]+fmt.Sprint(r.IntN(9)))
		}
		x := r.Int64N(1000) - 500
		// The input as JSON (the reference format for nested values).
		js := make([]string, len(tags))
		for i, s := range tags {
			js[i] = fmt.Sprintf("%q", s)
		}
		lines = append(lines, fmt.Sprintf(`{"id":%d,"p":{"x":%d,"name":"n%d"},"tags":[%s]}`, id, x, id, strings.Join(js, ",")))
		want = append(want, fmt.Sprintf("[%d, %d, n%d, %d, %s, %s]", id, x, id, n, tags[0], tags[n-1]))
	}
	if err := os.WriteFile(filepath.Join(in, "rows.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runScript(t, fmt.Sprintf(`
CREATE TABLE src (id BIGINT, p ROW<x BIGINT, name STRING>, tags ARRAY<STRING>) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE mid (id BIGINT, p ROW<x BIGINT, name STRING>, tags ARRAY<STRING>) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO mid SELECT * FROM src;
`, in, mid))
	out := runScript(t, fmt.Sprintf(`SET 'parallelism.default' = '2';
CREATE TABLE mid (id BIGINT, p ROW<x BIGINT, name STRING>, tags ARRAY<STRING>) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE o (id BIGINT, x BIGINT, name STRING, n INT, first STRING, last STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT id, p.x, p.name, CARDINALITY(tags), tags[1], tags[CARDINALITY(tags)] FROM mid;
`, mid))
	sort.Strings(want)
	got := sortedRows(applyChangelog(t, out))
	t.Logf("%d rows; first %v", len(got), got[:min(2, len(got))])
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%d rows, want %d\nfirst got  %v\nfirst want %v", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
}
