package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
)

// committedChangelog reads the final part files of a filesystem sink
// folder written as Debezium JSON and applies them as a changelog: every
// row's count must end at 0 or 1. It returns the rows present and the
// number of records read.
func committedChangelog(t *testing.T, dir string) ([]string, int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "part-*"))
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		Before map[string]json.Number `json:"before"`
		After  map[string]json.Number `json:"after"`
		Op     string                 `json:"op"`
	}
	render := func(m map[string]json.Number) string {
		return fmt.Sprintf("[%s, %s, %s]", m["k"], m["s"], m["c"])
	}
	counts := map[string]int{}
	records := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			var r rec
			d := json.NewDecoder(strings.NewReader(line))
			d.UseNumber()
			if err := d.Decode(&r); err != nil {
				t.Fatalf("%s: %v: %q", f, err, line)
			}
			records++
			if r.Before != nil {
				counts[render(r.Before)]--
			}
			if r.After != nil {
				counts[render(r.After)]++
			}
		}
	}
	var rows []string
	for row, n := range counts {
		switch n {
		case 0:
		case 1:
			rows = append(rows, row)
		default:
			t.Fatalf("row %s has count %d after applying the committed changelog: a row was committed twice or retracted without being added", row, n)
		}
	}
	sort.Strings(rows)
	return rows, records
}

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
			var fired []string
			var mu sync.Mutex
			var hook func(string) error
			if tc.spec != "" {
				h, err := ParseFaults(tc.spec, "")
				if err != nil {
					t.Fatal(err)
				}
				hook = func(p string) error {
					err := h(p)
					if errors.Is(err, ErrInjected) {
						mu.Lock()
						fired = append(fired, p)
						mu.Unlock()
					}
					return err
				}
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			var stdout, stderr bytes.Buffer
			s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			err := s.RunScript(context.Background(), fileSinkScript(filepath.Join(dir, "ck"), out, n, keys, 2),
				RunOptions{JobName: "eo", Exec: exec.Options{BatchSize: 128, Fault: hook}})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			sort.Strings(fired)
			if strings.Join(fired, ",") != strings.Join(tc.fired, ",") {
				t.Fatalf("faults fired %v, want %v\n%s", fired, tc.fired, stderr.String())
			}
			got, records := committedChangelog(t, out)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("committed output differs from the batch answer: %d rows, want %d (%d records)\n%s",
					len(got), len(want), records, stderr.String())
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
	if _, partial := committedChangelog(t, out); partial == 0 {
		t.Fatal("nothing committed before the savepoint")
	}
	s.Config[KeySavepointPath] = path
	id2 := submit()
	jobs.Wait()
	l := jobs.List()
	if l[1].ID != id2 || l[1].State != JobFinished || l[1].Err != nil {
		t.Fatalf("resumed job: %+v\n%s", l[1], stderr.String())
	}
	got, _ := committedChangelog(t, out)
	if want := keyedSumAnswer(n, keys); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("committed output differs from the batch answer: %d rows, want %d\n%s", len(got), len(want), stderr.String())
	}
}
