package repl

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/session"
)

// TestJobNotifyOnlyOwnEnds: the notice hook (Jobs.SetNotify, which the
// interactive shell prints above its prompt) hears of a job that finished
// and of one that failed, once each with its state, and not of a job that
// STOP JOB stopped (that statement reports it) nor of an INSERT that
// could not start (its error is the statement's).
func TestJobNotifyOnlyOwnEnds(t *testing.T) {
	sh, out := jobShell(t)
	var mu sync.Mutex
	var got []session.JobInfo
	sh.jobs.SetNotify(func(j session.JobInfo) {
		mu.Lock()
		got = append(got, j)
		mu.Unlock()
	})
	stopped := submit(t, sh, out, "INSERT INTO bh SELECT n FROM endless")
	if err := sh.execText(context.Background(), "STOP JOB '"+stopped+"'"); err != nil {
		t.Fatal(err)
	}
	finished := submit(t, sh, out, "INSERT INTO bh SELECT n FROM ten")
	failed := submit(t, sh, out, "INSERT INTO bh SELECT 10 / (n - n) FROM ten")
	for _, set := range []string{"SET 'state.checkpoints.dir' = '" + t.TempDir() + "'", "SET 'execution.savepoint.path' = '/nonexistent/savepoint'"} {
		if err := sh.execText(context.Background(), set); err != nil {
			t.Fatal(err)
		}
	}
	if err := sh.execText(context.Background(), "INSERT INTO bh SELECT n FROM ten"); err == nil {
		t.Fatal("an INSERT restoring a missing savepoint started")
	}
	sh.jobs.Wait() // every job's goroutine, notices included, has ended
	mu.Lock()
	defer mu.Unlock()
	states := map[string]session.JobState{}
	for _, j := range got {
		if _, dup := states[j.ID]; dup {
			t.Fatalf("job %s notified twice", j.ID)
		}
		states[j.ID] = j.State
	}
	if len(got) != 2 || states[finished] != session.JobFinished || states[failed] != session.JobFailed {
		t.Fatalf("notified %v; want %s FINISHED and %s FAILED only (not the stopped %s)", states, finished, failed, stopped)
	}
	for _, j := range got {
		if j.State == session.JobFailed && (j.Err == nil || !strings.Contains(j.Err.Error(), "division by zero")) {
			t.Fatalf("failed job's error: %v", j.Err)
		}
	}
}
