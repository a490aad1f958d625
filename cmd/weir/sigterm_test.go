package main

import (
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMStopsLongNexmarkRun SIGTERMs `weir bench nexmark` while q7
// (a window aggregate joined back to its bids) is processing a long input
// and expects a prompt, clean exit: code 0 and a line saying it stopped.
// q7 once held a quadratic MAX state, so a stop waited for minutes.
func TestSIGTERMStopsLongNexmarkRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the weir binary")
	}
	dir := t.TempDir()
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "nexmark"))
	if err != nil {
		t.Fatal(err)
	}
	p := startWeir(t, dir, filepath.Join(dir, "stdout.txt"), filepath.Join(dir, "faults.log"), "", 0,
		[]string{"bench", "nexmark", "--examples", examples, "--queries", "q7", "--events", "1000000000"})
	// Wait until rows flow (a progress line with a non-zero rate).
	waitLine(t, p, 0, regexp.MustCompile(`q7 +\d+s +[1-9][0-9.]*[kM]? rows/s`), 2*time.Minute)
	signalProc(t, p, syscall.SIGTERM)
	sent := time.Now()
	st := p.waitDeadline(t, 20*time.Second)
	took := time.Since(sent)
	if !st.Success() {
		t.Fatalf("%s: %v after SIGTERM, want exit code 0\nstderr:\n%s", p.label, st, p.log.text())
	}
	if !p.log.has(regexp.MustCompile(`bench nexmark: stopped`)) {
		t.Fatalf("%s: no 'stopped' line after SIGTERM\nstderr:\n%s", p.label, p.log.text())
	}
	t.Logf("stopped %s after SIGTERM", took.Round(time.Millisecond))
}
