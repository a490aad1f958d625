package repl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
	"github.com/weir-sql/weir/types"
)

// lockedBuffer is a bytes.Buffer that background jobs and the test may use
// at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

// panicSource is the 'panicky' connector: its reader panics in Next once
// armed is closed (so that the job has started when it fails). opened
// counts the readers opened: one per run of the job.
type panicSource struct {
	armed  chan struct{}
	opened *atomic.Int32
}

func (s panicSource) Bounded() bool { return false }
func (s panicSource) Open(int, int) (connector.SourceReader, error) {
	s.opened.Add(1)
	return panicReader{s}, nil
}

type panicReader struct{ s panicSource }

func (r panicReader) Next(ctx context.Context, b *types.Batch, _ int) error {
	select {
	case <-r.s.armed:
		panic("boom: the reader exploded")
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Millisecond):
		return nil // no data yet
	}
}
func (r panicReader) Position() ([]byte, error) { return []byte{0}, nil }
func (r panicReader) Seek([]byte) error         { return nil }
func (r panicReader) Close() error              { return nil }

// panicTable is the 'panicky-table' connector: a bounded table, empty
// until armed is closed, whose reader then panics. As the table of a
// lookup join it is read by the LookupJoin operator itself (at its Open
// and at each reload, in Process), so the panic is the operator's.
type panicTable struct{ armed chan struct{} }

func (s panicTable) Bounded() bool { return true }
func (s panicTable) Open(int, int) (connector.SourceReader, error) {
	return panicTableReader(s), nil
}

type panicTableReader struct{ armed chan struct{} }

func (r panicTableReader) Next(context.Context, *types.Batch, int) error {
	select {
	case <-r.armed:
		panic("boom: the lookup table exploded")
	default:
		return io.EOF
	}
}
func (r panicTableReader) Position() ([]byte, error) { return []byte{0}, nil }
func (r panicTableReader) Seek([]byte) error         { return nil }
func (r panicTableReader) Close() error              { return nil }

// TestShellSurvivesPanickingJob runs two background jobs in a shell, one
// of which panics: in its source's reader (a connector) or in an operator
// (a LookupJoin whose table's reader panics when the operator reloads it).
// The shell reports that job FAILED with the panic's message and stack,
// down to the function that panicked; the other job keeps running (it can still be stopped, and
// ends CANCELED), and the shell still runs statements. With checkpoints
// the panicking job goes through the restart strategy: it runs 1 +
// attempts times and then fails, each restart logging the panic.
func TestShellSurvivesPanickingJob(t *testing.T) {
	for _, place := range []struct {
		name, insert, msg, frame string
	}{
		{"source", "INSERT INTO bh2 SELECT n FROM boom", "boom: the reader exploded", "panicReader.Next"},
		{"operator", "INSERT INTO bh2 SELECT o.n FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.n = d.n",
			"boom: the lookup table exploded", "lookupJoinOp"},
	} {
		for _, tc := range []struct {
			name string
			sets []string
			runs int32
		}{
			{"without checkpoints", nil, 1},
			{"with checkpoints", []string{
				"SET 'execution.checkpointing.interval' = '50 ms'",
				"SET 'state.checkpoints.dir' = '" + t.TempDir() + "'",
				"SET 'restart-strategy.type' = 'fixed-delay'",
				"SET 'restart-strategy.fixed-delay.attempts' = '2'",
				"SET 'restart-strategy.fixed-delay.delay' = '10 ms'",
			}, 3},
		} {
			t.Run(place.name+"/"+tc.name, func(t *testing.T) {
				testPanickingJob(t, place.insert, place.msg, place.frame, tc.sets, tc.runs, place.name == "source")
			})
		}
	}
}

// testPanickingJob runs the job of insert, which panics with msg in a
// function named frame, beside another job, with the statements sets
// before; when countRuns, the source's readers opened count the runs.
func testPanickingJob(t *testing.T, insert, msg, frame string, sets []string, runs int32, countRuns bool) {
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	sess := session.New(connector.Env{Stdout: out, Stderr: errOut})
	armed, opened := make(chan struct{}), &atomic.Int32{}
	sess.Connectors.RegisterSource("panicky", func(*connector.Table, connector.Env) (connector.Source, error) {
		return panicSource{armed: armed, opened: opened}, nil
	})
	sess.Connectors.RegisterSource("panicky-table", func(*connector.Table, connector.Env) (connector.Source, error) {
		return panicTable{armed: armed}, nil
	})
	sh := New(sess, Options{Out: out, Err: errOut})
	t.Cleanup(sh.Close)
	ctx := context.Background()
	stmts := append([]string{
		"SET 'parallelism.default' = '1'",
		"CREATE TABLE endless (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000')",
		"CREATE TABLE orders (n BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'rows-per-second' = '1000')",
		"CREATE TABLE boom (n BIGINT) WITH ('connector' = 'panicky')",
		"CREATE TABLE dim (n BIGINT) WITH ('connector' = 'panicky-table', 'lookup.cache' = 'FULL', " +
			"'lookup.full-cache.periodic-reload.interval' = '1 ms')",
		"CREATE TABLE bh (n BIGINT) WITH ('connector' = 'blackhole')",
		"CREATE TABLE bh2 (n BIGINT) WITH ('connector' = 'blackhole')",
	}, sets...)
	for _, st := range stmts {
		if err := sh.execText(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	jobID := func(insert string) string {
		t.Helper()
		out.Reset()
		if err := sh.execText(ctx, insert); err != nil {
			t.Fatal(err)
		}
		m := regexpJobID.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no job id in %q", out.String())
		}
		return m[1]
	}
	good := jobID("INSERT INTO bh SELECT n FROM endless")
	bad := jobID(insert)
	close(armed)
	select {
	case <-sh.jobs.Ended(bad):
	case <-time.After(time.Minute):
		t.Fatal("the panicking job did not end within a minute")
	}
	if n := opened.Load(); countRuns && n != runs {
		t.Errorf("the panicking job ran %d times, want %d", n, runs)
	}
	if got := strings.Count(errOut.String(), "restarting (fixed-delay)"); got != int(runs-1) {
		t.Errorf("%d restarts reported, want %d:\n%s", got, runs-1, errOut.String())
	}
	// A restart logs the failure with the panic's message and stack.
	if log := errOut.String(); runs > 1 && (!strings.Contains(log, msg) || !strings.Contains(log, frame)) {
		t.Errorf("the restart's log lacks the panic %q or its stack (%s):\n%s", msg, frame, log)
	}

	// SHOW JOBS: the panicking job FAILED with the panic's message and
	// stack, down to the function that panicked; the other one RUNNING;
	// the shell goes on.
	out.Reset()
	if err := sh.execText(ctx, "SHOW JOBS"); err != nil {
		t.Fatal(err)
	}
	show := out.String()
	for _, want := range []string{"job " + bad + " failed: ", "panic", msg, "goroutine ", frame} {
		if !strings.Contains(show, want) {
			t.Errorf("SHOW JOBS lacks %q:\n%s", want, show)
		}
	}
	if row := lineWith(show, bad); !strings.Contains(row, "FAILED") {
		t.Errorf("panicking job's row %q, want FAILED", row)
	}
	if row := lineWith(show, good); !strings.Contains(row, "RUNNING") {
		t.Errorf("other job's row %q, want RUNNING", row)
	}
	out.Reset()
	if err := sh.execText(ctx, "SHOW TABLES"); err != nil || !strings.Contains(out.String(), "endless") {
		t.Fatalf("SHOW TABLES after the panic: %v, %q", err, out.String())
	}
	// The other job is alive: it stops cleanly when asked.
	if err := sh.execText(ctx, "STOP JOB '"+good+"'"); err != nil {
		t.Fatal(err)
	}
	for _, j := range sh.jobs.List() {
		if j.ID == good && j.State != session.JobCanceled {
			t.Errorf("the other job ended %s, want CANCELED", j.State)
		}
	}
}

var regexpJobID = regexp.MustCompile(`Submitted job ([0-9a-f]{8})`)

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return fmt.Sprintf("(no line with %s)", sub)
}
