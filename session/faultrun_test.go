package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
)

// stopAndRestore runs script first in a new session until its fourth
// checkpoint completes and stops it, then runs script second in another,
// restored from the latest checkpoint (opts with RestoreLatest), and
// returns what the two runs printed on stderr. A run that fails fails the
// test; a first run that finished before it could be stopped skips it.
func stopAndRestore(t *testing.T, first, second string, opts RunOptions) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &watchWriter{onLine: func(l string) {
		if strings.HasPrefix(l, "weir: checkpoint 4 complete") {
			cancel()
		}
	}}
	s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: stderr})
	if err := s.RunScript(ctx, first, opts); err != nil {
		if strings.Contains(stderr.String(), "its sources have read all their input") {
			// The same race as below: the sources ended before the stop
			// came, so the session cancelled what was left.
			t.Skipf("the job's sources finished before it could be stopped:\n%s", stderr.String())
		}
		t.Fatalf("first run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped") {
		t.Skipf("the job finished before it could be stopped:\n%s", stderr.String())
	}
	var stderr2 bytes.Buffer
	s2 := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr2})
	opts.Restore = RestoreLatest
	if err := s2.RunScript(context.Background(), second, opts); err != nil {
		t.Fatalf("restored run: %v\n%s", err, stderr2.String())
	}
	return stderr.String(), stderr2.String()
}

// faultRun is what one run of runWithFaults saw.
type faultRun struct {
	Fired          []string // the fault points that fired, sorted
	Stdout, Stderr string
}

// runWithFaults runs script in a new session with the faults of spec
// injected (ParseFaults syntax; "" injects none) through opts.Exec.Fault,
// and returns the points that fired and what the session printed. A run that fails fails the test.
func runWithFaults(t *testing.T, script, spec string, opts RunOptions) faultRun {
	t.Helper()
	var mu sync.Mutex
	var fired []string
	if spec != "" {
		h, err := ParseFaults(spec, "")
		if err != nil {
			t.Fatal(err)
		}
		opts.Exec.Fault = func(p string) error {
			err := h(p)
			if errors.Is(err, ErrInjected) {
				mu.Lock()
				fired = append(fired, p)
				mu.Unlock()
			}
			return err
		}
	}
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	if err := s.RunScript(context.Background(), script, opts); err != nil {
		t.Fatalf("run with faults %q: %v\n%s", spec, err, stderr.String())
	}
	sort.Strings(fired)
	return faultRun{Fired: fired, Stdout: stdout.String(), Stderr: stderr.String()}
}

// expectFired fails the test unless exactly the fault points want fired.
func (r faultRun) expectFired(t *testing.T, want []string) {
	t.Helper()
	if !slices.Equal(r.Fired, want) {
		t.Fatalf("faults fired %v, want %v\n%s", r.Fired, want, r.Stderr)
	}
}

// expectRestored fails the test unless a fault fired and the job restored
// a checkpoint after it.
func (r faultRun) expectRestored(t *testing.T) {
	t.Helper()
	if len(r.Fired) == 0 || !strings.Contains(r.Stderr, "weir: restoring checkpoint") {
		t.Fatalf("no fault fired and restored (fired %v):\n%s", r.Fired, r.Stderr)
	}
}

// debeziumRows reads a filesystem sink folder written as Debezium JSON,
// applies it as a changelog (every row's count must end at 0 or 1: a row
// committed twice or retracted without being added fails the test) and
// returns the rows present, each as "[v1, v2, …]" of its cols' values,
// sorted.
func debeziumRows(t *testing.T, dir string, cols ...string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "part-*"))
	if err != nil {
		t.Fatal(err)
	}
	render := func(m map[string]json.Number) string {
		vs := make([]string, len(cols))
		for i, c := range cols {
			vs[i] = m[c].String()
		}
		return "[" + strings.Join(vs, ", ") + "]"
	}
	counts := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			var r struct {
				Before, After map[string]json.Number
			}
			d := json.NewDecoder(strings.NewReader(line))
			d.UseNumber()
			if err := d.Decode(&r); err != nil {
				t.Fatalf("%s: %v: %q", f, err, line)
			}
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
			t.Fatalf("row %s has count %d after applying the committed changelog: committed twice, or retracted without being added", row, n)
		}
	}
	sort.Strings(rows)
	return rows
}
