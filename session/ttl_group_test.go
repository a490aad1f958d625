package session

import (
	"slices"
	"strings"
	"testing"
)

// TestGroupAggregateStateTTL: with SET 'table.exec.state.ttl', a group not
// written for the TTL expires, and its key's next row starts a new group:
// +I with the count from one again, not -U/+U against the old count.
// datagen paces one row a second, all of one key, and the TTL is 200 ms,
// so every row finds its group expired; without the TTL the count grows.
func TestGroupAggregateStateTTL(t *testing.T) {
	src := func(ttl string) string {
		return `SET 'parallelism.default' = '1';
` + ttl + `
CREATE TABLE ev (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '3');
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT n * 0, COUNT(*), SUM(n) FROM ev GROUP BY n * 0;
`
	}
	lines := func(out string) []string {
		var got []string
		forPrintLines(t, out, func(kind, row string) { got = append(got, kind+row) })
		return got
	}
	got := lines(runScript(t, src("SET 'table.exec.state.ttl' = '200 ms';")))
	if want := []string{"+I[0, 1, 1]", "+I[0, 1, 2]", "+I[0, 1, 3]"}; !slices.Equal(got, want) {
		t.Fatalf("with a TTL: got %s, want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
	got = lines(runScript(t, src("")))
	if want := []string{"+I[0, 1, 1]", "-U[0, 1, 1]", "+U[0, 2, 3]", "-U[0, 2, 3]", "+U[0, 3, 6]"}; !slices.Equal(got, want) {
		t.Fatalf("without a TTL: got %s, want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}
