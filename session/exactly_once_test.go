package session

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
)

func fileSinkScript(ckDir, outDir string, n, keys, par int) string {
	return keyedSumScriptInto(ckDir, n, keys, par, fmt.Sprintf("'connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json'", outDir))
}

// TestExactlyOnceFileSink fails the job at the fault points of the
// checkpoint algorithm and of the sink's commit; after the restarts, the
// committed part files, read as a changelog, hold every result row exactly
// once and equal the batch answer.
func TestExactlyOnceFileSink(t *testing.T) {
	const n, keys = 40000, 300
	want := keyedSumAnswer(n, keys)
	cases := []struct {
		spec  string
		fired []string
	}{
		{"", nil},
		{"K1@4=error", []string{"K1"}},
		{"K2@3=error", []string{"K2"}},
		{"K4@6=error", []string{"K4"}},
		{"K5@2=error", []string{"K5"}},
		{"K6@3=error", []string{"K6"}},
		{"K6@2=error,K8=error", []string{"K6", "K8"}},
	}
	for _, tc := range cases {
		t.Run("faults="+tc.spec, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			run := runWithFaults(t, fileSinkScript(filepath.Join(dir, "ck"), out, n, keys, 2), tc.spec,
				RunOptions{JobName: "eo", Exec: exec.Options{BatchSize: 128}})
			run.expectFired(t, tc.fired)
			got := debeziumRows(t, out, "k", "s", "c")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("committed output differs from the batch answer: %d rows, want %d\n%s", len(got), len(want), run.Stderr)
			}
			if left, _ := filepath.Glob(filepath.Join(out, ".*inprogress")); len(left) > 0 {
				t.Fatalf("in-progress files left after the job finished: %v", left)
			}
		})
	}
}

// TestShellJobStopWithSavepoint drives background jobs as the shell does:
// an INSERT runs as a job with checkpoints; STOP JOB ... WITH SAVEPOINT
// stops it with a savepoint; SET 'execution.savepoint.path' and the same
// INSERT resume it. The committed output holds every row exactly once.
func TestShellJobStopWithSavepoint(t *testing.T) {
	const n, keys = 40000, 250
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	stderr := &watchWriter{}
	s := New(connector.Env{Stdout: &stdout, Stderr: stderr})
	script := strings.Replace(fileSinkScript(filepath.Join(dir, "ck"), out, n, keys, 2), "'rows-per-second' = '150000'", "'rows-per-second' = '20000'", 1)
	script = strings.Replace(script, "SET 'parallelism.default'", fmt.Sprintf("SET 'state.savepoints.dir' = '%s';\nSET 'parallelism.default'", filepath.Join(dir, "sp")), 1)
	stmts, err := parser.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	var insert *parser.Insert
	for _, st := range stmts {
		if ins, ok := st.(*parser.Insert); ok {
			insert = ins
			continue
		}
		if err := s.Exec(st, &stdout); err != nil {
			t.Fatal(err)
		}
	}
	jobs := NewJobs()
	defer jobs.Close()
	// The fault hook doubles as an event: K7 is passed after every
	// completed checkpoint.
	var once sync.Once
	completed, passes := make(chan struct{}), 0
	hook := func(p string) error {
		if p == exec.FaultBeforeRetain {
			if passes++; passes == 3 {
				once.Do(func() { close(completed) })
			}
		}
		return nil
	}
	submit := func() string {
		plan, err := s.PlanInsert(insert)
		if err != nil {
			t.Fatal(err)
		}
		id, err := jobs.Submit(s, plan, insert.SQL(), RunOptions{Exec: exec.Options{Fault: hook}})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	id := submit()
	<-completed // three checkpoints done: the job is mid-way
	path, err := jobs.StopWithSavepoint(id)
	if err != nil {
		t.Fatalf("stop with savepoint: %v\n%s", err, stderr.String())
	}
	if l := jobs.List(); l[0].State != JobFinished {
		t.Fatalf("job state after stop with savepoint: %s", l[0].State)
	}
	if partial := debeziumRows(t, out, "k", "s", "c"); len(partial) == 0 {
		t.Fatal("nothing committed before the savepoint")
	}
	s.Config[KeySavepointPath] = path
	id2 := submit()
	jobs.Wait()
	l := jobs.List()
	if l[1].ID != id2 || l[1].State != JobFinished || l[1].Err != nil {
		t.Fatalf("resumed job: %+v\n%s", l[1], stderr.String())
	}
	got := debeziumRows(t, out, "k", "s", "c")
	if want := keyedSumAnswer(n, keys); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("committed output differs from the batch answer: %d rows, want %d\n%s", len(got), len(want), stderr.String())
	}
}
