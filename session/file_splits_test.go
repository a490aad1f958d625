package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestFileSplitsHoldWatermark: the files of a filesystem source are its
// splits from the start (connector.SplitLister), so a subtask that reads
// a file of later event times first does not make the rows of the file it
// reads next late: a TUMBLE count over both files counts every row.
func TestFileSplitsHoldWatermark(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	want := map[string]int{}
	// a.json (read first) holds minute 1, b.json minute 0.
	for f, minute := range map[string]int{"a.json": 1, "b.json": 0} {
		var sb strings.Builder
		for i := range 600 {
			ts := base.Add(time.Duration(minute)*time.Minute + time.Duration(i)*100*time.Millisecond)
			fmt.Fprintf(&sb, "{\"ts\":\"%s\"}\n", ts.Format("2006-01-02 15:04:05.000"))
			ws := ts.Truncate(10 * time.Second)
			want[ws.Format("2006-01-02 15:04:05.000")]++
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout lockedBuffer
	var stderr bytes.Buffer
	sess := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	script := fmt.Sprintf(`
SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '1 ms';
CREATE TABLE ev (ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE out (ws TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end;
`, dir)
	if err := sess.RunScript(context.Background(), script, RunOptions{JobName: t.Name(), Quiet: true, Exec: exec.Options{BatchSize: 64}}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Split(strings.Trim(strings.TrimPrefix(l, "+I"), "[]"), ", ")
		if len(f) != 2 {
			t.Fatalf("line %q", l)
		}
		var n int
		fmt.Sscan(f[1], &n)
		got[f[0]] += n
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("windows:\ngot  %v\nwant %v", got, want)
	}
}
