package session

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestWatermarkOnComputedColumn runs a datagen sequence n with the event
// time ts AS TO_TIMESTAMP_LTZ(n * 10, 3) and a watermark on ts, and checks
// what CURRENT_WATERMARK(ts) returns row by row: NULL before the first
// watermark, then non-decreasing values that the rows before justify
// (each is the event time of an earlier row minus the delay), and that it
// advances while the job runs.
func TestWatermarkOnComputedColumn(t *testing.T) {
	const rows = 1000
	src := `SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '10 ms';
SET 'table.local-time-zone' = 'UTC';
CREATE TABLE ev (
  n BIGINT,
  ts AS TO_TIMESTAMP_LTZ(n * 10, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '2000',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '` + strconv.Itoa(rows) + `');
CREATE TABLE out (n BIGINT, ts TIMESTAMP_LTZ(3), wm TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');
INSERT INTO out SELECT n, ts, CURRENT_WATERMARK(ts) FROM ev;
`
	out := runScript(t, src)
	parse := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05.000", s)
		if err != nil {
			t.Fatalf("bad timestamp %q: %v", s, err)
		}
		return tm.UnixMilli()
	}
	var (
		i             int
		maxTS         int64 = -1 << 63
		lastWM        int64 = -1 << 63
		nulls, values int
		distinct      = map[int64]bool{}
	)
	forPrintLines(t, out, func(kind, row string) {
		f := strings.Split(strings.Trim(row, "[]"), ", ")
		if kind != "+I" || len(f) != 3 {
			t.Fatalf("unexpected row %s%s", kind, row)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n != int64(i+1) {
			t.Fatalf("row %d: n = %s, want %d (in order at parallelism 1)", i, f[0], i+1)
		}
		ts := parse(f[1])
		if ts != n*10 {
			t.Fatalf("row %d: ts = %s, want %d ms", i, f[1], n*10)
		}
		if f[2] == "<NULL>" {
			if values > 0 {
				t.Fatalf("row %d: CURRENT_WATERMARK is NULL after it was %d", i, lastWM)
			}
			nulls++
		} else {
			wm := parse(f[2])
			if wm < lastWM {
				t.Fatalf("row %d: watermark went back from %d to %d", i, lastWM, wm)
			}
			// The watermark is an earlier row's event time minus 1 s, so
			// at most the largest event time before this row minus 1 s.
			if wm > maxTS-1000 || (wm+1000)%10 != 0 {
				t.Fatalf("row %d: watermark %d, but the rows before reach only %d (minus the 1 s delay)", i, wm, maxTS)
			}
			lastWM = wm
			values++
			distinct[wm] = true
		}
		maxTS = max(maxTS, ts)
		i++
	})
	if i != rows {
		t.Fatalf("%d rows, want %d", i, rows)
	}
	if nulls == 0 {
		t.Error("CURRENT_WATERMARK was never NULL: the first rows come before any watermark")
	}
	if len(distinct) < 2 {
		t.Errorf("the watermark took %d values while the job ran; want it to advance", len(distinct))
	}
	t.Logf("%d rows before the first watermark, %d watermark values", nulls, len(distinct))
}

// TestComputedColumnsAndZone checks computed columns and the session's
// time zone end to end: a PROCTIME() column is the time the row was read,
// an LTZ column prints in the session's zone, and CAST and DATE_FORMAT
// convert with it.
func TestComputedColumnsAndZone(t *testing.T) {
	before := time.Now().UnixMilli()
	src := `SET 'parallelism.default' = '1';
SET 'table.local-time-zone' = 'GMT+05:30';
CREATE TABLE ev (
  n BIGINT,
  ts AS TO_TIMESTAMP_LTZ(n * 3600, 0),
  pt AS PROCTIME(),
  h AS HOUR(TO_TIMESTAMP_LTZ(n * 3600, 0))
) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '3');
CREATE TABLE out (n BIGINT, ts TIMESTAMP_LTZ(3), local_ts TIMESTAMP(3), txt STRING, h BIGINT, pt_ms BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT n, ts, CAST(ts AS TIMESTAMP(3)), DATE_FORMAT(ts, 'HH:mm XXX'), h, UNIX_TIMESTAMP(DATE_FORMAT(pt, 'yyyy-MM-dd HH:mm:ss')) FROM ev;
`
	out := runScript(t, src)
	after := time.Now().UnixMilli()
	got := sortedRows(applyChangelog(t, out))
	ist := time.FixedZone("", 5*3600+1800)
	var want []string
	for n := int64(0); n <= 3; n++ {
		local := time.Unix(n*3600, 0).In(ist)
		want = append(want, "["+strconv.FormatInt(n, 10)+", "+local.Format("2006-01-02 15:04:05.000")+", "+local.Format("2006-01-02 15:04:05.000")+", "+local.Format("15:04")+" +05:30, "+strconv.Itoa(local.Hour())+", PT]")
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		// The last column is PROCTIME in whole seconds: within the run.
		k := strings.LastIndex(got[i], ", ")
		secs, err := strconv.ParseInt(strings.TrimSuffix(got[i][k+2:], "]"), 10, 64)
		if err != nil || secs < before/1000 || secs > after/1000 {
			t.Errorf("row %s: PROCTIME() %d s, want within [%d, %d]", got[i], secs, before/1000, after/1000)
		}
		if g, w := got[i][:k], strings.TrimSuffix(want[i], ", PT]"); g != w {
			t.Errorf("row %d: %s, want %s]", i, got[i], w)
		}
	}
}

// TestDescribeShowsTimeAttributes checks DESCRIBE's columns in a session.
func TestDescribeShowsTimeAttributes(t *testing.T) {
	var stdout bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &bytes.Buffer{}})
	src := `CREATE TABLE ev (n BIGINT, ts AS TO_TIMESTAMP_LTZ(n, 3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');
DESCRIBE ev;`
	if err := s.RunScript(context.Background(), src, RunOptions{Quiet: true, Exec: exec.Options{}}); err != nil {
		t.Fatal(err)
	}
	want := "n\tBIGINT\tTRUE\n" +
		"ts\tTIMESTAMP_LTZ(3) *ROWTIME*\tTRUE\t\tAS TO_TIMESTAMP_LTZ(n, 3)\tts - INTERVAL '1' SECOND\n" +
		"pt\tTIMESTAMP_LTZ(3) *PROCTIME*\tFALSE\t\tAS PROCTIME()\n"
	if stdout.String() != want {
		t.Errorf("DESCRIBE printed\n%q\nwant\n%q", stdout.String(), want)
	}
}

// TestTimestampLTZFilesRoundTrip writes TIMESTAMP_LTZ values to CSV and
// JSON files in one session time zone and reads them back: the files hold
// the local times of that zone, and reading them in the same zone gives
// the same instants (seconds since the epoch equal to n).
func TestTimestampLTZFilesRoundTrip(t *testing.T) {
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			table := `CREATE TABLE f (n BIGINT, ts TIMESTAMP_LTZ(3)) WITH ('connector' = 'filesystem', 'path' = '` + dir + `', 'format' = '` + format + `');
`
			runScript(t, `SET 'table.local-time-zone' = 'GMT+02:00';
SET 'parallelism.default' = '1';
CREATE TABLE src (n BIGINT, ts AS TO_TIMESTAMP_LTZ(n * 3600, 0)) WITH ('connector' = 'datagen',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '2');
`+table+`INSERT INTO f SELECT n, ts FROM src;
`)
			files, err := filepath.Glob(filepath.Join(dir, "part-*"))
			if err != nil || len(files) != 1 {
				t.Fatalf("part files %v, %v", files, err)
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			for n := 0; n <= 2; n++ {
				local := time.Unix(int64(n)*3600, 0).In(time.FixedZone("", 7200)).Format("2006-01-02 15:04:05.000")
				if !strings.Contains(string(data), local) {
					t.Errorf("file lacks %s (the local time of row %d at GMT+02:00):\n%s", local, n, data)
				}
			}
			out := runScript(t, `SET 'table.local-time-zone' = 'GMT+02:00';
SET 'parallelism.default' = '1';
`+table+`CREATE TABLE p (n BIGINT, secs INT, mx TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');
INSERT INTO p SELECT n, TIMESTAMPDIFF(SECOND, TO_TIMESTAMP_LTZ(0, 0), ts), ts FROM f;
`)
			got := sortedRows(applyChangelog(t, out))
			var want []string
			for n := 0; n <= 2; n++ {
				local := time.Unix(int64(n)*3600, 0).In(time.FixedZone("", 7200)).Format("2006-01-02 15:04:05.000")
				want = append(want, "["+strconv.Itoa(n)+", "+strconv.Itoa(n*3600)+", "+local+"]")
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("read back\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
