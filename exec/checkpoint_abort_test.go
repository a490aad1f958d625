package exec

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/statestore"
)

// TestAbortWaitsForWriters: a checkpoint aborted (a sink's disk is full,
// say) while a subtask is writing its state into the checkpoint's folder
// keeps the folder until that subtask is done, so the write succeeds and
// the subtask does not fail; the last writer removes the folder. The abort
// reports the time since the trigger.
func TestAbortWaitsForWriters(t *testing.T) {
	root := t.TempDir()
	st, err := checkpoint.NewStorage(checkpoint.OSFS{}, root, "job")
	if err != nil {
		t.Fatal(err)
	}
	var reports []CheckpointReport
	opts := &CheckpointOptions{Storage: st, Report: func(r CheckpointReport) { reports = append(reports, r) }}
	c := newCheckpointer(&Job{}, opts, nil, 1)
	triggered := time.Now().Add(-1500 * time.Millisecond)
	if err := c.begin(coordinator.Action{Kind: coordinator.TriggerSources, ID: 1, Time: triggered}); err != nil {
		t.Fatal(err)
	}
	store, err := statestore.Open(filepath.Join(root, "work"), statestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tb, err := store.Table("agg", "groups")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := tb.Put(i%128, []byte{byte(i), byte(i >> 8)}, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	// Two subtasks got their folders; the checkpoint aborts.
	dir0, _, err := c.subtaskDir(1, "agg", 0)
	if err != nil {
		t.Fatal(err)
	}
	dir1, _, err := c.subtaskDir(1, "agg", 1)
	if err != nil {
		t.Fatal(err)
	}
	c.abort(1, triggered, "task sink (1/2) declined checkpoint 1: no space left on device")
	chk := filepath.Join(st.Dir(), "chk-1")
	if _, err := os.Stat(chk); err != nil {
		t.Fatalf("aborted checkpoint's folder removed while subtasks write into it: %v", err)
	}
	// A subtask that comes later is told the checkpoint is gone.
	if _, _, err := c.subtaskDir(1, "agg", 2); err == nil {
		t.Error("subtaskDir of an aborted checkpoint: want error")
	}
	if _, err := store.Snapshot(dir0); err != nil {
		t.Fatalf("snapshot into the aborted checkpoint: %v", err)
	}
	c.release(1)
	if _, err := os.Stat(chk); err != nil {
		t.Fatalf("folder removed before the last writer was done: %v", err)
	}
	c.release(1) // the subtask of dir1 gave up before writing
	_ = dir1
	if _, err := os.Stat(chk); !os.IsNotExist(err) {
		t.Errorf("aborted checkpoint's folder not removed by its last writer: %v", err)
	}
	if len(reports) != 1 || reports[0].Completed {
		t.Fatalf("reports %+v, want one abort", reports)
	}
	if d := reports[0].Duration; d < 1500*time.Millisecond || d > time.Minute {
		t.Errorf("abort reported after %s, want the time since the trigger (~1.5s)", d)
	}

	// An abort with no trigger time known (the folder could not even be
	// created) reports no duration rather than one since year 1.
	c.abort(2, time.Time{}, "begin failed")
	if d := reports[1].Duration; d != 0 {
		t.Errorf("abort of a checkpoint never begun reported after %s, want 0", d)
	}
}
