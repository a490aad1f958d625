package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weir-sql/weir/checkpoint"
)

// The constants of testdata/kill_finished_branch.sql.
const (
	finFacts = 60000 // facts' ids are 0..finFacts-1
	finDim   = 5000  // dim's n are 0..finDim-1
	finKeys  = 1000  // both grouped and joined by value % finKeys
)

// afterEnd is how many checkpoints each run must complete after dim's
// GROUP BY finished before it is killed: before checkpoints went on after
// a non-source task finished, none did.
const afterEnd = 3

// TestFinishedBranchKills runs testdata/kill_finished_branch.sql (an
// unbounded-like facts stream joined with the GROUP BY of a bounded dim
// that finishes early) into the exactly-once filesystem sink. The first
// run (parallelism 2) waits for a checkpoint in which dim had ended, then
// for afterEnd more checkpoints to complete, and is SIGKILLed; the second
// restores the latest at the same parallelism, in which dim and its GROUP
// BY end again at once, completes afterEnd checkpoints and is killed; the
// third restores at parallelism 3 and finishes. The second also takes a
// savepoint (SIGUSR1) after the end. The committed output must
// be the batch join computed in Go, each row exactly once, and a restored
// GROUP BY must not emit its final results a second time.
func TestFinishedBranchKills(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	e := newSinkEnv(t)
	sql, err := os.ReadFile(filepath.Join("testdata", "kill_finished_branch.sql"))
	if err != nil {
		t.Fatal(err)
	}
	setPar := func(par int) {
		s := bytes.Replace(sql, []byte(sinkParSet), fmt.Appendf(nil, "SET 'parallelism.default' = '%d';", par), 1)
		if err := os.WriteFile(filepath.Join(e.dir, sinkJob+".sql"), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The batch answer: the MAX of each key over dim, then one row per fact.
	maxOf := make([]int64, finKeys)
	for n := range int64(finDim) {
		maxOf[n%finKeys] = max(maxOf[n%finKeys], n)
	}
	want := make(map[int64]sumRow, finFacts)
	for id := range int64(finFacts) {
		want[id] = sumRow{sum: id, count: maxOf[id%finKeys]}
	}
	// A fact may be joined with each MAX its key had while dim ran.
	maxAfters := int64(finFacts) * (finDim/finKeys + 1)

	load := func(id int64) *checkpoint.Checkpoint {
		dirs, err := filepath.Glob(filepath.Join(e.dir, "ckpts", "*", "chk-"+strconv.FormatInt(id, 10)))
		if err != nil || len(dirs) != 1 {
			t.Fatalf("checkpoint %d's folder: %v %v", id, dirs, err)
		}
		cp, err := checkpoint.Load(checkpoint.OSFS{}, dirs[0])
		if err != nil {
			t.Fatalf("load checkpoint %d: %v", id, err)
		}
		return cp
	}
	// dimEnded reports whether checkpoint id's every dim subtask had read
	// dim to its end.
	dimEnded := func(id int64) bool {
		cp := load(id)
		n, ended := 0, 0
		for _, sp := range cp.Meta.Sources {
			if sp.Table == "dim" {
				n++
				if sp.Ended {
					ended++
				}
			}
		}
		return n > 0 && ended == n
	}
	// checkGroupState checks that checkpoint id holds the state of dim's
	// GROUP BY, finished before it, for each of its par subtasks.
	checkGroupState := func(id int64, par int) {
		for _, o := range load(id).Meta.Operators {
			if strings.HasPrefix(o.Name, "GroupAggregate") {
				if o.Parallelism != par || len(o.Subtasks) != par {
					t.Fatalf("checkpoint %d: %s has %d subtasks' state at parallelism %d, want %d", id, o.Name, len(o.Subtasks), o.Parallelism, par)
				}
				return
			}
		}
		t.Fatalf("checkpoint %d has no state of the GROUP BY", id)
	}
	// waitCheckpoints waits for n checkpoints to complete from line from
	// on, and returns the line after the last and that checkpoint's id.
	waitCheckpoints := func(p *weirProc, from, n int) (int, int64) {
		var id int64
		for range n {
			i, m := waitLine(t, p, from, completeLine, firstCheckpointDeadline)
			from = i + 1
			id, _ = strconv.ParseInt(m[1], 10, 64)
		}
		return from, id
	}
	killRun := func(p *weirProc, run, par int) {
		p.kill(t)
		if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
			t.Fatalf("%s ended (%v) before its kill: the job is too short\nstderr:\n%s", p.label, st, p.log.text())
		}
		c := checkJoinOutput(t, e.outDir(), want, maxAfters, false)
		ids := p.completedIDs()
		t.Logf("run %d at parallelism %d: completed checkpoints up to %d; %d records committed", run, par, slices.Max(ids), c.records)
	}

	// Run 0: kill after afterEnd checkpoints past the first in which dim
	// had ended (its GROUP BY finishes right after dim's end).
	setPar(2)
	p := e.start("")
	from, id := 0, int64(0)
	for {
		from, id = waitCheckpoints(p, from, 1)
		if dimEnded(id) {
			break
		}
	}
	ended := id
	from, id = waitCheckpoints(p, from, afterEnd)
	if !dimEnded(id) {
		t.Fatalf("checkpoint %d after checkpoint %d does not have dim ended", id, ended)
	}
	checkGroupState(id, 2)
	t.Logf("run 0: dim ended in checkpoint %d; checkpoints went on to %d", ended, id)
	killRun(p, 0, 2)
	last := slices.Max(p.completedIDs())

	// Run 1: same parallelism; dim and its GROUP BY end again at once.
	p = e.start("", "--restore", "latest")
	from, _ = waitLine(t, p, 0, restoreLine, firstCheckpointDeadline)
	if got := p.restoredID(); got != last {
		t.Fatalf("run 1 restored checkpoint %d, want %d", got, last)
	}
	from, id = waitCheckpoints(p, from, afterEnd)
	if !dimEnded(id) {
		t.Fatalf("run 1: checkpoint %d does not have dim ended", id)
	}
	checkGroupState(id, 2)
	// A savepoint asked for (SIGUSR1) after the GROUP BY finished
	// completes too, and the job goes on.
	signalProc(t, p, syscall.SIGUSR1)
	from, _ = waitLine(t, p, from, savepointLine, firstCheckpointDeadline)
	waitLine(t, p, from+1, completeLine, firstCheckpointDeadline)
	killRun(p, 1, 2)

	// Run 2: parallelism 3, to the end.
	setPar(3)
	p = e.start("", "--restore", "latest")
	waitLine(t, p, 0, restoreLine, firstCheckpointDeadline)
	e.finish(p)
	checkJoinOutput(t, e.outDir(), want, maxAfters, true)
}
