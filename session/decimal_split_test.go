package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecimalSumSplitDistinctPastRange runs SUM(DISTINCT v) of a
// DECIMAL(38, 0) with the split distinct aggregation off and on (1, 2, 3
// buckets). The answers are worked out by hand: key 1 sums three values
// near 2^126 (3 × 2^126 + 3, beyond 38 digits: NULL, README "DECIMAL SUM
// and AVG at overflow"); key 2 sums 2^126 + (2^126 + 1) - (2^126 + 5) =
// 2^126 - 4, which fits. Were the SUM split, two values of a key would share
// a bucket whose inner SUM passes 38 digits and is NULL, and the outer SUM
// would skip it (key 1: 2^126 + 2 instead of NULL; key 2: -(2^126 + 5)
// instead of 2^126 - 4): the planner does not split a DECIMAL SUM (found in
// review; this test failed before).
func TestDecimalSumSplitDistinctPastRange(t *testing.T) {
	const p126 = "85070591730234615865843651857942052864" // 2^126
	var file strings.Builder
	add := func(k int, v string) { fmt.Fprintf(&file, `{"k":%d,"v":"%s"}`+"\n", k, v) }
	add(1, p126)
	add(1, "85070591730234615865843651857942052865")
	add(1, "85070591730234615865843651857942052866")
	add(2, p126)
	add(2, "85070591730234615865843651857942052865")
	add(2, "-85070591730234615865843651857942052869")
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"[1, <NULL>]", "[2, 85070591730234615865843651857942052860]"}
	for _, buckets := range []string{"off", "1", "2", "3"} {
		set := ""
		if buckets != "off" {
			set = fmt.Sprintf("SET 'table.optimizer.distinct-agg.split.enabled' = 'true';\nSET 'table.optimizer.distinct-agg.split.bucket-num' = '%s';", buckets)
		}
		out := runScript(t, fmt.Sprintf(`%s
CREATE TABLE src (k INT, v DECIMAL(38, 0)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE g (k INT, s DECIMAL(38, 0)) WITH ('connector' = 'print', 'print-identifier' = 'g');
INSERT INTO g SELECT k, SUM(DISTINCT v) FROM src GROUP BY k;
`, set, path))
		got := upsertByKey(t, out)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("split %s: final rows:\n%s\nwant:\n%s", buckets, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
