package session

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestGroupByTimestampLTZ: GROUP BY a TIMESTAMP_LTZ expression at
// parallelism 2, with checkpoints: the key crosses the hash exchange and
// is the GroupAggregate's state key (its encoding panicked). The counts
// per minute are computed here.
func TestGroupByTimestampLTZ(t *testing.T) {
	dir := t.TempDir()
	src := fmt.Sprintf(`SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE ev (n BIGINT, ts AS TO_TIMESTAMP_LTZ(n * 7, 0)) WITH (
  'connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '999');
CREATE TABLE out (m TIMESTAMP_LTZ(3), c BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT FLOOR(ts TO MINUTE), COUNT(*) FROM ev GROUP BY FLOOR(ts TO MINUTE);
`, dir)
	got := sortedRows(applyChangelog(t, runScript(t, src)))
	counts := map[int64]int{}
	for n := int64(0); n <= 999; n++ {
		counts[n*7/60*60]++
	}
	var want []string
	for m, c := range counts {
		want = append(want, fmt.Sprintf("[%s, %d]", time.Unix(m, 0).UTC().Format("2006-01-02 15:04:05.000"), c))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d rows %v\nwant %d rows %v", len(got), got, len(want), want)
	}
}
