package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/types"
)

// partitionedScript writes a datagen sequence 0..n-1, event time id*10 ms
// from 2026-01-01, into a filesystem table partitioned by day and
// minute of the event time (Nexmark q10's layout), committed by
// partition time with a success file.
func partitionedScript(ckDir, outDir string, n, par int) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (
  id BIGINT,
  ts AS TO_TIMESTAMP(FROM_UNIXTIME(1767225600 + id / 100)),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '150000');
CREATE TABLE out (id BIGINT, ts TIMESTAMP(3), dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem', 'path' = '%s', 'format' = 'csv',
  'partition.time-extractor.timestamp-pattern' = '$dt $hm:00',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 min',
  'sink.partition-commit.policy.kind' = 'success-file');
INSERT INTO out SELECT id, ts, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm') FROM ev;
`, par, ckDir, n-1, outDir)
}

// committedPartitioned reads the final part files under dir as
// "partition folder: line" strings, sorted, and lists the folders that
// hold a success file.
func committedPartitioned(t *testing.T, dir string) (rows, success []string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		folder, name := filepath.Split(filepath.ToSlash(rel))
		switch {
		case name == "_SUCCESS":
			success = append(success, strings.TrimSuffix(folder, "/"))
		case strings.HasPrefix(name, "part-"):
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				rows = append(rows, strings.TrimSuffix(folder, "/")+": "+l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(rows)
	sort.Strings(success)
	return rows, success
}

// partitionedAnswer computes in Go what partitionedScript writes: each
// id in the folder of its event time's day and minute (':' escaped), the
// file holding id and the event time.
func partitionedAnswer(n int) (rows, folders []string) {
	seen := map[string]bool{}
	for id := range n {
		tm := time.Unix(1767225600+int64(id/100), 0).UTC()
		folder := "dt=" + tm.Format("2006-01-02") + "/hm=" + strings.ReplaceAll(tm.Format("15:04"), ":", "%3A")
		rows = append(rows, fmt.Sprintf("%s: %d,%s", folder, id, tm.Format("2006-01-02 15:04:05.000")))
		if !seen[folder] {
			seen[folder] = true
			folders = append(folders, folder)
		}
	}
	sort.Strings(rows)
	sort.Strings(folders)
	return rows, folders
}

// TestExactlyOncePartitionedSink fails the job at the fault points of the
// checkpoint algorithm and of the sink's commit; after the restarts, the
// committed part files in the partition folders hold every row exactly
// once, in the folder of its event time, and every partition has its
// success file at the end.
func TestExactlyOncePartitionedSink(t *testing.T) {
	const n = 30000 // 300 s of event time: 5 minute partitions
	want, wantFolders := partitionedAnswer(n)
	cases := []struct {
		spec  string
		fired []string
	}{
		{"", nil},
		{"K1@4=error", []string{"K1"}},
		{"K4@6=error", []string{"K4"}},
		{"K5@2=error", []string{"K5"}},
		{"K6@3=error", []string{"K6"}},
		{"K6@2=error,K5@4=error", []string{"K5", "K6"}},
	}
	for _, tc := range cases {
		t.Run("faults="+tc.spec, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			run := runWithFaults(t, partitionedScript(filepath.Join(dir, "ck"), out, n, 2), tc.spec,
				RunOptions{JobName: "part", Exec: exec.Options{BatchSize: 128}})
			run.expectFired(t, tc.fired)
			got, success := committedPartitioned(t, out)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Errorf("first difference: got %q, want %q", got[i], want[i])
						break
					}
				}
				t.Fatalf("committed output differs from the answer: %d rows, want %d\n%s", len(got), len(want), run.Stderr)
			}
			if fmt.Sprint(success) != fmt.Sprint(wantFolders) {
				t.Fatalf("success files in %v, want %v", success, wantFolders)
			}
			if left, _ := filepath.Glob(filepath.Join(out, "*", "*", ".*inprogress")); len(left) > 0 {
				t.Fatalf("in-progress files left after the job finished: %v", left)
			}
		})
	}
}

// wmSink records what its single writer gets: each watermark and the
// largest event time (column 1, milliseconds) of the rows written before
// it.
type wmSink struct {
	mu    sync.Mutex
	wms   []int64
	maxTS []int64
	rows  int
	late  int // rows at or below a watermark already received
}

func (s *wmSink) AcceptsUpdates() bool { return false }
func (s *wmSink) Parallelism() int     { return 1 }
func (s *wmSink) Open(int, int) (connector.SinkWriter, error) {
	return &wmWriter{s: s, max: -1 << 63}, nil
}

type wmWriter struct {
	s   *wmSink
	max int64
}

func (w *wmWriter) Write(b *types.Batch) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for i := range b.Len() {
		ts := b.Row(i)[1].Int()
		w.max = max(w.max, ts)
		if n := len(w.s.wms); n > 0 && ts <= w.s.wms[n-1] {
			w.s.late++
		}
		w.s.rows++
	}
	return nil
}
func (w *wmWriter) Watermark(wm int64) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.wms = append(w.s.wms, wm)
	w.s.maxTS = append(w.s.maxTS, w.max)
	return nil
}
func (w *wmWriter) Flush() error { return nil }
func (w *wmWriter) Close() error { return nil }

// TestSinkGetsWatermarks: a sink writer that implements
// connector.WatermarkWriter gets the watermarks of its input, in order,
// each after the rows before it (the watermark is 1 s behind the largest
// event time written), and no row after a watermark is behind it.
func TestSinkGetsWatermarks(t *testing.T) {
	sink := &wmSink{}
	var stderr bytes.Buffer
	s := New(connector.Env{Stdout: io.Discard, Stderr: &stderr})
	s.Connectors.RegisterSink("wmrec", func(*connector.Table, connector.Env) (connector.Sink, error) { return sink, nil })
	script := `SET 'parallelism.default' = '1';
CREATE TABLE ev (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 10, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '19999');
CREATE TABLE out (id BIGINT, ts TIMESTAMP_LTZ(3)) WITH ('connector' = 'wmrec');
INSERT INTO out SELECT id, ts FROM ev;`
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: "wm", Quiet: true,
		Exec: exec.Options{BatchSize: 64, AutoWatermarkInterval: time.Nanosecond}}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if sink.rows != 20000 || sink.late != 0 {
		t.Fatalf("%d rows (want 20000), %d behind a watermark", sink.rows, sink.late)
	}
	if len(sink.wms) < 2 || sink.wms[len(sink.wms)-1] != exec.MaxWatermark {
		t.Fatalf("watermarks %v: want several, ending with the end of input", sink.wms)
	}
	for i, wm := range sink.wms[:len(sink.wms)-1] {
		if i > 0 && wm < sink.wms[i-1] {
			t.Fatalf("watermark %d went back: %v", i, sink.wms)
		}
		if wm != sink.maxTS[i]-1000 {
			t.Fatalf("watermark %d is %d, want the largest event time before it (%d) - 1 s", i, wm, sink.maxTS[i])
		}
	}
}
