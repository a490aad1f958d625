package session

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/exec"
)

// TestExactlyOncePartitionedSinkLTZZone is TestExactlyOncePartitionedSink
// with the partitions cut by DATE_FORMAT of a TIMESTAMP_LTZ in a session
// zone whose offset is not whole hours (Lord Howe Island after its clocks
// went back 30 minutes at 2026-04-04 15:00 UTC): the input's local hour
// changes at 15:30 UTC (a UTC-aligned hour unit would not see it). At parallelism
// 2, with failures at checkpoint and commit fault points, every id is
// committed exactly once in the folder of its local day and minute,
// computed here with Go's time zone data.
func TestExactlyOncePartitionedSinkLTZZone(t *testing.T) {
	loc, err := time.LoadLocation("Australia/Lord_Howe")
	if err != nil {
		t.Skipf("zone: %v", err)
	}
	const n = 30000                   // 300 s of event time, 10 ms apart
	const start int64 = 1775316480000 // 2026-04-04 15:28:00 UTC, 01:58 +10:30
	var want []string
	for id := range n {
		tm := time.UnixMilli(start + int64(id)*10).In(loc)
		want = append(want, "dt="+tm.Format("2006010215")+"/hm="+strings.ReplaceAll(tm.Format("15:04"), ":", "%3A")+": "+strconv.Itoa(id))
	}
	sort.Strings(want)
	for _, tc := range []struct {
		spec  string
		fired []string
	}{{"", nil}, {"K4@6=error", []string{"K4"}}, {"K6@2=error,K5@4=error", []string{"K5", "K6"}}} {
		spec := tc.spec
		t.Run("faults="+spec, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			script := fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
SET 'table.local-time-zone' = 'Australia/Lord_Howe';
CREATE TABLE ev (
  id BIGINT,
  ts AS TO_TIMESTAMP_LTZ(%d + id * 10, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '150000');
CREATE TABLE out (id BIGINT, dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO out SELECT id, DATE_FORMAT(ts, 'yyyyMMddHH'), DATE_FORMAT(ts, 'HH:mm') FROM ev;
`, filepath.Join(dir, "ck"), start, n-1, out)
			run := runWithFaults(t, script, spec, RunOptions{JobName: "ltzpart", Exec: exec.Options{BatchSize: 128}})
			run.expectFired(t, tc.fired)
			got, _ := committedPartitioned(t, out)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Errorf("first difference: got %q, want %q", got[i], want[i])
						break
					}
				}
				t.Fatalf("committed output differs from the answer: %d rows, want %d\n%s", len(got), len(want), run.Stderr)
			}
		})
	}
}
