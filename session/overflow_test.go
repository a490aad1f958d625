package session

import (
	"fmt"
	"strings"
	"testing"
)

// TestOverflowFailsJob: an INT sum that does not fit, a narrowing CAST
// that does not fit and a TO_TIMESTAMP_LTZ past the int64 range fail the job with the value, the expression's text and
// its line:column; TRY_CAST gives NULL instead.
func TestOverflowFailsJob(t *testing.T) {
	const n = 100
	table := fmt.Sprintf(`SET 'parallelism.default' = '1'; CREATE TABLE src (id INT, big BIGINT) WITH ('connector' = 'datagen',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d',
  'fields.big.kind' = 'sequence', 'fields.big.start' = '2147483600', 'fields.big.end' = '%d');
CREATE TABLE out (a INT, b INT) WITH ('connector' = 'print');
`, n, 2147483600+n-1)
	cases := []struct{ query, want string }{
		{"INSERT INTO out SELECT id,\n  id * 30000000 FROM src", "'id * 30000000' at line 6:3: numeric overflow: 72 * 30000000 does not fit in INT"},
		{"INSERT INTO out SELECT id, CAST(big AS INT) FROM src", "'CAST(big AS INT)' at line 5:28: numeric overflow: 2147483648 does not fit in INT"},
		{"INSERT INTO out SELECT id, CAST(EXTRACT(YEAR FROM TO_TIMESTAMP_LTZ(big * 10000000, 0)) AS INT) FROM src", "'TO_TIMESTAMP_LTZ(big * 10000000, 0)' at line 5:51: numeric overflow: TO_TIMESTAMP_LTZ(21474836000000000, 0) is past the range"},
	}
	for _, c := range cases {
		_, stderr, err := runNotNull(t, table+c.query+";")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q\nstderr: %s", c.query, err, c.want, stderr)
		}
	}
	out := runScript(t, table+"INSERT INTO out SELECT id, TRY_CAST(big AS INT) FROM src;")
	got := map[string]bool{}
	forPrintLines(t, out, func(kind, row string) { got[kind+row] = true })
	for id := 1; id <= n; id++ {
		big := int64(2147483600 + id - 1)
		want := fmt.Sprintf("+I[%d, %d]", id, big)
		if big > 2147483647 {
			want = fmt.Sprintf("+I[%d, <NULL>]", id)
		}
		if !got[want] {
			t.Errorf("TRY_CAST: missing %s", want)
		}
	}
	if len(got) != n {
		t.Errorf("TRY_CAST: %d rows, want %d", len(got), n)
	}
}
