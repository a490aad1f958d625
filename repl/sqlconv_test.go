package repl

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLimitStopsUnboundedQuery: SELECT … LIMIT n on an unbounded source
// returns once n rows arrived, the job stopped, as in Flink's SQL client.
// Without that the query would run until the context's deadline stops it
// (and says ", stopped").
func TestLimitStopsUnboundedQuery(t *testing.T) {
	sh, out := jobShell(t)
	sh.sess.Config[KeyResultMode] = ModeTableau
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := sh.execText(ctx, "SELECT n FROM endless LIMIT 5"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "Received 5 changes") || strings.Contains(got, "stopped") {
		t.Fatalf("output %q: want 5 changes received, not stopped", got)
	}
	if ctx.Err() != nil {
		t.Fatal("the query ran until the deadline")
	}
}

var setJobRe = regexp.MustCompile(`Submitted job ([0-9a-f]{8}) \(insert-into_bh,bh2\)`)

// TestStatementSetRunsAsOneJob: BEGIN STATEMENT SET; INSERT …; INSERT …;
// END; submits one job with both INSERTs (both sinks written, both
// sources read: 10 rows each), and EXECUTE STATEMENT SET BEGIN … END; does
// the same; other statements inside a set and a stray END are errors.
func TestStatementSetRunsAsOneJob(t *testing.T) {
	for _, script := range [][]string{
		{"BEGIN STATEMENT SET", "INSERT INTO bh SELECT n FROM ten", "INSERT INTO bh2 SELECT n % 7 FROM ten", "END"},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO bh SELECT n FROM ten", "INSERT INTO bh2 SELECT n % 7 FROM ten", "END"},
	} {
		sh, out := jobShell(t)
		if err := sh.execText(context.Background(), "CREATE TABLE bh2 (n BIGINT) WITH ('connector' = 'blackhole')"); err != nil {
			t.Fatal(err)
		}
		for i, st := range script {
			if i == 1 {
				// Inside the set: only INSERTs.
				err := sh.execText(context.Background(), "SHOW TABLES")
				if err == nil || !strings.Contains(err.Error(), "only INSERT statements can be in a statement set") {
					t.Fatalf("SHOW TABLES in a set: err = %v", err)
				}
			}
			if err := sh.execText(context.Background(), st); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
		}
		m := setJobRe.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no statement set job in %q", out.String())
		}
		if n := len(sh.jobs.List()); n != 1 {
			t.Fatalf("%d jobs, want 1", n)
		}
		sh.jobs.Wait()
		row := jobRow(t, sh, out, m[1])
		cells := strings.Split(row, "|")
		if state, in, written := strings.TrimSpace(cells[3]), strings.TrimSpace(cells[5]), strings.TrimSpace(cells[6]); state != "FINISHED" || in != "20" || written != "20" {
			t.Fatalf("cells %q: state %s, rows in %s, rows out %s; want FINISHED, 20, 20", cells, state, in, written)
		}
		err := sh.execText(context.Background(), "END")
		if err == nil || !strings.Contains(err.Error(), "END without BEGIN STATEMENT SET") {
			t.Fatalf("stray END: err = %v", err)
		}
	}
}
