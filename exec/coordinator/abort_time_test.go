package coordinator

import (
	"testing"
	"time"
)

// TestAbortCarriesTriggerTime: every Abort says when its checkpoint was
// triggered, so that the runtime reports how long it ran.
func TestAbortCarriesTriggerTime(t *testing.T) {
	src, task := TaskID{Vertex: 0}, TaskID{Vertex: 1}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := New(Config{Interval: time.Second, Timeout: time.Minute}, []TaskID{task}, []TaskID{src}, 1)
	a := c.Trigger(t0)
	acts := c.Declined(t0.Add(time.Second), a.ID, task, "disk full")
	if len(acts) != 1 || acts[0].Kind != Abort || !acts[0].Time.Equal(t0) {
		t.Fatalf("decline: %+v, want an abort with the trigger time %s", acts, t0)
	}
	a = c.Trigger(t0.Add(2 * time.Second))
	acts = c.WriteFailed(t0.Add(3*time.Second), a.ID, nil)
	if len(acts) != 1 || acts[0].Kind != Abort || !acts[0].Time.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("write failed: %+v, want an abort with the trigger time", acts)
	}
}
