package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sql/weir/udf"
)

// TestRunNexmark runs the example folder's ddl.sql with a query that works
// (q14, with its user function), one that fails at planning and one
// over all three tables: the events are those set by
// Events, the figures are filled in, the failure is reported in its row
// with its line and column, and the table shows both.
func TestRunNexmark(t *testing.T) {
	dir := t.TempDir()
	ddl, err := os.ReadFile("../examples/nexmark/ddl.sql")
	if err != nil {
		t.Fatal(err)
	}
	q14, err := os.ReadFile("../examples/nexmark/q14.sql")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ddl.sql", string(ddl))
	write("q14.sql", string(q14))
	write("q3.sql", "CREATE TABLE o (n BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO o\n  SELECT nosuch FROM bid;\n")
	write("q7.sql", "CREATE TABLE o (n BIGINT) WITH ('connector' = 'blackhole');\n"+
		"INSERT INTO o SELECT COUNT(*) FROM (SELECT id FROM person UNION ALL SELECT id FROM auction UNION ALL SELECT auction FROM bid);\n")
	fns := udf.NewRegistry()
	fns.MustRegister("com.github.nexmark.flink.udf.CountChar", "", udf.Func2(udf.CountChar))
	results, err := RunNexmark(context.Background(), NexmarkConfig{Dir: dir, Events: 20000, Functions: fns, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Query != "q3" || results[1].Query != "q7" || results[2].Query != "q14" {
		t.Fatalf("results %+v", results)
	}
	if e := results[0].Err; !strings.Contains(e, "line 3:10: unknown column 'nosuch'") {
		t.Errorf("q3 error %q", e)
	}
	for _, r := range results[1:] {
		if r.Err != "" || r.Events != 20000 || r.EventsPerSec <= 0 || r.EventsPerCoreSec <= 0 || r.PeakGo == 0 {
			t.Errorf("%s: %+v", r.Query, r)
		}
	}
	var table bytes.Buffer
	if err := WriteNexmarkTable(&table, results); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"events/s/core", "q3 ", "fails: ", "q14 ", "4.00M: "} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if _, err := RunNexmark(context.Background(), NexmarkConfig{Dir: dir, Queries: []string{"q99"}}); err == nil || !strings.Contains(err.Error(), `unknown query "q99"`) {
		t.Errorf("unknown query: %v", err)
	}
}

// TestNexmarkDDL: the event count and the rates are set in every table.
func TestNexmarkDDL(t *testing.T) {
	ddl, err := nexmarkDDL("../examples/nexmark", 1234, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(ddl, "'events.num' = '1234'"); n != 3 {
		t.Errorf("events.num set %d times:\n%s", n, ddl)
	}
	if n := strings.Count(ddl, "-event.rate' = '10000000'"); n != 6 {
		t.Errorf("rates set %d times", n)
	}
	if _, err := nexmarkDDL(t.TempDir(), 1, false); err == nil {
		t.Error("a folder without ddl.sql was accepted")
	}
	// The ROW form: the one table of ddl_gen.sql, then the views.
	row, err := nexmarkDDL("../examples/nexmark", 1234, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(row, "'events.num' = '1234'") != 1 || strings.Count(row, "-event.rate' = '10000000'") != 2 ||
		!strings.Contains(row, "CREATE TABLE datagen") || !strings.Contains(row, "CREATE VIEW bid AS") {
		t.Errorf("ROW form:\n%s", row)
	}
}

// TestNexmarkQ10Reruns: q10 writes to its own filesystem sink; each run
// writes to a fresh folder in the scratch folder, so that a second run
// (and a second bench) is not refused for the output a first one
// committed, and nothing is left in /tmp/weir-nexmark.
func TestNexmarkQ10Reruns(t *testing.T) {
	res, err := RunNexmark(context.Background(), NexmarkConfig{Dir: "../examples/nexmark", Queries: []string{"q10"},
		Events: 2000, Runs: 2, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err != "" || res[0].Runs != 2 {
		t.Fatalf("q10 twice: %+v", res)
	}
}

// TestRunNexmarkCheckpointEvery: with CheckpointEvery the runs checkpoint by
// the events read, not by the clock: a run far shorter than the 10 s
// interval completes checkpoints besides the final one that the run by the
// clock completes alone.
func TestRunNexmarkCheckpointEvery(t *testing.T) {
	dir := t.TempDir()
	ddl, err := os.ReadFile("../examples/nexmark/ddl.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ddl.sql"), ddl, 0o644); err != nil {
		t.Fatal(err)
	}
	q := "CREATE TABLE o (n BIGINT, c BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO o SELECT auction, COUNT(*) FROM bid GROUP BY auction;\n"
	if err := os.WriteFile(filepath.Join(dir, "q1.sql"), []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(every int64) NexmarkResult {
		t.Helper()
		res, err := RunNexmark(context.Background(), NexmarkConfig{Dir: dir, Events: 1_000_000, CheckpointEvery: every, Scratch: t.TempDir()})
		if err != nil || len(res) != 1 || res[0].Err != "" {
			t.Fatalf("every %d: %v %+v", every, err, res)
		}
		return res[0]
	}
	byClock, byEvents := run(0), run(100_000)
	if byEvents.Checkpoints < byClock.Checkpoints+2 {
		t.Fatalf("checkpoints: %d by events (every 100,000 of 1,000,000), %d by the clock; want at least 2 more by events",
			byEvents.Checkpoints, byClock.Checkpoints)
	}
}
