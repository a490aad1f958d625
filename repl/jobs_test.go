package repl

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
)

const jobTables = `
CREATE TABLE endless (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE ten (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE bh (n BIGINT) WITH ('connector' = 'blackhole');`

// jobShell returns a shell with the tables of jobTables.
func jobShell(t *testing.T) (*Shell, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	sh := New(session.New(connector.Env{Stdout: &out, Stderr: &out}), Options{Out: &out, Err: &out})
	t.Cleanup(sh.Close)
	for _, st := range strings.Split(strings.TrimSpace(jobTables), "\n") {
		if err := sh.execText(context.Background(), strings.TrimSuffix(st, ";")); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	return sh, &out
}

var submittedRe = regexp.MustCompile(`Submitted job ([0-9a-f]{8}) \(insert-into_bh\)`)

// submit runs an INSERT and returns the job id the shell printed.
func submit(t *testing.T, sh *Shell, out *bytes.Buffer, insert string) string {
	t.Helper()
	out.Reset()
	if err := sh.execText(context.Background(), insert); err != nil {
		t.Fatal(err)
	}
	m := submittedRe.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no job id in %q", out.String())
	}
	return m[1]
}

// jobRow returns the SHOW JOBS line of job id.
func jobRow(t *testing.T, sh *Shell, out *bytes.Buffer, id string) string {
	t.Helper()
	out.Reset()
	if err := sh.execText(context.Background(), "SHOW JOBS"); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, id) {
			return l
		}
	}
	t.Fatalf("job %s not in SHOW JOBS:\n%s", id, out.String())
	return ""
}

func TestStopJob(t *testing.T) {
	sh, out := jobShell(t)
	id := submit(t, sh, out, "INSERT INTO bh SELECT n FROM endless")
	if row := jobRow(t, sh, out, id); !strings.Contains(row, "RUNNING") || !strings.Contains(row, "insert-into_bh") {
		t.Fatalf("SHOW JOBS row %q: want RUNNING insert-into_bh", row)
	}
	out.Reset()
	if err := sh.execText(context.Background(), "STOP JOB '"+id+"'"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Stopped job "+id) {
		t.Fatalf("STOP JOB printed %q", out.String())
	}
	if row := jobRow(t, sh, out, id); !strings.Contains(row, "CANCELED") {
		t.Fatalf("SHOW JOBS row %q: want CANCELED", row)
	}
	err := sh.execText(context.Background(), "STOP JOB '"+id+"'")
	if err == nil || !strings.Contains(err.Error(), "not running (it is CANCELED)") {
		t.Fatalf("second STOP JOB: err = %v", err)
	}
}

func TestBoundedJobFinishes(t *testing.T) {
	sh, out := jobShell(t)
	id := submit(t, sh, out, "INSERT INTO bh SELECT n FROM ten")
	sh.jobs.Wait()
	row := jobRow(t, sh, out, id)
	cells := strings.Split(row, "|")
	if len(cells) != 9 {
		t.Fatalf("row %q: want 7 cells", row)
	}
	if state, in, written := strings.TrimSpace(cells[3]), strings.TrimSpace(cells[5]), strings.TrimSpace(cells[6]); state != "FINISHED" || in != "10" || written != "10" {
		t.Fatalf("row %q: state %s, rows in %s, rows out %s; want FINISHED, 10, 10", row, state, in, written)
	}
}

// TestSavepointPathUsedOnce stops a job with a savepoint, whose folder the
// shell prints once, resumes it through 'execution.savepoint.path', which
// the shell then resets (and says so), and submits the job again: that
// one starts afresh.
func TestSavepointPathUsedOnce(t *testing.T) {
	sh, out := jobShell(t)
	dir := t.TempDir()
	for _, st := range []string{
		"SET 'execution.checkpointing.interval' = '1 min'",
		"SET 'state.checkpoints.dir' = '" + dir + "/ckpts'",
		"SET 'state.savepoints.dir' = '" + dir + "/sp'",
	} {
		if err := sh.execText(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	id := submit(t, sh, out, "INSERT INTO bh SELECT n FROM endless")
	out.Reset()
	if err := sh.execText(context.Background(), "STOP JOB '"+id+"' WITH SAVEPOINT"); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Stopped job ` + id + ` with a savepoint: (\S+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("STOP JOB WITH SAVEPOINT printed %q", out.String())
	}
	path := m[1]
	if n := strings.Count(out.String(), path); n != 2 { // the folder, and how to resume it
		t.Fatalf("the savepoint folder is printed %d times, want once and once in the resume hint:\n%s", n, out.String())
	}
	if strings.Contains(out.String(), "savepoint written to") {
		t.Fatalf("the session printed the folder too:\n%s", out.String())
	}
	if err := sh.execText(context.Background(), "SET 'execution.savepoint.path' = '"+path+"'"); err != nil {
		t.Fatal(err)
	}
	resumed := submit(t, sh, out, "INSERT INTO bh SELECT n FROM endless")
	if want := "Job " + resumed + " resumes from " + path + ". 'execution.savepoint.path' has been reset"; !strings.Contains(out.String(), want) {
		t.Fatalf("INSERT after SET 'execution.savepoint.path' printed %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := sh.execText(context.Background(), "SET"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "execution.savepoint.path") {
		t.Fatalf("SET lists the savepoint path after it was used:\n%s", out.String())
	}
	if err := sh.execText(context.Background(), "STOP JOB '"+resumed+"'"); err != nil {
		t.Fatal(err)
	}
	submit(t, sh, out, "INSERT INTO bh SELECT n FROM endless")
	if strings.Contains(out.String(), "resumes from") {
		t.Fatalf("a later INSERT restored the savepoint again: %q", out.String())
	}
}

// TestShowJobsCountsLateRows runs a windowed job whose every 100th row is
// far behind the watermark: SHOW JOBS shows the late rows it dropped.
func TestShowJobsCountsLateRows(t *testing.T) {
	sh, out := jobShell(t)
	for _, st := range []string{
		`SET 'pipeline.auto-watermark-interval' = '10 ms'`,
		`CREATE TABLE ev (n BIGINT, ts AS TO_TIMESTAMP_LTZ(CASE WHEN n % 100 = 99 THEN 0 ELSE n * 10 END, 3),
		  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'rows-per-second' = '2000',
		  'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '1999')`,
		`CREATE TABLE wins (ws TIMESTAMP_LTZ(3), c BIGINT) WITH ('connector' = 'blackhole')`,
	} {
		if err := sh.execText(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if err := sh.execText(context.Background(), "INSERT INTO wins SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end"); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Submitted job ([0-9a-f]{8})`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no job id in %q", out.String())
	}
	sh.jobs.Wait()
	cells := strings.Split(jobRow(t, sh, out, m[1]), "|")
	if len(cells) != 9 {
		t.Fatalf("row %q: want 7 cells", cells)
	}
	// The rows with ts 0 that come after the first watermark (about 1 s
	// of event time in) are late: all but the first few of the 20.
	if late := strings.TrimSpace(cells[7]); late == "0" || len(late) > 2 {
		t.Fatalf("SHOW JOBS late rows %q, want 1..20", late)
	}
}
